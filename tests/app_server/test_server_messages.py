"""The models of app_server/protocol/server_messages.py describe what the server builds, key for key."""

from __future__ import annotations

import json

import pytest
from mcp.types import Tool

from app_server.config.mcp_servers import ApprovalMode
from app_server.mcp.approval import approval_request_params
from app_server.protocol.base import to_wire
from app_server.protocol.server_messages import ALL_SERVER_REQUESTS, SERVER_NOTIFICATIONS
from pycodex.json_types import JsonObj


def _round_trip(model_params: JsonObj, model: type) -> str:
    return json.dumps(to_wire(model.model_validate(model_params)))


@pytest.mark.parametrize("mode", ["auto", "prompt"])
def test_the_mcp_approval_request_is_the_modelled_form_elicitation(mode: ApprovalMode) -> None:
    tool = Tool(name="add", description="adds", inputSchema={"type": "object"})
    params = approval_request_params("t1", "u1", "calc", tool, {"a": 1}, mode)
    model, answer = ALL_SERVER_REQUESTS["mcpServer/elicitation/request"]
    assert _round_trip(params, model) == json.dumps(params)
    assert answer.model_validate({"action": "accept", "content": None, "_meta": {"persist": "session"}}).meta == {
        "persist": "session"}


def test_handler_shaped_notifications_round_trip() -> None:
    # The literal shapes the handlers write (app_server/handlers/{accounts,commands,fs,plugins,misc}.py).
    samples: dict[str, JsonObj] = {
        "account/login/completed": {"loginId": None, "success": True, "error": None, "onboardingEntrypoint": None},
        "account/updated": {"authMode": "apikey", "planType": None},
        "command/exec/outputDelta": {"processId": "s1", "stream": "stdout", "deltaBase64": "aGk=", "capReached": False},
        "process/outputDelta": {"processHandle": "p", "stream": "stderr", "deltaBase64": "", "capReached": True},
        "process/exited": {"processHandle": "p1", "exitCode": 0, "outputDrainTimedOut": False, "stdout": "a\n",
                           "stdoutCapReached": False, "stderr": "b\n", "stderrCapReached": False},
        "fs/changed": {"watchId": "w", "changedPaths": ["/tmp/x"]},
        "skills/changed": {},
        "windowsSandbox/setupCompleted": {"mode": "elevated", "success": False, "error": "only on Windows"},
    }
    for method, params in samples.items():
        assert _round_trip(params, SERVER_NOTIFICATIONS[method]) == json.dumps(params), method
