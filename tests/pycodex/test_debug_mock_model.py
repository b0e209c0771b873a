"""`pycodex mock-model` mistakes are one line; the fixture shim still serves the same scripts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

PYCODEX = [sys.executable, "-m", "pycodex", "mock-model"]


@pytest.mark.parametrize(
    ("script", "listen", "message"),
    [
        ('[[{"type": "bogus"}]]', "127.0.0.1:0", "mock-model: script "),
        ("not json", "127.0.0.1:0", "mock-model: Expecting value"),
        ('[["hi"]]', "0.0.0.0:8123", "serves loopback only"),
        ('[["hi"]]', "127.0.0.1", "expected IP:PORT"),
    ],
)
def test_mistakes_are_one_line(tmp_path: Path, script: str, listen: str, message: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(script)
    done = subprocess.run([*PYCODEX, "--script", str(path), "--listen", listen], capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr


def test_missing_script_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run([*PYCODEX, "--script", str(tmp_path / "nope.json")], capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 2 and done.stderr.startswith("mock-model: ") and len(done.stderr.splitlines()) == 1


def test_fixture_shim_serves_the_demo_script() -> None:
    shim = REPO_ROOT / "fixtures" / "fake_responses_server.py"
    with subprocess.Popen([sys.executable, str(shim), str(REPO_ROOT / "fixtures/scripts/demo.json")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        port = int(proc.stdout.readline())
        import httpx

        with httpx.Client(trust_env=False, timeout=10) as http:
            reply = http.post(f"http://127.0.0.1:{port}/v1/responses", json={})
            missing = http.get(f"http://127.0.0.1:{port}/v1/models")
        proc.stdin.close()  # EOF on stdin stops the fixture form
        assert proc.wait(timeout=30) == 0
    assert reply.status_code == 200 and "response.completed" in reply.text and "exec_command" in reply.text
    assert missing.status_code == 404
