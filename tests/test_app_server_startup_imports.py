"""Serving ``initialize`` on stdio stays cheap: the real ``pycodex app-server`` entry point, run under
``python -X importtime`` until it has answered initialize, imports neither the protocol models of other
methods nor the libraries only websockets, HTTP models, JWT auth or MCP need. Also: the lazily declared
handler families match the handler modules' route tables."""

from __future__ import annotations

import json
import subprocess
from importlib import import_module
from pathlib import Path

from app_server.handlers import FAMILIES
from tests.support.appserver_process import app_server_env, default_argv

#: What start-up must not pay for: every other method's wire models, and the heavy optional libraries.
NOT_AT_STARTUP = (
    "app_server.protocol.threads", "app_server.protocol.turns", "app_server.protocol.items",
    "app_server.protocol.notifications", "app_server.protocol.approvals", "app_server.protocol.methods",
    "app_server.protocol.server_info", "app_server.protocol.schema_export", "app_server.handlers.threads",
    "app_server.handlers.turns", "app_server.model.client", "exec_client.client", "exec_client.wire.protocol",
)
HEAVY_LIBRARIES = frozenset({"websockets", "httpx", "jwt", "cryptography", "rich", "mcp"})


def _imports_until_initialized(tmp_path: Path) -> tuple[list[str], set[str]]:
    request = {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}}
    proc = subprocess.run(
        [default_argv()[0], "-X", "importtime", *default_argv()[1:]],
        input=json.dumps(request) + "\n", capture_output=True, text=True, timeout=60,
        env=app_server_env(tmp_path / "home", {"PYCODEX_LOG": "error"}),
    )
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    return proc.stdout.splitlines(), names


def test_stdio_initialize_imports_only_what_it_needs(tmp_path: Path) -> None:
    lines, names = _imports_until_initialized(tmp_path)
    answer = json.loads(lines[0])
    assert answer["id"] == 1 and "userAgent" in answer["result"], lines
    assert "app_server.protocol.initialize" in names  # the probe sees the server's own imports
    assert sorted(name for name in NOT_AT_STARTUP if name in names) == []
    assert sorted(name for name in names if name.split(".")[0] in HEAVY_LIBRARIES) == []


def test_families_match_the_handler_modules_routes() -> None:
    for family, methods in FAMILIES.items():
        routes = import_module(f"app_server.handlers.{family}").ROUTES
        assert tuple(route.method for route in routes) == methods, family
