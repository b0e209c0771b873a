"""`pycodex doctor` checks against real loopback servers, and `config show` on a broken file."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from app_server.config import load_config
from pycodex.debug.doctor import FAIL, OK, SKIP, check_provider, check_remote, run_checks

SECRET = "sk-test-secret-1234"


class _Refuses(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        ok = self.headers.get("authorization") == f"Bearer {SECRET}"
        self.send_response(200 if ok else 401)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def provider_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _home(tmp_path: Path, url: str) -> Path:
    (tmp_path / "config.toml").write_text(
        f'model_provider = "p"\n[model_providers.p]\nname = "p"\nbase_url = "{url}"\nenv_key = "P_KEY"\n')
    return tmp_path


def test_provider_key_missing_refused_and_accepted(tmp_path: Path, provider_url: str) -> None:
    config = load_config(_home(tmp_path, provider_url), env={})
    missing = check_provider(config, {})
    assert missing.status == FAIL and "$P_KEY is not set" in missing.detail and "export P_KEY" in missing.fix
    refused = check_provider(config, {"P_KEY": "wrong"})
    assert refused.status == FAIL and "refused the key (HTTP 401)" in refused.detail
    accepted = check_provider(config, {"P_KEY": SECRET})
    assert accepted.status == OK and "HTTP 200" in accepted.detail
    assert SECRET not in accepted.line() + refused.line()


def test_unreachable_provider_and_relay_fail_with_a_fix(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on (bound, never listening)
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
        checks = {c.name: c for c in run_checks(_home(tmp_path, dead + "/v1"), [],
                                                 {"P_KEY": "k", "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": dead})}
    assert checks["provider"].status == FAIL and "cannot reach" in checks["provider"].detail
    assert checks["remote"].status == FAIL and "pycodex relay" in checks["remote"].fix
    assert check_remote({}).status == SKIP


def test_config_show_on_a_broken_file_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('model = "m"\napproval_policy = 5\n')
    done = subprocess.run([sys.executable, "-m", "pycodex", "config", "show"], capture_output=True, text=True,
                          env={"CODEX_HOME": str(tmp_path), "PATH": ""}, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.startswith(f"error: {tmp_path / 'config.toml'}:2:19: invalid type")
    shown = {line.split(" = ")[0].strip(): line.split(" = ")[1] for line in done.stdout.splitlines()}
    assert shown["model"].startswith('"gpt-') and "approval_policy" not in shown  # the defaults it falls back to
