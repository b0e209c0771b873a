"""Minimal models of the informational methods: skills/list, config/read, model/list, account/read.

Large nested structures (the effective config, model catalog entries, account variants) stay plain
JSON objects: pycodex passes them through rather than interpreting them.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from pycodex.json_types import JsonObj

from .base import EXPERIMENTAL, OMIT_IF_NONE, OmittingWireModel, ParamsModel, WireModel
from .common import OptionalU32

SkillScope = Literal["user", "repo", "system", "admin"]

# ---- skills/list ------------------------------------------------------------------------------


class SkillsListParams(ParamsModel):
    """Params of `skills/list`."""

    METHOD: ClassVar[str] = "skills/list"

    cwds: list[str] = Field(default_factory=list)
    force_reload: bool = False


class SkillInterface(WireModel):
    """How a skill presents itself: display name, descriptions, icons, colour and default prompt."""

    display_name: str | None = None
    short_description: str | None = None
    icon_small: str | None = None
    icon_large: str | None = None
    icon_small_url: str | None = None
    icon_large_url: str | None = None
    brand_color: str | None = None
    default_prompt: str | None = None


class SkillMetadata(OmittingWireModel):
    """One skill `skills/list` found: name, description, where it lives, scope and whether it is on."""

    name: str
    description: str
    short_description: Annotated[str | None, OMIT_IF_NONE] = None
    interface: Annotated[SkillInterface | None, OMIT_IF_NONE] = None
    dependencies: Annotated[JsonObj | None, OMIT_IF_NONE] = None
    path: str
    scope: SkillScope
    enabled: bool = True
    plugin_id: str | None = None


class SkillErrorInfo(WireModel):
    """A skill file that could not be read, and why."""

    path: str
    message: str


class SkillsListEntry(WireModel):
    """The skills found for one working directory, with the files that failed."""

    cwd: str
    skills: list[SkillMetadata] = Field(default_factory=list)
    errors: list[SkillErrorInfo] = Field(default_factory=list)


class SkillsListResponse(WireModel):
    """The result of `skills/list`."""

    data: list[SkillsListEntry]


# ---- config/read ------------------------------------------------------------------------------


class ConfigReadParams(ParamsModel):
    """Params of `config/read`."""

    METHOD: ClassVar[str] = "config/read"

    cwd: str | None = None
    include_layers: bool = False


class ConfigReadResponse(OmittingWireModel):
    """The result of `config/read`."""

    config: JsonObj
    origins: JsonObj = Field(default_factory=dict)
    # Codex leaves `layers` out unless `includeLayers` was asked for.
    layers: Annotated[list[JsonObj] | None, OMIT_IF_NONE] = None


# ---- model/list -------------------------------------------------------------------------------


class ModelListParams(ParamsModel):
    """Params of `model/list`."""

    METHOD: ClassVar[str] = "model/list"

    cursor: str | None = None
    limit: OptionalU32 = None
    include_hidden: bool | None = None
    model_provider: str | None = None


class ModelListResponse(WireModel):
    """The result of `model/list`."""

    data: list[JsonObj]
    next_cursor: str | None = None


# ---- account/read -----------------------------------------------------------------------------


class GetAccountParams(ParamsModel):
    """Params of `account/read`."""

    METHOD: ClassVar[str] = "account/read"

    refresh_token: bool = False


class GetAccountResponse(WireModel):
    """The result of `account/read`."""

    account: JsonObj | None = None
    user_id: str | None = None
    requires_openai_auth: bool
    workspace_routing: Annotated[JsonObj | None, EXPERIMENTAL] = None
