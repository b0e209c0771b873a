"""`pycodex --version` and `pycodex --help` stay cheap: they import no server code and no heavy library.

Each case runs the real entry point under ``python -X importtime`` and reads which modules it imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pycodex.cli import build_parser, chosen_subcommand
from tests.support.paths import REPO_ROOT

# Top-level packages that only a subcommand's own run may pull in.
SERVER_SIDE = frozenset({"app_server", "exec_server", "exec_client", "relay", "pydantic", "websockets", "httpx"})


def imported_modules(*args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pycodex", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # Lines read "import time: <self us> | <cumulative us> | <indented module name>".
    names = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.splitlines()
        if line.startswith("import time:") and line.count("|") == 2
    }
    names.discard("package")  # the header line
    return proc, names


@pytest.mark.parametrize("args", [("--version",), ("--help",), ()])
def test_version_and_help_import_no_server_code(args: tuple[str, ...]) -> None:
    proc, names = imported_modules(*args)
    assert "pycodex.cli" in names, proc.stderr[-2000:]  # the probe itself works
    heavy = sorted(name for name in names if name.split(".")[0] in SERVER_SIDE)
    assert heavy == [], f"`pycodex {' '.join(args)}` imported {heavy}"
    assert "pycodex" in (proc.stdout + proc.stderr)


def test_a_subcommand_help_imports_only_its_own_product() -> None:
    proc, names = imported_modules("relay", "--help")
    assert proc.returncode == 0 and "--listen" in proc.stdout, proc.stderr[-2000:]
    assert "relay.cli" in names
    assert not {name for name in names if name.split(".")[0] in {"app_server", "exec_server"}}


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--version"], None),
        (["-c", "app-server", "demo", "--json"], "demo"),
        (["--config", "x=1", "exec-server", "--listen", "ws://127.0.0.1:0"], "exec-server"),
        (["-cmodel=x", "relay"], "relay"),
        (["nonsense"], None),
        (["--", "app-server"], None),
    ],
)
def test_the_chosen_subcommand_skips_values_of_global_options(argv: list[str], expected: str | None) -> None:
    assert chosen_subcommand(argv) == expected


def test_the_full_parser_still_knows_every_subcommand_flag() -> None:
    args = build_parser().parse_args(["demo", "--json", "--local"])
    assert args.command == "demo" and args.json and args.local
    args = build_parser().parse_args(["app-server", "generate-json-schema", "--out", "d", "--experimental"])
    assert args.app_command == "generate-json-schema" and args.experimental


#: What `python -m pycodex app-server proxy` may import beyond `python -m` itself (runpy): clients spawn one
#: per connection and wait for it (bench/proxy_bench.py), so it stays the CLI's entry, the proxy module and
#: three C modules; no typing, pathlib, json, socket (its enums, selectors) or hashlib (OpenSSL).
PROXY_MODULES = frozenset({"__future__", "pycodex", "pycodex.cli", "app_server", "app_server.daemon",
                           "app_server.daemon.proxy", "_socket", "select", "faulthandler"})


def _imports_without_site(*args: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """The modules `python -S -X importtime ARGS` imports. Without `site`, whatever a .pth file loads first (an
    editable install's finder brings pathlib and re) cannot hide what the command itself imports."""
    proc = subprocess.run([sys.executable, "-S", "-X", "importtime", *args], capture_output=True, text=True,
                          timeout=60, env=env)
    return proc, {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
                  if line.startswith("import time:") and line.count("|") == 2} - {"package"}


def test_the_proxy_imports_only_itself(tmp_path: Path) -> None:
    env = {**os.environ, "CODEX_HOME": str(tmp_path), "PYTHONPATH": str(REPO_ROOT)}
    _, baseline = _imports_without_site("-c", "import runpy", env=env)
    proc, names = _imports_without_site("-m", "pycodex", "app-server", "proxy", "--sock", str(tmp_path / "none.sock"),
                                        env=env)
    assert proc.returncode == 1 and "Error: failed to connect to" in proc.stderr, proc.stderr[-2000:]
    assert "app_server.daemon.proxy" in names
    assert sorted(names - baseline - PROXY_MODULES) == []
