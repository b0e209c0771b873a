"""`pycodex mcp add/list/get/remove` on a commented config.toml: comments survive, and the outputs are
`codex mcp`'s (0.169, captured below with `codex` in hints read as `pycodex`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.tools import require_codex

REPO = Path(__file__).resolve().parents[2]

CONFIG = '# my config\nmodel = "gpt-5" # inline\n\n# servers below\n'

# Captured from Codex 0.169 (`codex mcp ...` on the same steps, throwaway CODEX_HOME).
LIST_BOTH = (
    "Name  Command  Args           Env               Cwd  Status   Auth       \n"
    "docs  python3  -m srv --flag  A=*****, B=*****  -    enabled  Unsupported\n"
    "\n"
    "Name  Url                      Bearer Token Env Var  Status   Auth        \n"
    "web   https://example.com/mcp  TOK                   enabled  Bearer token\n"
)
GET_DOCS = (
    "docs\n  enabled: true\n  transport: stdio\n  command: python3\n  args: -m srv --flag\n  cwd: -\n"
    "  env: A=*****, B=*****\n  remove: codex mcp remove docs\n"
)
GET_WEB = (
    "web\n  enabled: true\n  transport: streamable_http\n  url: https://example.com/mcp\n"
    "  bearer_token_env_var: TOK\n  http_headers: -\n  env_http_headers: -\n  http_headers_helper: -\n"
    "  remove: codex mcp remove web\n"
)
GET_WEB_JSON = """{
  "name": "web",
  "enabled": true,
  "disabled_reason": null,
  "transport": {
    "type": "streamable_http",
    "url": "https://example.com/mcp",
    "bearer_token_env_var": "TOK",
    "http_headers": null,
    "env_http_headers": null,
    "http_headers_helper": null
  },
  "enabled_tools": null,
  "disabled_tools": null,
  "startup_timeout_sec": null,
  "tool_timeout_sec": null
}
"""
STEPS: list[tuple[list[str], int, str]] = [
    (["list"], 0, "No MCP servers configured yet. Try `codex mcp add my-tool -- my-command`.\n"),
    (["list", "--json"], 0, "[]\n"),
    (["add", "docs", "--env", "A=1", "--env", "B=2", "--", "python3", "-m", "srv", "--flag"], 0,
     "Added global MCP server 'docs'.\n"),
    (["add", "web", "--url", "https://example.com/mcp", "--bearer-token-env-var", "TOK"], 0,
     "Added global MCP server 'web'.\n"),
    (["list"], 0, LIST_BOTH),
    (["get", "docs"], 0, GET_DOCS),
    (["get", "web"], 0, GET_WEB),
    (["get", "web", "--json"], 0, GET_WEB_JSON),
    (["remove", "web"], 0, "Removed global MCP server 'web'.\n"),
    (["remove", "web"], 0, "No MCP server named 'web' found.\n"),
]

# A hand-written config: env keys sorted then env_vars as written; a disabled server's `get` is one line.
WRITTEN = ('[mcp_servers.s]\ncommand = "x"\nenv_vars = ["ZED", "HOME"]\n[mcp_servers.s.env]\nB = "1"\nA = "2"\n'
           '[mcp_servers.d]\ncommand = "y"\nenabled = false\n')
VIEWS: list[tuple[list[str], str]] = [
    (["list"], "Name  Command  Args  Env                                      Cwd  Status    Auth       \n"
               "d     y        -     -                                        -    disabled  Unsupported\n"
               "s     x        -     A=*****, B=*****, ZED=*****, HOME=*****  -    enabled   Unsupported\n"),
    (["get", "d"], "d (disabled)\n"),
]


def _run(argv: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CODEX_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)


def _pycodex(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run([sys.executable, "-m", "pycodex", "mcp", *args], home)


def test_round_trip_matches_codex_and_keeps_comments(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(CONFIG)
    for args, code, expected in STEPS:
        proc = _pycodex(tmp_path, *args)
        assert (proc.returncode, proc.stdout) == (code, expected.replace("codex mcp", "pycodex mcp")), (
            args, proc.stderr)
    text = (tmp_path / "config.toml").read_text()
    assert "# my config" in text and 'model = "gpt-5" # inline' in text and "# servers below" in text
    assert tomllib.loads(text) == {"model": "gpt-5", "mcp_servers": {
        "docs": {"command": "python3", "args": ["-m", "srv", "--flag"], "env": {"A": "1", "B": "2"}}}}
    # Replacing a server replaces its whole table, as Codex does.
    assert _pycodex(tmp_path, "add", "docs", "--", "other").returncode == 0
    assert tomllib.loads((tmp_path / "config.toml").read_text())["mcp_servers"] == {"docs": {"command": "other"}}


@pytest.mark.parametrize(("args", "expected"), VIEWS)
def test_views_of_a_written_config(tmp_path: Path, args: list[str], expected: str) -> None:
    (tmp_path / "config.toml").write_text(WRITTEN)
    proc = _pycodex(tmp_path, *args)
    assert (proc.returncode, proc.stdout) == (0, expected), proc.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["get", "nope"], "Error: No MCP server named 'nope' found."),
    (["add", "bad name", "--", "x"],
     "Error: invalid server name 'bad name' (use letters, numbers, '-', '_', ':', '@', '/', '.')"),
    (["add", "w2", "--env", "A=1", "--url", "http://x"], "Error: command is required"),
])
def test_mistakes_print_one_line_and_leave_the_file_alone(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "config.toml").write_text(CONFIG)
    proc = _pycodex(tmp_path, *args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", message + "\n")
    assert (tmp_path / "config.toml").read_text() == CONFIG


@pytest.mark.parametrize(("args", "message"), [
    (["add", "x"], "error: the following required arguments were not provided: <COMMAND|--url <URL>>"),
    (["add", "x", "--url", "http://x", "--", "cmd"],
     "error: the argument '--url <URL>' cannot be used with '[COMMAND]...'"),
])
def test_usage_mistakes_exit_2_with_the_usage_as_codex_does(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "config.toml").write_text(CONFIG)
    proc = _pycodex(tmp_path, *args)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr.splitlines()[0] == message
    assert "Usage: pycodex mcp add [OPTIONS] NAME (--url URL | -- COMMAND...)" in proc.stderr
    assert (tmp_path / "config.toml").read_text() == CONFIG


def test_a_broken_server_table_is_reported_not_rewritten(tmp_path: Path) -> None:
    broken = CONFIG + "[mcp_servers.bad]\nargs = []\n"
    (tmp_path / "config.toml").write_text(broken)
    proc = _pycodex(tmp_path, "add", "docs", "--", "x")
    assert proc.returncode == 1 and "invalid transport" in proc.stderr and "Traceback" not in proc.stderr
    assert (tmp_path / "config.toml").read_text() == broken


def test_config_overrides_apply_to_list_and_get(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(WRITTEN)
    env = {**os.environ, "CODEX_HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "pycodex", "-c", "mcp_servers.s.enabled=false", "mcp", "get", "s"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert (proc.returncode, proc.stdout) == (0, "s (disabled)\n"), proc.stderr
    assert (tmp_path / "config.toml").read_text() == WRITTEN


def test_login_is_a_one_line_error(tmp_path: Path) -> None:
    proc = _pycodex(tmp_path, "login", "web")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "not supported" in proc.stderr


@pytest.mark.codex
def test_codex_prints_the_same(tmp_path: Path) -> None:
    """The pinned strings above are still what the binary prints."""
    codex = require_codex()
    home = tmp_path / "codex"
    home.mkdir()
    (home / "config.toml").write_text(CONFIG)
    for args, code, expected in STEPS:
        proc = _run([str(codex), "mcp", *args], home)
        assert (proc.returncode, proc.stdout) == (code, expected), args
    (home / "config.toml").write_text(WRITTEN)
    for args, expected in VIEWS:
        proc = _run([str(codex), "mcp", *args], home)
        assert (proc.returncode, proc.stdout) == (0, expected), args
    shutil.rmtree(home)
