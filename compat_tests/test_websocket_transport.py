"""Seed 003's exec turn over the direct WebSocket transport: ``CODEX_EXEC_SERVER_URL=ws://...``.

Parametrized over (app build, exec build) pairs (support/matrix.py). The app-server reaches the
exec-server build through a tap that records the plaintext JSON-RPC both ways; the turn must run its
command on the executor and the exec-server must have served ``initialize`` and ``process/start``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat_tests.support.artifacts import PairLog
from compat_tests.support.builds import Pairing
from compat_tests.support.processes import ProcessGroup
from compat_tests.support.rpc import check_item_fields
from compat_tests.support.scenario import run_version_skew
from compat_tests.support.turn_checks import assert_no_divergence, assert_turn_ran_on_executor

pytestmark = pytest.mark.compat
SCENARIO = "websocket"


async def test_app_server_runs_the_turn_on_an_exec_server_over_websocket(
    pairing: Pairing, process_group: ProcessGroup, tmp_path: Path, pair_log: PairLog
) -> None:
    outcome = await run_version_skew(process_group, pairing, tmp_path, pair_log, "websocket")
    assert_no_divergence(pair_log)
    check_item_fields(outcome.notifications)
    assert_turn_ran_on_executor(outcome, pairing.label)
    sent = (pair_log.folder / "exec-server.jsonrpc.jsonl").read_text().splitlines()
    methods = {json.loads(line)["msg"].get("method") for line in sent if json.loads(line)["dir"] == ">"}
    for method in ("initialize", "process/start"):
        assert method in methods, f"the app-server never sent {method} to the exec-server ({pairing.label})"
