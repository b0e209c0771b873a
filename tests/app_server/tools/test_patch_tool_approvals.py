"""apply_patch approvals (``item/fileChange/requestApproval``): the order Codex 0.169 uses, and each decision.

The sequences asserted here were recorded from Codex 0.169's app-server on the same scripts (decline,
acceptForSession then an unasked second patch to the same file, cancel).
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.app_server.tools.test_patch_tool import file_items, outputs, patch_call, patch_of
from tests.support.fake_model import message, model_config


@pytest.fixture
def outside_dir() -> Iterator[Path]:
    path = Path("/var/tmp") / f"pycodex-patch-approval-{uuid.uuid4().hex}"
    path.mkdir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def _turn(client: Any, thread_id: str, text: str, decision: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Start a turn, answer its one patch approval with ``decision``; the request and the ended turn."""
    turn_id = (await client.call("turn/start", {"threadId": thread_id,
                                                "input": [{"type": "text", "text": text}]}))["turn"]["id"]
    request = await client.wait_server_request("item/fileChange/requestApproval", timeout=15)
    await client.respond(request["id"], {"decision": decision})
    done = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=15)
    turn: dict[str, Any] = done["params"]["turn"]
    return request, turn


_WATCHED = {"thread/status/changed", "item/started", "item/completed", "item/fileChange/requestApproval",
            "serverRequest/resolved", "turn/completed", "turn/diff/updated"}


def _sequence(client: Any, item_id: str) -> list[str]:
    """The methods around one patch: its item, the request, statuses, until the turn's next item or end."""
    seq: list[str] = []
    on = False
    for m in client.messages:
        method = m.get("method")
        params = m.get("params") or {}
        if method == "item/started" and params.get("item", {}).get("id") == item_id:
            on = True
        if not on or method not in _WATCHED:
            continue
        if method == "thread/status/changed":
            status = params["status"]
            seq.append(f"status:{status['type']}:{','.join(status.get('activeFlags', []))}")
        elif method in ("item/started", "item/completed"):
            if params["item"]["type"] != "fileChange":
                break
            seq.append(f"{method}:{params['item']['status']}")
        else:
            seq.append(method)
        if method in ("turn/completed", "turn/diff/updated"):
            break
    return seq


async def test_decline_accept_for_session_and_cancel(
    app_server, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    model = await fake_model([
        {"output": [patch_call("dec", patch_of(f"*** Add File: {outside_dir}/d.txt\n+d\n"))]},
        {"output": [message("d")]},
        {"output": [patch_call("acc", patch_of(f"*** Add File: {outside_dir}/s.txt\n+s\n",
                                               "*** Update File: a.txt\n@@\n-one\n+uno\n"))]},
        {"output": [patch_call("acc2", patch_of(f"*** Update File: {outside_dir}/s.txt\n@@\n-s\n+t\n"))]},
        {"output": [message("a")]},
        {"output": [patch_call("can", patch_of(f"*** Add File: {outside_dir}/c.txt\n+c\n"))]},
        {"output": [message("never reached")]},
        {"output": [message("after")]},
    ])
    model_config(codex_home, model.url, approval_policy="on-request")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]

    request, turn = await _turn(client, thread_id, "1", "decline")
    assert request["params"] == {"threadId": thread_id, "turnId": turn["id"], "itemId": "dec",
                                 "startedAtMs": request["params"]["startedAtMs"], "reason": None, "grantRoot": None}
    assert turn["status"] == "completed" and not (outside_dir / "d.txt").exists()
    assert _sequence(client, "dec") == [
        "item/started:inProgress", "status:active:waitingOnApproval", "item/fileChange/requestApproval",
        "serverRequest/resolved", "status:active:",
        "item/completed:declined",
    ]

    request, turn = await _turn(client, thread_id, "2", "acceptForSession")
    assert request["params"]["itemId"] == "acc" and turn["status"] == "completed"
    assert (outside_dir / "s.txt").read_text() == "t\n"  # the second patch to s.txt was not asked
    assert (workspace / "a.txt").read_text() == "uno\ntwo\n"
    assert _sequence(client, "acc") == [
        "item/started:inProgress", "status:active:waitingOnApproval", "item/fileChange/requestApproval",
        "serverRequest/resolved", "status:active:",
        "item/completed:completed", "turn/diff/updated",
    ]
    assert _sequence(client, "acc2") == ["item/started:inProgress", "item/completed:completed", "turn/diff/updated"]
    diff = client.notifications("turn/diff/updated")[-1]["params"]["diff"]
    assert diff.startswith(f"diff --git a/{outside_dir}/s.txt b/{outside_dir}/s.txt\nnew file mode 100644\n")
    assert "diff --git a/a.txt b/a.txt\n" in diff

    request, turn = await _turn(client, thread_id, "3", "cancel")
    assert turn["status"] == "interrupted" and not (outside_dir / "c.txt").exists()
    # Codex ends the turn with the item still open: no item/completed for it.
    assert _sequence(client, "can") == [
        "item/started:inProgress", "status:active:waitingOnApproval", "item/fileChange/requestApproval",
        "serverRequest/resolved", "status:active:",
        "status:idle:", "turn/completed",
    ]
    assert [i["id"] for i in file_items(client, "item/completed")] == ["dec", "acc", "acc2"]

    turn_id = (await client.call("turn/start", {"threadId": thread_id,
                                                "input": [{"type": "text", "text": "4"}]}))["turn"]["id"]
    await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn_id, timeout=15)
    out = outputs(model)
    assert out["dec"] == "patch rejected by user"
    assert out["acc"].endswith(f"Success. Updated the following files:\nA {outside_dir}/s.txt\nM a.txt\n")
    assert out["acc2"].endswith(f"Success. Updated the following files:\nM {outside_dir}/s.txt\n")
    assert out["can"] == "patch rejected by user"
    assert len(client.server_requests) == 3


async def test_read_only_on_request_asks_and_applies_once_accepted(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([
        {"output": [patch_call("ro", patch_of("*** Add File: x.txt\n+x\n"))]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url, approval_policy="on-request", sandbox_mode="read-only")
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    request, turn = await _turn(client, thread_id, "write", "accept")
    assert request["params"]["itemId"] == "ro" and turn["status"] == "completed"
    assert (workspace / "x.txt").read_text() == "x\n"
    assert outputs(model)["ro"].endswith("Success. Updated the following files:\nA x.txt\n")
