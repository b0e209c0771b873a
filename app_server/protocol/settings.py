"""Params of the config, model-provider and fuzzy-search methods (Codex 0.169.0's shapes).

Results are assembled by the domain modules (app_server.config, app_server.model.catalog,
app_server.search) as plain JSON, so only the params are modelled here.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from pycodex.json_types import JsonObj, JsonValue

from .base import ParamsModel, WireModel

MergeStrategy = Literal["replace", "upsert"]

# ---- config/value/write, config/batchWrite ----------------------------------------------------


class ConfigEditParams(WireModel):
    """One edit of `config/batchWrite`: the dotted key path, the value and how to merge it."""

    key_path: str
    value: JsonValue
    merge_strategy: MergeStrategy = "replace"


class ConfigValueWriteParams(ParamsModel):
    """Params of `config/value/write`."""

    METHOD: ClassVar[str] = "config/value/write"

    key_path: str
    value: JsonValue
    merge_strategy: MergeStrategy
    file_path: str | None = None
    expected_version: str | None = None


class ConfigBatchWriteParams(ParamsModel):
    """Params of `config/batchWrite`."""

    METHOD: ClassVar[str] = "config/batchWrite"

    edits: list[ConfigEditParams]
    file_path: str | None = None
    expected_version: str | None = None
    reload_user_config: bool = False


# ---- fuzzyFileSearch and its sessions ---------------------------------------------------------


class FuzzyFileSearchParams(ParamsModel):
    """Params of `fuzzyFileSearch`."""

    METHOD: ClassVar[str] = "fuzzyFileSearch"

    query: str
    roots: list[str]
    cancellation_token: str | None = None


class FuzzySessionStartParams(ParamsModel):
    """Params of `fuzzyFileSearch/sessionStart`."""

    METHOD: ClassVar[str] = "fuzzyFileSearch/sessionStart"

    session_id: str
    roots: list[str] = Field(default_factory=list)


class FuzzySessionUpdateParams(ParamsModel):
    """Params of `fuzzyFileSearch/sessionUpdate`."""

    METHOD: ClassVar[str] = "fuzzyFileSearch/sessionUpdate"

    session_id: str
    query: str


class FuzzySessionStopParams(ParamsModel):
    """Params of `fuzzyFileSearch/sessionStop`."""

    METHOD: ClassVar[str] = "fuzzyFileSearch/sessionStop"

    session_id: str


# ---- modelProvider/config/write, modelProvider/default/set (0.171) -----------------------------


class ModelProviderConfigWriteParams(ParamsModel):
    """Params of `modelProvider/config/write`."""

    METHOD: ClassVar[str] = "modelProvider/config/write"

    # A ProviderSettingsPatch; which keys are present matters (omitted keeps, null clears), so it
    # stays a plain object and app_server.model.provider_write reads it.
    settings: JsonObj


class ModelProviderDefaultSetParams(ParamsModel):
    """Params of `modelProvider/default/set`."""

    METHOD: ClassVar[str] = "modelProvider/default/set"

    provider_id: str
