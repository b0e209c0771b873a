"""Seed 003 across builds: an app-server runs a turn on a remote exec-server of another build.

One body covers every pairing (see conftest): the command must run on the executor (only its
environment holds the marker), the relay must carry nothing but ciphertext, each registry route must
be hit exactly once, the command's output must come back to the model, and the first model
request must carry both skills (issue 6: the selected
capability root lives on the remote environment, so its skill is read through the relay).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compat_tests.support.builds import Pairing
from compat_tests.support.processes import ProcessGroup
from compat_tests.support.relay_capture import (
    assert_relay_data_is_encrypted,
    base64_forms,
    registry_requests,
)
from compat_tests.support.scenario import (
    CANARY,
    MARKER,
    SELECTED_SKILL_BODY,
    SKILL_BODY,
    SkewOutcome,
    run_version_skew,
)

pytestmark = pytest.mark.compat


def _model_inputs(outcome: SkewOutcome) -> list[list[dict[str, Any]]]:
    requests = [r for r in outcome.model_requests if r["path"].endswith("/responses")]
    assert len(requests) == 2, f"expected the tool call and the final answer, got {len(requests)} requests"
    return [r["body"]["input"] for r in requests]


def _content_of_calls(outcome: SkewOutcome) -> str:
    """The function-call outputs the app-server sent back to the model (second request)."""
    items = _model_inputs(outcome)[1]
    return json.dumps([item.get("output") for item in items if item.get("type") == "function_call_output"])


def _content_of(items: list[dict[str, Any]], role: str) -> list[str]:
    return [json.dumps(item.get("content")) for item in items if item.get("role") == role]


async def test_app_server_runs_the_skill_turn_on_a_remote_exec_server_of_another_build(
    pairing: Pairing, process_group: ProcessGroup, tmp_path: Path
) -> None:
    outcome = await run_version_skew(process_group, pairing.relay, pairing.app, pairing.executor, tmp_path)
    label = pairing.label

    output = outcome.workspace / "version-skew-output.txt"
    assert output.is_file(), f"{label}: the command did not run"
    assert output.read_text() == MARKER, f"{label}: the command did not run on the executor"

    tool_output = _content_of_calls(outcome)
    assert CANARY in tool_output, f"{label}: the command's output did not come back through the relay"
    plain = ("initialize", "process/start", "exec_command", MARKER, CANARY, SKILL_BODY, SELECTED_SKILL_BODY)
    assert_relay_data_is_encrypted(outcome.capture, (*plain, *base64_forms(CANARY), *base64_forms(MARKER)))
    requests = registry_requests(outcome.capture)
    assert sorted(requests) == [("connect", 200), ("register", 200), ("validate", 200)], (
        f"{label}: registry requests {requests}, expected each route once"
    )

    items = _model_inputs(outcome)[0]
    developer = _content_of(items, "developer")
    assert any("selected-version-skew" in text for text in developer), f"{label}: no selected skill listed"
    user = _content_of(items, "user")
    for body in (SKILL_BODY, SELECTED_SKILL_BODY):
        assert any(body in text for text in user), f"{label}: skill body {body!r} not in a user message"
