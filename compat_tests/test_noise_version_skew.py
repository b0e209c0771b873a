"""Seed 003 across builds: an app-server runs a turn on a remote exec-server of another build over Noise.

Parametrized over (app build, exec build) pairs (support/matrix.py). The command must run on the
executor (only its environment holds the marker), its output must come back to the model, the first
model request must carry both skills (the selected capability root lives on the remote environment,
so its skill is read through the relay), the relay must carry nothing but ciphertext, and each
registry route must be hit exactly once.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from compat_tests.support.artifacts import PairLog
from compat_tests.support.builds import Pairing
from compat_tests.support.processes import ProcessGroup
from compat_tests.support.relay_capture import (
    assert_relay_data_is_encrypted,
    base64_forms,
    harness_streams,
    registry_requests,
)
from compat_tests.support.rpc import check_item_fields
from compat_tests.support.scenario import CANARY, MARKER, SELECTED_SKILL_BODY, SKILL_BODY, run_version_skew
from compat_tests.support.turn_checks import assert_no_divergence, assert_turn_ran_on_executor

pytestmark = pytest.mark.compat
SCENARIO = "noise"


def _assert_one_relay_stream(capture: Path, log: PairLog) -> None:
    """A healthy turn uses one harness stream; a reopened one means the first broke (say how and why)."""
    streams = harness_streams(capture)
    if len(streams) <= 1:
        return
    stream, data, reset = streams[0]
    how = "reset" if reset else "dropped"
    stderr = (log.folder / "app-server.stderr.log").read_text(encoding="utf-8", errors="replace")
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in stderr.splitlines()]
    words = (stream, "noise", "decrypt", "relay")
    hint = next((line for line in lines if any(w in line.lower() for w in words)), "")
    hint = f"; app-server: {hint.split(' ', 3)[-1][:160]}" if hint else ""
    raise AssertionError(
        f"app-server opened {len(streams)} relay streams: the first was {how} after {data} data frames{hint}"
    )


async def test_app_server_runs_the_skill_turn_on_a_remote_exec_server_of_another_build(
    pairing: Pairing, process_group: ProcessGroup, tmp_path: Path, pair_log: PairLog
) -> None:
    outcome = await run_version_skew(process_group, pairing, tmp_path, pair_log, "noise")
    assert_no_divergence(pair_log)
    _assert_one_relay_stream(outcome.capture, pair_log)
    check_item_fields(outcome.notifications)
    assert_turn_ran_on_executor(outcome, pairing.label)
    plain = ("initialize", "process/start", "exec_command", MARKER, CANARY, SKILL_BODY, SELECTED_SKILL_BODY)
    assert_relay_data_is_encrypted(outcome.capture, (*plain, *base64_forms(CANARY), *base64_forms(MARKER)))
    requests = registry_requests(outcome.capture)
    assert sorted(requests) == [("connect", 200), ("register", 200), ("validate", 200)], (
        f"registry requests {requests}, expected each route once ({pairing.label})"
    )
