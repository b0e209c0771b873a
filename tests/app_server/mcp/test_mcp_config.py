"""`[mcp_servers.NAME]` parsing: Codex 0.169's field names, defaults and error words, with file positions."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from app_server.config import ConfigError, schema
from app_server.config.mcp_servers import (
    DEFAULT_STARTUP_TIMEOUT_S,
    DEFAULT_TOOL_TIMEOUT_S,
    HttpTransport,
    McpServers,
    StdioTransport,
    check_mcp_servers,
    load_mcp_servers,
    optional_startup_grace_s,
)
from app_server.mcp.client import http_headers, stdio_parameters

GOOD = """\
model = "m"

[mcp_servers.calc]
command = "python3"
args = ["calc.py", "stdio"]
env = { CALC_MODE = "fast" }
env_vars = ["HOME"]
cwd = "/tmp"
startup_timeout_sec = 5
tool_timeout_sec = 1.5
enabled_tools = ["add", "echo"]
disabled_tools = ["echo"]
default_tools_approval_mode = "prompt"

[mcp_servers.calc.tools.add]
approval_mode = "approve"

[mcp_servers.web]
url = "http://127.0.0.1:9/mcp"
bearer_token_env_var = "WEB_TOKEN"
http_headers = { "X-Team" = "blue" }
env_http_headers = { "X-Key" = "WEB_KEY" }
startup_timeout_ms = 2500
enabled = false
"""


def _load(tmp_path: Path, text: str, strict: bool = False) -> McpServers:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return load_mcp_servers(path, tomllib.loads(text), text, strict=strict)


def test_good_config_types_every_field(tmp_path: Path) -> None:
    servers = _load(tmp_path, GOOD).servers
    calc, web = servers["calc"], servers["web"]
    assert calc.transport == StdioTransport(command="python3", args=("calc.py", "stdio"), env={"CALC_MODE": "fast"},
                                            env_vars=("HOME",), cwd="/tmp")
    assert (calc.startup_timeout, calc.tool_timeout, calc.enabled) == (5.0, 1.5, True)
    assert [calc.tool_enabled(t) for t in ("add", "echo", "slow")] == [True, False, False]
    assert (calc.approval_mode("add"), calc.approval_mode("echo")) == ("approve", "prompt")
    assert isinstance(web.transport, HttpTransport)
    assert web.transport.bearer_token_env_var == "WEB_TOKEN"
    assert web.transport.http_headers == {"X-Team": "blue"}
    assert web.transport.env_http_headers == {"X-Key": "WEB_KEY"}
    assert (web.startup_timeout, web.enabled) == (2.5, False)


def test_defaults_match_codex() -> None:
    server = check_mcp_servers({"s": {"command": "x"}}).servers["s"]
    assert (server.startup_timeout, server.tool_timeout) == (DEFAULT_STARTUP_TIMEOUT_S, DEFAULT_TOOL_TIMEOUT_S) == (30, 300)
    assert server.enabled and not server.required
    assert server.approval_mode("any") == "auto"
    assert server.tool_enabled("any")


def test_startup_timeout_sec_wins_over_ms() -> None:
    server = check_mcp_servers({"s": {"command": "x", "startup_timeout_sec": 3, "startup_timeout_ms": 9000}})
    assert server.servers["s"].startup_timeout == 3


@pytest.mark.parametrize(
    ("body", "key", "message", "line", "column"),
    [
        ('command = "x"\nstartup_timeout_sec = "soon"', "mcp_servers.calc.startup_timeout_sec",
         'invalid type: string "soon", expected f64', 3, 23),
        ('command = "x"\nurl = "http://h"', "mcp_servers.calc", "url is not supported for stdio", 1, 1),
        ('url = "http://h"\nargs = ["a"]', "mcp_servers.calc", "args is not supported for streamable_http", 1, 1),
        ('args = ["a"]', "mcp_servers.calc", "invalid transport", 1, 1),
        ('command = "x"\nenabled_tools = "add"', "mcp_servers.calc.enabled_tools",
         'invalid type: string "add", expected a sequence', 3, 17),
        ('command = "x"\ntool_timeout_sec = -1', "mcp_servers.calc.tool_timeout_sec",
         "cannot convert float seconds to Duration: value is negative", 3, 20),
        ('command = "x"\nenabled = "yes"', "mcp_servers.calc.enabled", 'invalid type: string "yes", expected a boolean',
         3, 11),
        ('command = "x"\nenv = { A = 1 }', "mcp_servers.calc.env.A", "invalid type: integer `1`, expected a string",
         3, 13),
        ('command = "x"\n[mcp_servers.calc.tools.add]\napproval_mode = "sometimes"',
         "mcp_servers.calc.tools.add.approval_mode",
         "unknown variant `sometimes`, expected one of `auto`, `prompt`, `writes`, `approve`", 4, 17),
    ],
)
def test_bad_values_are_errors_with_positions(tmp_path: Path, body: str, key: str, message: str, line: int,
                                              column: int) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, f"[mcp_servers.calc]\n{body}\n")
    err = caught.value
    assert (err.key, err.reason, err.line, err.column) == (key, message, line, column)
    assert str(err) == f"{tmp_path / 'config.toml'}:{line}:{column}: {message}"


def test_unknown_keys_ignored_and_listed_unless_strict(tmp_path: Path) -> None:
    text = '[mcp_servers.calc]\ncommand = "x"\nbogus = 1\n[mcp_servers.calc.tools.add]\napproval = "approve"\n'
    loaded = _load(tmp_path, text)
    assert loaded.unknown_keys == ("mcp_servers.calc.bogus", "mcp_servers.calc.tools.add.approval")
    assert loaded.servers["calc"].approval_mode("add") == "auto"
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text, strict=True)
    assert (caught.value.line, caught.value.column, caught.value.reason) == (3, 9, "unknown field `bogus`")


def test_not_a_table() -> None:
    with pytest.raises(schema.Invalid) as caught:
        check_mcp_servers({"calc": "python3"})
    assert caught.value.message == 'invalid type: string "python3", expected a map'
    assert check_mcp_servers(None).servers == {}


def test_optional_startup_grace() -> None:
    assert optional_startup_grace_s({}) == 1.0
    assert optional_startup_grace_s({"mcp_optional_startup_grace_ms": 0}) == 0
    with pytest.raises(schema.Invalid):
        optional_startup_grace_s({"mcp_optional_startup_grace_ms": "soon"})


def test_stdio_environment_is_a_whitelist_plus_env_vars_plus_env() -> None:
    server = check_mcp_servers({"s": {"command": "x", "env_vars": ["CALC_KEY"], "env": {"PATH": "/opt/bin"}}})
    ours = {"PATH": "/usr/bin", "HOME": "/h", "SECRET": "no", "CALC_KEY": "k"}
    transport = server.servers["s"].transport
    assert isinstance(transport, StdioTransport)
    assert stdio_parameters(transport, ours).env == {"PATH": "/opt/bin", "HOME": "/h", "CALC_KEY": "k"}


def test_http_headers_from_config_and_environment() -> None:
    server = check_mcp_servers({"w": {"url": "http://127.0.0.1:1/mcp", "http_headers": {"X-A": "1"},
                                      "env_http_headers": {"X-B": "B_VAR", "X-C": "UNSET"},
                                      "bearer_token_env_var": "TOK"}}).servers["w"]
    transport = server.transport
    assert isinstance(transport, HttpTransport)
    assert http_headers("w", transport, {"B_VAR": "2", "TOK": "t"}) == {
        "X-A": "1", "X-B": "2", "Authorization": "Bearer t"}
