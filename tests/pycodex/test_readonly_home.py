"""A read-only ``CODEX_HOME``: one clear line naming the error and the path, never a traceback or a bare -32603.

The home is made read-only with a private bind mount (``unshare -m``); the test skips where that is not
allowed (not root, no mount namespaces), since a chmod does not stop root.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fake_model import model_config

DEAD_MODEL_URL = "http://127.0.0.1:9/v1"
TIMEOUT_S = 60


def _read_only(home: Path, argv: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with ``home`` bind-mounted read-only over itself, in a private mount namespace."""
    script = 'mount --bind -o ro "$0" "$0" && exec "$@"'
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "PYCODEX_", "OPENAI_"))}
    env.update(CODEX_HOME=str(home), CODEX_API_KEY="dummy")
    return subprocess.run(["unshare", "-m", "sh", "-c", script, str(home), *argv], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


@pytest.fixture
def read_only_home(tmp_path: Path) -> Path:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to bind-mount a read-only CODEX_HOME")
    home = tmp_path / "home"
    model_config(home, DEAD_MODEL_URL)
    probe = _read_only(home, ["touch", str(home / "probe")], tmp_path)
    if probe.returncode == 0 or "Read-only file system" not in probe.stderr:
        pytest.skip(f"cannot make a read-only bind mount here: {probe.stderr.strip()}")
    return home


def test_exec_prints_one_line_and_fails(read_only_home: Path, tmp_path: Path) -> None:
    result = _read_only(read_only_home, [sys.executable, "-m", "pycodex", "exec", "--skip-git-repo-check", "hi"],
                        tmp_path)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "Read-only file system" in line]
    assert errors == [f"Error: thread/start failed: Read-only file system (os error 30): {read_only_home}"
                      "/thread-writer-locks"]


def test_app_server_answers_thread_start_with_the_os_error(read_only_home: Path, tmp_path: Path) -> None:
    lines = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "0"}}},
        {"method": "initialized"},
        {"id": 2, "method": "thread/start", "params": {"cwd": str(tmp_path)}},
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines)
    result = _read_only(read_only_home, [sys.executable, "-m", "pycodex", "app-server"], tmp_path, stdin)
    answers = {m["id"]: m for m in map(json.loads, result.stdout.splitlines()) if "id" in m}
    assert answers[2]["error"]["code"] == -32603
    assert answers[2]["error"]["message"].startswith("Read-only file system (os error 30): ")
    assert "Traceback" not in result.stderr
