"""thread/approveGuardianDeniedAction: malformed events get Codex 0.169's errors (texts seen from the binary),
a non-denial is accepted and ignored, and a denial reaches the model as a developer message on the next turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import ok_model, run_turn

MISSING = "00000000-0000-7000-8000-000000000000"
DENIED = {"id": "r1", "turn_id": "t", "status": "denied", "risk_level": "high",
          "action": {"type": "command", "source": "unified_exec", "command": "rm -rf build", "cwd": "/tmp"}}
PREFIX = "invalid Guardian denial event: "


async def test_guardian_override(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path) -> None:
    model = await ok_model(fake_model, codex_home)
    client = await app_server(experimental=True)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    cases = [
        ({}, "missing field `id`"),
        ({"id": "x"}, "missing field `status`"),
        ({"id": "x", "status": "nope", "action": {}},
         "unknown variant `nope`, expected one of `in_progress`, `approved`, `denied`, `timed_out`, `aborted`"),
        ("bad", 'invalid type: string "bad", expected struct GuardianAssessmentEvent'),
    ]
    for event, why in cases:
        refused = await client.request("thread/approveGuardianDeniedAction", {"threadId": tid, "event": event})
        assert refused["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                    "message": PREFIX + why}
    unknown = await client.request("thread/approveGuardianDeniedAction", {"threadId": MISSING, "event": DENIED})
    assert unknown["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
                                "message": f"thread not found: {MISSING}"}

    approved = dict(DENIED, status="approved", action=dict(DENIED["action"], command="echo approved"))
    assert await client.call("thread/approveGuardianDeniedAction", {"threadId": tid, "event": approved}) == {}
    assert await client.call("thread/approveGuardianDeniedAction", {"threadId": tid, "event": DENIED}) == {}
    await run_turn(client, tid, "retry")
    texts = [part.get("text", "") for item in model.requests()[-1]["body"]["input"]
             if item.get("role") == "developer" for part in item.get("content") or []]
    overrides = [t for t in texts if "rm -rf build" in t]
    assert len(overrides) == 1 and '"outcome": "allowed"' in overrides[0]
    assert not any("echo approved" in t for t in texts)  # a non-denial changes nothing
