"""`[mcp_servers.NAME]` tables of config.toml, checked as Codex 0.169 checks them.

Field names, the stdio/HTTP split and the error words follow Codex's `RawMcpServerConfig` and what the
0.169 binary prints (`codex mcp list`): a table with `command` is a stdio server, one with `url` a
streamable HTTP server, neither is "invalid transport", and a field of the other transport is
"<field> is not supported for <stdio|streamable_http>". Codex ignores unknown keys inside a server
table; we report them (`McpServers.unknown_keys`) so the loader can warn, or refuse under `strict`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app_server.config import schema
from app_server.config.errors import ConfigError
from app_server.config.tables import locate, value_end_column
from pycodex.json_types import JsonObj

# initialize plus the first tools/list: 30 s on the 0.169 binary (a mute server failed after 30 s; older
# sources said 10).
DEFAULT_STARTUP_TIMEOUT_S = 30.0
# One tools/call: 300 s on the 0.169 binary ("timed out awaiting tools/call after 300s"; older sources said 60).
DEFAULT_TOOL_TIMEOUT_S = 300.0
DEFAULT_OPTIONAL_STARTUP_GRACE_MS = 1000  # top-level `mcp_optional_startup_grace_ms`

ApprovalMode = Literal["auto", "prompt", "writes", "approve"]
APPROVAL_MODES: tuple[str, ...] = ("auto", "prompt", "writes", "approve")

STDIO_ONLY = ("args", "env", "env_vars", "cwd")
HTTP_ONLY = ("bearer_token_env_var", "bearer_token", "http_headers", "env_http_headers", "oauth_resource")


class _Strict(BaseModel):
    # Built on first use: most configs name no MCP server, and start-up should not pay for these schemas.
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)


class McpToolConfig(_Strict):
    """`[mcp_servers.NAME.tools.TOOL]`."""

    approval_mode: ApprovalMode | None = None


class _RawServer(_Strict):
    """The TOML table as written; `McpServerConfig.from_raw` turns it into a checked server."""

    command: str | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None
    env_vars: list[str] | None = None
    cwd: str | None = None
    http_headers: dict[str, str] | None = None
    env_http_headers: dict[str, str] | None = None
    url: str | None = None
    bearer_token: str | None = None
    bearer_token_env_var: str | None = None
    experimental_environment: str | None = None
    startup_timeout_sec: float | None = None
    startup_timeout_ms: int | None = Field(default=None, ge=0)
    tool_timeout_sec: float | None = None
    enabled: bool | None = None
    required: bool | None = None
    supports_parallel_tool_calls: bool | None = None
    default_tools_approval_mode: ApprovalMode | None = None
    enabled_tools: list[str] | None = None
    disabled_tools: list[str] | None = None
    scopes: list[str] | None = None
    oauth_resource: str | None = None
    name: str | None = None  # a legacy display name Codex still accepts and ignores
    tools: dict[str, McpToolConfig] | None = None


KNOWN_SERVER_KEYS = frozenset(_RawServer.model_fields)
KNOWN_TOOL_KEYS = frozenset(McpToolConfig.model_fields)


class StdioTransport(_Strict):
    """An MCP server started as a subprocess, spoken to over its stdin and stdout."""

    type: Literal["stdio"] = "stdio"
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = None
    env_vars: tuple[str, ...] = ()  # names passed through from our own environment
    cwd: str | None = None


class HttpTransport(_Strict):
    """An MCP server reached over streamable HTTP."""

    type: Literal["streamable_http"] = "streamable_http"
    url: str
    bearer_token_env_var: str | None = None
    http_headers: dict[str, str] | None = None
    env_http_headers: dict[str, str] | None = None  # header name -> environment variable


class McpServerConfig(_Strict):
    """One checked `[mcp_servers.NAME]`. Equal configs mean "no restart needed" on reload."""

    name: str
    transport: StdioTransport | HttpTransport
    enabled: bool = True
    required: bool = False
    supports_parallel_tool_calls: bool = False
    startup_timeout_s: float | None = None
    tool_timeout_s: float | None = None
    default_tools_approval_mode: ApprovalMode | None = None
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] | None = None
    scopes: tuple[str, ...] | None = None
    oauth_resource: str | None = None
    experimental_environment: str | None = None
    tools: dict[str, McpToolConfig] = Field(default_factory=dict)

    @property
    def startup_timeout(self) -> float:
        """Seconds to wait for the server to start (the configured value, else the default)."""
        return DEFAULT_STARTUP_TIMEOUT_S if self.startup_timeout_s is None else self.startup_timeout_s

    @property
    def tool_timeout(self) -> float:
        """Seconds a tool call may take (the configured value, else the default)."""
        return DEFAULT_TOOL_TIMEOUT_S if self.tool_timeout_s is None else self.tool_timeout_s

    def tool_enabled(self, tool: str) -> bool:
        """`enabled_tools` is an allow-list, then `disabled_tools` removes names (Codex's order)."""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return not (self.disabled_tools is not None and tool in self.disabled_tools)

    def approval_mode(self, tool: str) -> ApprovalMode:
        """The tool's own `approval_mode`, else the server's default, else "auto"."""
        own = self.tools.get(tool)
        if own is not None and own.approval_mode is not None:
            return own.approval_mode
        return self.default_tools_approval_mode or "auto"


@dataclass(frozen=True)
class McpServers:
    """Every configured server by name (disabled ones included), plus ignored keys as dotted names."""

    servers: Mapping[str, McpServerConfig]
    unknown_keys: tuple[str, ...] = ()


def _seconds(path: list[str], value: float) -> float:
    if math.isnan(value) or math.isinf(value):
        raise schema.Invalid(path, "cannot convert float seconds to Duration: value is either too big or NaN")
    if value < 0:
        raise schema.Invalid(path, "cannot convert float seconds to Duration: value is negative")
    return value


def _not_for(transport: str, raw: _RawServer, fields: tuple[str, ...], path: list[str]) -> None:
    for field in fields:
        if getattr(raw, field) is not None:
            raise schema.Invalid(path, f"{field} is not supported for {transport}")


def _build(name: str, raw: _RawServer) -> McpServerConfig:
    path = ["mcp_servers", name]
    transport: StdioTransport | HttpTransport
    if raw.command is not None:
        _not_for("stdio", raw, ("url", *HTTP_ONLY), path)
        transport = StdioTransport(
            command=raw.command, args=tuple(raw.args or ()), env=raw.env,
            env_vars=tuple(raw.env_vars or ()), cwd=raw.cwd,
        )
    elif raw.url is not None:
        _not_for("streamable_http", raw, (*STDIO_ONLY, "bearer_token"), path)
        transport = HttpTransport(
            url=raw.url, bearer_token_env_var=raw.bearer_token_env_var, http_headers=raw.http_headers,
            env_http_headers=raw.env_http_headers,
        )
    else:
        raise schema.Invalid(path, "invalid transport")
    startup: float | None = None
    if raw.startup_timeout_sec is not None:
        startup = _seconds([*path, "startup_timeout_sec"], raw.startup_timeout_sec)
    elif raw.startup_timeout_ms is not None:
        startup = raw.startup_timeout_ms / 1000
    tool_timeout = None
    if raw.tool_timeout_sec is not None:
        tool_timeout = _seconds([*path, "tool_timeout_sec"], raw.tool_timeout_sec)
    return McpServerConfig(
        name=name, transport=transport, enabled=raw.enabled is not False, required=bool(raw.required),
        supports_parallel_tool_calls=bool(raw.supports_parallel_tool_calls),
        startup_timeout_s=startup, tool_timeout_s=tool_timeout,
        default_tools_approval_mode=raw.default_tools_approval_mode,
        enabled_tools=tuple(raw.enabled_tools) if raw.enabled_tools is not None else None,
        disabled_tools=tuple(raw.disabled_tools) if raw.disabled_tools is not None else None,
        scopes=tuple(raw.scopes) if raw.scopes is not None else None, oauth_resource=raw.oauth_resource,
        experimental_environment=raw.experimental_environment, tools=dict(raw.tools or {}),
    )


_EXPECTED = {
    "string_type": "a string", "bool_type": "a boolean", "float_type": "f64", "int_type": "u64",
    "list_type": "a sequence", "dict_type": "a map", "model_type": "a map", "model_attributes_type": "a map",
}


def _invalid(exc: ValidationError, base: list[str]) -> schema.Invalid:
    """The first pydantic error in serde's words, at its dotted key path."""
    err = exc.errors()[0]
    path = [*base, *(str(part) for part in err["loc"])]
    kind, value = err["type"], err.get("input")
    if kind == "extra_forbidden":
        return schema.Invalid(path, f"unknown field `{path[-1]}`")
    if kind == "literal_error":
        return schema.Invalid(path, f"unknown variant `{value}`, expected one of "
                              + ", ".join(f"`{mode}`" for mode in APPROVAL_MODES))
    if kind == "greater_than_equal":
        return schema.Invalid(path, f"invalid value: integer `{value}`, expected u64")
    expected = _EXPECTED.get(kind, "a valid value")
    return schema.Invalid(path, f"invalid type: {schema.describe(value)}, expected {expected}")


def _floats(table: Mapping[str, object]) -> JsonObj:
    """TOML `startup_timeout_sec = 5` is an integer; serde's f64 takes it, so do we."""
    out = dict(table)
    for key in ("startup_timeout_sec", "tool_timeout_sec"):
        value = out.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            out[key] = float(value)
    return out


def _unknown(name: str, table: Mapping[str, object]) -> tuple[list[str], JsonObj]:
    """Keys Codex would ignore (in the server table and its `tools.TOOL` tables), and the table without them."""
    unknown = [f"mcp_servers.{name}.{key}" for key in table if key not in KNOWN_SERVER_KEYS]
    known = {key: value for key, value in table.items() if key in KNOWN_SERVER_KEYS}
    tools = known.get("tools")
    if isinstance(tools, Mapping):
        kept: JsonObj = {}
        for tool, conf in tools.items():
            if isinstance(conf, Mapping):
                unknown += [f"mcp_servers.{name}.tools.{tool}.{k}" for k in conf if k not in KNOWN_TOOL_KEYS]
                conf = {k: v for k, v in conf.items() if k in KNOWN_TOOL_KEYS}
            kept[tool] = conf
        known["tools"] = kept
    return unknown, known


def check_mcp_servers(table: object, *, strict: bool = False) -> McpServers:
    """Check the merged `mcp_servers` value. Raises `schema.Invalid` (dotted path, serde wording).

    With `strict`, an unknown key inside a server table is an error; otherwise it is listed in
    `unknown_keys` and ignored, as Codex ignores it.
    """
    if table is None:
        return McpServers(servers={})
    if not isinstance(table, Mapping):
        raise schema.Invalid(["mcp_servers"], f"invalid type: {schema.describe(table)}, expected a map")
    servers: dict[str, McpServerConfig] = {}
    ignored: list[str] = []
    for name, server in table.items():
        if not isinstance(server, Mapping):
            raise schema.Invalid(["mcp_servers", name], f"invalid type: {schema.describe(server)}, expected a map")
        unknown, known = _unknown(name, server)
        if unknown and strict:
            raise schema.Invalid(unknown[0].split("."), f"unknown field `{unknown[0].rsplit('.', 1)[-1]}`")
        ignored.extend(unknown)
        try:
            raw = _RawServer.model_validate(_floats(known))
        except ValidationError as exc:
            raise _invalid(exc, ["mcp_servers", name]) from None
        servers[name] = _build(name, raw)
    return McpServers(servers=servers, unknown_keys=tuple(sorted(ignored)))


def unknown_keys(table: Mapping[str, object]) -> list[str]:
    """Dotted names of the keys Codex ignores under `[mcp_servers]` of one config layer (for the loader's
    unknown-settings warning); a malformed table is left to `check_mcp_servers`."""
    servers = table.get("mcp_servers")
    if not isinstance(servers, Mapping):
        return []
    return [key for name, server in servers.items() if isinstance(server, Mapping) for key in _unknown(name, server)[0]]


def optional_startup_grace_s(table: Mapping[str, object]) -> float:
    """Top-level `mcp_optional_startup_grace_ms` in seconds (Codex's default 1000 ms). Raises schema.Invalid."""
    value = schema.opt_u64(table, "mcp_optional_startup_grace_ms", [])
    return (DEFAULT_OPTIONAL_STARTUP_GRACE_MS if value is None else value) / 1000


def load_mcp_servers(
    path: Path, table: Mapping[str, object], text: str | None, *, strict: bool = False
) -> McpServers:
    """`check_mcp_servers(table["mcp_servers"])`, errors as `ConfigError` at `path:line:col` when `text` is
    the file's text (the shape app_server.config reports every other bad value in)."""
    try:
        return check_mcp_servers(table.get("mcp_servers"), strict=strict)
    except schema.Invalid as exc:
        raise located_error(exc, str(path), text) from None


def located_error(exc: schema.Invalid, path: str, text: str | None) -> ConfigError:
    """A ConfigError for a bad ``[mcp_servers]`` value, with its line and column in ``text`` when found."""
    key = ".".join(exc.path)
    pos = locate(text, exc.path, at_value=True) if text is not None else None
    if pos is None:
        return ConfigError(f"{exc.message}\nin `{key}`\n", key=key, path=path, reason=exc.message, phase="schema")
    line, col = pos
    return ConfigError(
        f"{path}:{line}:{col}: {exc.message}", key=key, path=path, line=line, column=col,
        end_column=value_end_column(text or "", line, col), reason=exc.message, phase="schema",
    )
