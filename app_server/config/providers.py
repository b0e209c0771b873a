"""The model providers a config defines: the built-in ones (OpenAI, the offline scripted model) and each
`[model_providers.<id>]` table, typed into `ProviderConfig`s. Raises schema.Invalid on a bad value."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TypeVar

from app_server.config import schema
from app_server.model.provider import SCRIPTED_PROVIDER_ID, ProviderConfig
from pycodex import COMPATIBLE_CODEX_VERSION

_T = TypeVar("_T")

OPENAI_PROVIDER_ID = "openai"
API_KEY_ENV_VARS = ("CODEX_API_KEY", "OPENAI_API_KEY")
# Codex's built-in OpenAI provider sends these headers when the variables are set.
OPENAI_ENV_HEADERS = {"OpenAI-Organization": "OPENAI_ORGANIZATION", "OpenAI-Project": "OPENAI_PROJECT"}


def builtin_providers(env: Mapping[str, str], openai_base_url: str | None) -> dict[str, ProviderConfig]:
    """The built-in providers: OpenAI (key from CODEX_API_KEY or OPENAI_API_KEY) and the scripted one."""
    key_var = next((name for name in API_KEY_ENV_VARS if env.get(name)), "OPENAI_API_KEY")
    return {
        OPENAI_PROVIDER_ID: ProviderConfig(
            id=OPENAI_PROVIDER_ID,
            name="OpenAI",
            base_url=openai_base_url or env.get("OPENAI_BASE_URL") or "https://api.openai.com/v1",
            env_key=key_var,
            requires_openai_auth=True,
            http_headers=MappingProxyType({"version": COMPATIBLE_CODEX_VERSION}),
            env_http_headers=MappingProxyType(OPENAI_ENV_HEADERS),
        ),
        SCRIPTED_PROVIDER_ID: ProviderConfig(
            id=SCRIPTED_PROVIDER_ID,
            name="pycodex scripted model (offline)",
            request_max_retries=0,
            stream_max_retries=0,
        ),
    }


def provider_config(
    provider_id: str, table: Mapping[str, object], base: ProviderConfig | None
) -> ProviderConfig:
    """The provider of one ``[model_providers.<id>]`` table over ``base`` (a built-in); raises Invalid."""
    path = ["model_providers", provider_id]
    name = schema.opt_str(table, "name", path)
    if name is None and base is None:
        raise schema.Invalid(path, "missing field `name`")
    base = base or ProviderConfig(id=provider_id, name=name or provider_id)

    def pick(value: _T | None, default: _T) -> _T:
        return default if value is None else value

    headers = schema.opt_str_map(table, "http_headers", path)
    env_headers = schema.opt_str_map(table, "env_http_headers", path)
    params = schema.opt_str_map(table, "query_params", path)
    return ProviderConfig(
        id=provider_id,
        name=pick(name, base.name),
        base_url=pick(schema.opt_str(table, "base_url", path), base.base_url),
        wire_api=pick(schema.opt_wire_api(table, path), base.wire_api),
        env_key=pick(schema.opt_str(table, "env_key", path), base.env_key),
        request_max_retries=pick(
            schema.opt_u64(table, "request_max_retries", path), base.request_max_retries
        ),
        stream_max_retries=pick(schema.opt_u64(table, "stream_max_retries", path), base.stream_max_retries),
        stream_idle_timeout_ms=pick(
            schema.opt_u64(table, "stream_idle_timeout_ms", path), base.stream_idle_timeout_ms
        ),
        http_headers=MappingProxyType(headers) if headers is not None else base.http_headers,
        env_http_headers=MappingProxyType(env_headers) if env_headers is not None else base.env_http_headers,
        experimental_bearer_token=pick(
            schema.opt_str(table, "experimental_bearer_token", path), base.experimental_bearer_token
        ),
        query_params=MappingProxyType(params) if params is not None else base.query_params,
        requires_openai_auth=pick(schema.opt_bool(table, "requires_openai_auth", path), False),
        script=pick(schema.opt_str(table, "script", path), base.script),
    )
