"""`pycodex mcp list|get|add|remove`: the `[mcp_servers.NAME]` tables of `$CODEX_HOME/config.toml`.

Outputs, messages and exit codes follow `codex mcp` 0.169 (captured in tests/pycodex/test_mcp_cli.py), with `pycodex`
in the hints where Codex names itself. Edits go through tomlkit so comments and layout survive, and every
edit is checked by app_server.config.mcp_servers before the file is written (fail closed).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table

from app_server.config import schema
from app_server.config.errors import ConfigError
from app_server.config.loader import check_table
from app_server.config.mcp_servers import HttpTransport, McpServerConfig, check_mcp_servers
from app_server.config.tables import deep_merge, nest, parse_cli_override
from app_server.config.write import _save as save_config
from pycodex.json_types import JsonObj

__all__ = ["add_mcp_arguments", "run_mcp"]

_NAME = re.compile(r"^[A-Za-z0-9_\-:@/.]+$")


ADD_USAGE = "pycodex mcp add [OPTIONS] NAME (--url URL | -- COMMAND...)"


class McpCliError(Exception):
    """An ordinary mistake: printed as one `Error: ...` line, exit code 1."""


class McpUsageError(McpCliError):
    """Arguments that do not fit the command line's grammar: `error: ...` plus the usage, exit code 2
    (as Codex's argument parser exits)."""


def add_mcp_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="mcp_command", metavar="COMMAND", required=True)
    listing = sub.add_parser("list", help="list configured MCP servers")
    listing.add_argument("--json", action="store_true", help="Output the configured servers as JSON")
    get = sub.add_parser("get", help="show one MCP server")
    get.add_argument("name", metavar="NAME", help="Name of the MCP server to display")
    get.add_argument("--json", action="store_true", help="Output the server configuration as JSON")
    add = sub.add_parser("add", help="add (or replace) an MCP server", usage=ADD_USAGE)
    add.add_argument("name", metavar="NAME", help="Name for the MCP server configuration")
    add.add_argument("server_command", nargs="*", metavar="COMMAND",
                     help="Command to launch the MCP server. Use --url for a streamable HTTP server")
    add.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                     help="Environment variables to set when launching the server. Only valid with stdio servers")
    add.add_argument("--url", help="URL for a streamable HTTP MCP server")
    add.add_argument("--bearer-token-env-var", metavar="ENV_VAR",
                     help="Optional environment variable to read for a bearer token (streamable HTTP only)")
    add.add_argument("--oauth-resource", metavar="RESOURCE", help="Optional OAuth resource parameter")
    add.add_argument("--oauth-client-id", metavar="CLIENT_ID", help=argparse.SUPPRESS)
    add.add_argument("--oauth-client-secret", metavar="CLIENT_SECRET", help=argparse.SUPPRESS)
    remove = sub.add_parser("remove", help="remove an MCP server")
    remove.add_argument("name", metavar="NAME", help="Name of the MCP server configuration to remove")
    for verb in ("login", "logout"):
        oauth = sub.add_parser(verb, help="not supported by pycodex (use --bearer-token-env-var)")
        oauth.add_argument("name", metavar="NAME")


def run_mcp(args: argparse.Namespace, codex_home: Path) -> int:
    path = codex_home / "config.toml"
    try:
        overrides = _overrides(args.config)
        if args.mcp_command != "add" and getattr(args, "mcp_trailing", []):
            raise McpCliError(f"unexpected arguments after `--` for `mcp {args.mcp_command}`")
        if args.mcp_command == "list":
            return _list(path, overrides, as_json=args.json)
        if args.mcp_command == "get":
            return _get(path, overrides, args.name, as_json=args.json)
        if args.mcp_command == "add":
            return _add(codex_home, args)
        if args.mcp_command == "remove":
            return _remove(path, args.name)
        raise McpCliError(f"`mcp {args.mcp_command}` (OAuth) is not supported by pycodex; "
                          "give the server a bearer token with `mcp add NAME --url URL --bearer-token-env-var VAR`")
    except McpUsageError as exc:
        print(f"error: {exc}\n\nUsage: {ADD_USAGE}\n\nFor more information, try '--help'.", file=sys.stderr)
        return 2
    except McpCliError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1


# -- reading -------------------------------------------------------------------------------------------------
def _document(path: Path) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8")) if path.exists() else tomlkit.document()
    except (OSError, UnicodeDecodeError, TOMLKitError) as exc:
        raise McpCliError(f"cannot read {path}: {exc}") from None


