"""SIGUSR1 asks for a stack dump; during start-up (before the server's own handler) it must not kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.paths import REPO_ROOT

# Runs `pycodex app-server` with the import of app_server.main held until RELEASE exists: a start-up that
# stays in progress for as long as the test needs, without any sleep.
HOLD_STARTUP = """
import importlib.abc, os, sys, time
blocked, release = sys.argv[1], sys.argv[2]
class Hold(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "app_server.main":
            open(blocked, "w").close()
            deadline = time.monotonic() + 60
            while not os.path.exists(release) and time.monotonic() < deadline:
                time.sleep(0.01)
        return None
sys.meta_path.insert(0, Hold())
from pycodex.cli import main
raise SystemExit(main(["app-server"]))
"""

USR1_BIT = 1 << (signal.SIGUSR1 - 1)


def _wait(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _catches_usr1(pid: int) -> bool:
    status = Path(f"/proc/{pid}/status").read_text()
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & USR1_BIT)


def test_usr1_during_start_up_dumps_stacks_instead_of_killing(tmp_path: Path) -> None:
    blocked, release, err = tmp_path / "blocked", tmp_path / "release", tmp_path / "stderr"
    (tmp_path / "home").mkdir()  # a CODEX_HOME that does not exist stops the command before start-up
    env = {**os.environ, "CODEX_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO_ROOT)}
    with err.open("wb") as err_file, subprocess.Popen(
        [sys.executable, "-c", HOLD_STARTUP, str(blocked), str(release)], env=env, cwd=tmp_path,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err_file, text=True,
    ) as proc:
        try:
            assert proc.stdin is not None and proc.stdout is not None
            _wait(blocked.exists, "start-up to reach the app-server import")
            assert _catches_usr1(proc.pid), "SIGUSR1 still has its default (fatal) action during start-up"
            os.kill(proc.pid, signal.SIGUSR1)
            _wait(lambda: "most recent call first" in err.read_text(), "the start-up stack dump")
            assert proc.poll() is None
            release.touch()
            proc.stdin.write(json.dumps({"id": 1, "method": "initialize",
                                         "params": {"clientInfo": {"name": "t", "version": "0"}}}) + "\n")
            proc.stdin.flush()
            answer = json.loads(proc.stdout.readline())
            assert answer["id"] == 1 and "result" in answer
            # initialize is answered before the server is built (app_server/startup.py): a second request's
            # answer shows the event loop running, with its own SIGUSR1 handler installed.
            proc.stdin.write(json.dumps({"id": 2, "method": "thread/list", "params": {}}) + "\n")
            proc.stdin.flush()
            while json.loads(proc.stdout.readline()).get("id") != 2:
                pass
            os.kill(proc.pid, signal.SIGUSR1)  # the running server's own handler: its asyncio tasks
            _wait(lambda: "--- " in err.read_text(), "the task dump")
            proc.stdin.close()
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
