"""Ctrl-C during start-up (of app-server, exec-server, exec) ends the command with status 130 and no traceback.

Deterministic, without timing: the child installs an import hook that sends itself SIGINT when start-up
reaches a given module, then runs ``python -m pycodex`` as usual.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

LAUNCH = """
import importlib.abc, os, runpy, signal, sys
target = sys.argv.pop(1)
class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target_module=None):
        if name == target:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)  # the Ctrl-C, while start-up imports `target`
        return None
sys.meta_path.insert(0, Hook())
sys.argv[0] = "pycodex"
runpy.run_module("pycodex", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize(("module", "args"), [
    ("app_server.main", ["app-server"]),
    ("app_server.app", ["app-server"]),
    ("exec_server.cli", ["exec-server", "--listen", "ws://127.0.0.1:0"]),
    ("exec_server.ws_listener", ["exec-server", "--listen", "ws://127.0.0.1:0"]),
    ("pycodex.exec_cli.run", ["exec", "--skip-git-repo-check", "hi"]),
    ("app_server.app", ["exec", "--skip-git-repo-check", "hi"]),
])
def test_ctrl_c_during_start_up_prints_no_traceback(module: str, args: list[str], tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "PYCODEX_", "OPENAI_"))}
    env.update(CODEX_HOME=str(tmp_path), PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run([sys.executable, "-c", LAUNCH, module, *args], cwd=tmp_path, env=env,
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)
    assert "Traceback" not in result.stderr and "KeyboardInterrupt" not in result.stderr, result.stderr
    assert result.returncode == 130, result.stderr
