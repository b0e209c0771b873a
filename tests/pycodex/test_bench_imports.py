"""`python -m bench` runs without the test extras: no bench module imports jsonschema (the schema check's) or
pytest (`python -m bench all` once crashed in `agent` for want of it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODULES = ("__main__", "harness", "app_server_bench", "startup_bench", "exec_server_bench", "relay_bench",
           "relay_client_bench", "relay_processes",
           "agent_api_bench", "search_bench", "trace_bench", "tools_bench", "fanout_bench")


def test_bench_modules_import_without_test_extras() -> None:
    code = "import importlib, sys\nsys.modules['jsonschema'] = None\nsys.modules['pytest'] = None\n" + "".join(
        f"importlib.import_module('bench.{name}')\n" for name in MODULES)
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
