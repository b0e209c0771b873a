"""Real, unmodified clients (the official Python SDK and a raw JSON-RPC driver) against our app-server.

Runs ``../shared/clients/run_all.sh`` (the acceptance scripts every release must pass) with our
executable. The scripts install their clients from PyPI/npm on first use; the test skips when the
shared folder (``$PYCODEX_SHARED_DIR``, else ``../shared``) is absent.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.support.paths import SHARED
from tests.support.tools import require_pycodex_script, require_shared

RUN_ALL = SHARED / "clients" / "run_all.sh"
CLIENTS = "raw raw_approval openai_codex openai_codex_approval"


@pytest.mark.timeout(900)
async def test_real_clients_complete_the_standard_scenario(tmp_path: Path) -> None:
    require_shared("clients/run_all.sh")
    pycodex = require_pycodex_script()
    proc = await asyncio.create_subprocess_exec(
        "bash", str(RUN_ALL), pycodex, env={**_env(tmp_path), "ONLY": CLIENTS},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 840)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    text = out.decode("utf-8", "replace")
    assert proc.returncode == 0, text[-4000:]
    assert "4 passed, 0 failed" in text, text[-4000:]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    # Reuse an existing client install (CLIENTS_DIR or the scripts' default) to keep reruns fast.
    env.setdefault("TMPDIR", "/tmp")
    return env