def _overrides(flags: list[str]) -> dict[str, Any]:
    """`-c key=value` flags as one table, layered over the file by `list` and `get` (as Codex does)."""
    table: dict[str, Any] = {}
    try:
        for flag in flags:
            key_path, value = parse_cli_override(flag)
            table = deep_merge(table, nest(key_path, value))
    except schema.Invalid as exc:
        raise McpCliError(f"invalid -c `{'.'.join(exc.path)}`: {exc.message}") from None
    except ConfigError as exc:
        raise McpCliError(str(exc)) from None
    return table


def _servers(doc: tomlkit.TOMLDocument, path: Path, overrides: dict[str, Any] | None = None
             ) -> dict[str, McpServerConfig]:
    try:
        return dict(check_mcp_servers(deep_merge(doc.unwrap(), overrides or {}).get("mcp_servers")).servers)
    except schema.Invalid as exc:
        raise McpCliError(f"{path}: {exc.message} in `{'.'.join(exc.path)}`") from None


def _masked_env(server: McpServerConfig) -> str:
    """Codex's shape: the `env` keys sorted, then the `env_vars` names as written, values masked."""
    t = server.transport
    names = [] if isinstance(t, HttpTransport) else [*sorted(t.env or {}), *t.env_vars]
    return ", ".join(f"{key}=*****" for key in names) or "-"


def _transport_json(server: McpServerConfig) -> JsonObj:
    t = server.transport
    if isinstance(t, HttpTransport):
        return {"type": "streamable_http", "url": t.url, "bearer_token_env_var": t.bearer_token_env_var,
                "http_headers": t.http_headers, "env_http_headers": t.env_http_headers, "http_headers_helper": None}
    env = dict(sorted(t.env.items())) if t.env is not None else None
    return {"type": "stdio", "command": t.command, "args": list(t.args), "env": env, "env_vars": list(t.env_vars),
            "cwd": t.cwd}


def _auth(server: McpServerConfig) -> tuple[str, str]:
    """(table text, JSON value). We run no OAuth discovery, so an HTTP server without a token is "unknown"."""
    if not isinstance(server.transport, HttpTransport):
        return "Unsupported", "unsupported"
    if server.transport.bearer_token_env_var:
        return "Bearer token", "bearer_token"
    return "Unknown", "unknown"


def _status(server: McpServerConfig) -> str:
    return "enabled" if server.enabled else "disabled"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]


def _list(path: Path, overrides: dict[str, Any], *, as_json: bool) -> int:
    servers = _servers(_document(path), path, overrides)
    if as_json:
        entries = [{"name": name, "enabled": s.enabled, "disabled_reason": None, "transport": _transport_json(s),
                    "startup_timeout_sec": s.startup_timeout_s, "tool_timeout_sec": s.tool_timeout_s,
                    "auth_status": _auth(s)[1]} for name, s in sorted(servers.items())]
        print(json.dumps(entries, indent=2))
        return 0
    if not servers:
        print("No MCP servers configured yet. Try `pycodex mcp add my-tool -- my-command`.")
        return 0
    stdio = [["Name", "Command", "Args", "Env", "Cwd", "Status", "Auth"]]
    http = [["Name", "Url", "Bearer Token Env Var", "Status", "Auth"]]
    for name, s in sorted(servers.items()):
        t = s.transport
        if isinstance(t, HttpTransport):
            http.append([name, t.url, t.bearer_token_env_var or "-", _status(s), _auth(s)[0]])
        else:
            stdio.append([name, t.command, " ".join(t.args) or "-", _masked_env(s), t.cwd or "-", _status(s),
                          _auth(s)[0]])
    blocks = [_table(rows) for rows in (stdio, http) if len(rows) > 1]
    print("\n\n".join("\n".join(block) for block in blocks))
    return 0


