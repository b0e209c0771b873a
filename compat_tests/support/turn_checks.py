"""What every transport's exec turn must show: no divergence in the transcripts (the command's exit code
and output, on the exec-server's wire, on the commandExecution item and in what the model received:
support/causes.py), the command ran on the executor, its output reached the model, and both skills (one
read through the executor) were in the first model request."""

from __future__ import annotations

import json
from typing import Any

from compat_tests.support.artifacts import PairLog
from compat_tests.support.rpc import ScenarioError
from compat_tests.support.scenario import CANARY, MARKER, SELECTED_SKILL_BODY, SKILL_BODY, SkewOutcome

__all__ = ["assert_no_divergence", "assert_turn_ran_on_executor"]


def assert_no_divergence(log: PairLog) -> None:
    """Raise the first divergence the pair's transcripts show against the scenario's expectation."""
    found = log.divergence()
    if found:
        raise ScenarioError(found, f"logs: {log.folder}")


def _model_inputs(outcome: SkewOutcome) -> list[list[dict[str, Any]]]:
    requests = [r for r in outcome.model_requests if r["path"].endswith("/responses")]
    assert len(requests) == 2, (
        f"expected the tool call and the final answer, got {len(requests)} model requests"
    )
    return [r["body"]["input"] for r in requests]


def _content_of(items: list[dict[str, Any]], role: str) -> list[str]:
    return [json.dumps(item.get("content")) for item in items if item.get("role") == role]


def assert_turn_ran_on_executor(outcome: SkewOutcome, label: str) -> None:
    output = outcome.workspace / "version-skew-output.txt"
    assert output.is_file(), f"the command did not run ({label})"
    assert output.read_text() == MARKER, f"the command did not run on the executor ({label})"
    inputs = _model_inputs(outcome)
    calls = [item.get("output") for item in inputs[1] if item.get("type") == "function_call_output"]
    assert CANARY in json.dumps(calls), f"the command's output did not come back to the model ({label})"
    developer = _content_of(inputs[0], "developer")
    assert any("selected-version-skew" in text for text in developer), f"no selected skill listed ({label})"
    user = _content_of(inputs[0], "user")
    for body in (SKILL_BODY, SELECTED_SKILL_BODY):
        assert any(body in text for text in user), f"skill body {body!r} not in a user message ({label})"