def _get(path: Path, overrides: dict[str, Any], name: str, *, as_json: bool) -> int:
    server = _servers(_document(path), path, overrides).get(name)
    if server is None:
        raise McpCliError(f"No MCP server named '{name}' found.")
    if as_json:
        print(json.dumps({
            "name": name, "enabled": server.enabled, "disabled_reason": None, "transport": _transport_json(server),
            "enabled_tools": _opt_list(server.enabled_tools), "disabled_tools": _opt_list(server.disabled_tools),
            "startup_timeout_sec": server.startup_timeout_s, "tool_timeout_sec": server.tool_timeout_s,
        }, indent=2))
        return 0
    if not server.enabled:
        print(f"{name} (disabled)")  # Codex prints nothing more for a disabled server
        return 0
    t = server.transport
    lines = [name, f"  enabled: {str(server.enabled).lower()}"]
    if isinstance(t, HttpTransport):
        lines += ["  transport: streamable_http", f"  url: {t.url}",
                  f"  bearer_token_env_var: {t.bearer_token_env_var or '-'}",
                  f"  http_headers: {_pairs(t.http_headers)}", f"  env_http_headers: {_pairs(t.env_http_headers)}",
                  "  http_headers_helper: -"]
    else:
        lines += ["  transport: stdio", f"  command: {t.command}", f"  args: {' '.join(t.args) or '-'}",
                  f"  cwd: {t.cwd or '-'}", f"  env: {_masked_env(server)}"]
    lines.append(f"  remove: pycodex mcp remove {name}")
    print("\n".join(lines))
    return 0


def _opt_list(values: tuple[str, ...] | None) -> list[str] | None:
    return None if values is None else list(values)


def _pairs(headers: dict[str, str] | None) -> str:
    return ", ".join(f"{key}=*****" for key in sorted(headers or {})) or "-"


# -- editing -------------------------------------------------------------------------------------------------
def _server_table(args: argparse.Namespace) -> Table:
    command = [*args.server_command, *getattr(args, "mcp_trailing", [])]
    if args.url is not None and command:
        raise McpUsageError("the argument '--url <URL>' cannot be used with '[COMMAND]...'")
    if args.oauth_client_id or args.oauth_client_secret:
        raise McpCliError("pre-registered OAuth clients are not supported by pycodex")
    table = tomlkit.table()
    if args.url is not None:
        if args.env:
            raise McpCliError("command is required")  # Codex's words for --env on an HTTP server
        table["url"] = args.url
        if args.bearer_token_env_var:
            table["bearer_token_env_var"] = args.bearer_token_env_var
    elif command:
        if args.bearer_token_env_var:
            raise McpCliError("--bearer-token-env-var is only valid with streamable HTTP servers")
        table["command"] = command[0]
        if command[1:]:
            table["args"] = command[1:]
        if args.env:
            env = tomlkit.table()
            for pair in args.env:
                key, sep, value = pair.partition("=")
                if not sep or not key:
                    raise McpCliError(f"invalid --env `{pair}` (expected KEY=VALUE)")
                env[key] = value
            table["env"] = env
    else:
        raise McpUsageError("the following required arguments were not provided: <COMMAND|--url <URL>>")
    if args.oauth_resource:
        table["oauth_resource"] = args.oauth_resource
    return table


def _add(codex_home: Path, args: argparse.Namespace) -> int:
    path = codex_home / "config.toml"
    name: str = args.name
    if not _NAME.match(name):
        raise McpCliError(f"invalid server name '{name}' (use letters, numbers, '-', '_', ':', '@', '/', '.')")
    doc = _document(path)
    _servers(doc, path)  # refuse to edit a file whose servers are already broken
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    elif not isinstance(servers, Table):
        raise McpCliError(f"{path}: `mcp_servers` is not a table")
    if name in servers:
        del servers[name]
    servers[name] = _server_table(args)
    try:  # the edited file must load as the app-server would load it
        check_table(codex_home, doc.unwrap())
    except ConfigError as exc:
        raise McpCliError(f"{exc.reason or exc} in `{exc.key}`" if exc.key else str(exc)) from None
    _write(path, doc)
    print(f"Added global MCP server '{name}'.")
    return 0


def _remove(path: Path, name: str) -> int:
    doc = _document(path)
    servers = doc.get("mcp_servers")
    if not isinstance(servers, Table) or name not in servers:
        print(f"No MCP server named '{name}' found.")
        return 0
    del servers[name]
    if not servers:
        del doc["mcp_servers"]
    _write(path, doc)
    print(f"Removed global MCP server '{name}'.")
    return 0


def _write(path: Path, doc: tomlkit.TOMLDocument) -> None:
    try:
        save_config(path, tomlkit.dumps(doc))  # the config writer's atomic replace
    except OSError as exc:
        raise McpCliError(f"cannot write {path}: {exc}") from None
