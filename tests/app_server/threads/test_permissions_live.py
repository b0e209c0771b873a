"""Permission changes apply live, as Codex 0.169's: what the TUI's /permissions sends (a ``permissions``
profile id on thread/settings/update, then on each turn/start) is announced with thread/settings/updated and
enforced on the thread's next command and patch.

The TUI's request for "Read Only", recorded against Codex 0.169's app-server:
``{"permissions": ":read-only", "approvalPolicy": "on-request", "approvalsReviewer": "user", "sandboxPolicy":
null, ...}``; Codex answers ``{}`` and notifies ``sandboxPolicy: {"type": "readOnly", ...}`` with
``activePermissionProfile: {"id": ":read-only", "extends": null}``. The TUI holds the next prompt until that
notification comes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.errors import as_codex
from tests.support.fake_model import exec_call, message, model_config, run_turn
from tests.support.tools import skip_without_landlock

READ_ONLY_REASON = "patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings"
# What the 0.169 TUI sends for /permissions -> "Read Only" (its other fields are null).
TUI_READ_ONLY = {"disabledPluginIds": None, "cwd": None, "environments": None, "approvalPolicy": "on-request",
                 "approvalsReviewer": "user", "sandboxPolicy": None, "permissions": ":read-only", "model": None,
                 "effort": None, "summary": None, "collaborationMode": None, "multiAgentMode": None,
                 "personality": None}
needs_landlock = skip_without_landlock()


async def _settings_notes(client: Any, count: int) -> list[Any]:
    """The thread settings of the next ``count`` thread/settings/updated notifications (Codex may send one
    after its answer to the request that caused it)."""
    return [(await client.wait_notification("thread/settings/updated"))["params"]["threadSettings"]
            for _ in range(count)]


def _outputs(model: Any) -> dict[str, str]:
    return {i["call_id"]: i["output"] for r in model.requests() for i in r["body"].get("input", [])
            if i.get("type") in ("custom_tool_call_output", "function_call_output")}


async def _thread(client: Any, workspace: Path) -> str:
    started = await client.call("thread/start", {"cwd": str(workspace)})
    assert started["sandbox"]["type"] == "workspaceWrite"  # the fixture config says so
    thread_id: str = started["thread"]["id"]
    return thread_id


@needs_landlock
async def test_read_only_from_the_tui_is_announced_and_refuses_the_next_write(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [exec_call("c1", "printf hi > out.txt")]}, {"output": [message("done")]}])
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    tid = await _thread(client, workspace)

    assert await client.call("thread/settings/update", {"threadId": tid, **TUI_READ_ONLY}) == {}
    note = (await client.wait_notification("thread/settings/updated"))["params"]
    settings = note["threadSettings"]
    assert note["threadId"] == tid
    assert settings["sandboxPolicy"] == {"type": "readOnly", "networkAccess": False}
    assert settings["activePermissionProfile"] == {"id": ":read-only", "extends": None}
    assert (settings["approvalPolicy"], settings["approvalsReviewer"]) == ("on-request", "user")
    # The same selection again changes nothing: no second notification (Codex sends none either).
    assert await client.call("thread/settings/update", {"threadId": tid, **TUI_READ_ONLY}) == {}

    await run_turn(client, tid, "write", timeout=30)
    assert not (workspace / "out.txt").exists()
    output = _outputs(model)["c1"]
    assert "Process exited with code 1" in output and "out.txt" in output, output
    assert len(client.notifications("thread/settings/updated")) == 1
    read = await client.call("thread/read", {"threadId": tid})
    assert read["thread"]["id"] == tid


@needs_landlock
async def test_turn_start_permissions_apply_to_that_turn_and_are_announced_first(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: p.txt\n+p\n*** End Patch\nEOF\n"
    model = await fake_model([
        {"output": [exec_call("c1", "printf hi > out.txt")]},
        {"output": [exec_call("p1", patch)]},
        {"output": [message("ok")]},
    ])
    model_config(codex_home, model.url)  # approval never: a refused patch is not asked about
    client = await app_server(experimental=True)
    tid = await _thread(client, workspace)
    await run_turn(client, tid, "write", permissions=":read-only", timeout=30)
    assert not (workspace / "out.txt").exists() and not (workspace / "p.txt").exists()
    outputs = _outputs(model)
    assert "Process exited with code 1" in outputs["c1"], outputs["c1"]
    assert READ_ONLY_REASON in outputs["p1"], outputs["p1"]
    notes = client.notifications("thread/settings/updated")
    assert [n["params"]["threadSettings"]["activePermissionProfile"] for n in notes] == [
        {"id": ":read-only", "extends": None}]
    # announced before the turn/start answer, as Codex does
    methods = [m.get("method") or ("answer" if m.get("result", {}).get("turn") else None) for m in client.messages]
    assert methods.index("thread/settings/updated") < methods.index("answer")


async def test_write_succeeds_again_after_switching_back_to_workspace(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [exec_call("c1", "printf hi > out.txt")]}, {"output": [message("ok")]}])
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    tid = await _thread(client, workspace)
    await client.call("thread/settings/update", {"threadId": tid, "permissions": ":read-only"})
    await client.call("thread/settings/update", {"threadId": tid, "permissions": ":workspace"})
    notes = await _settings_notes(client, 2)
    assert [n["sandboxPolicy"]["type"] for n in notes] == ["readOnly", "workspaceWrite"]
    await run_turn(client, tid, "write", timeout=30)
    assert (workspace / "out.txt").read_text() == "hi"


async def test_a_sandbox_policy_clears_the_profile_and_bad_profiles_are_refused(
    app_server: Any, codex_home: Path, workspace: Path
) -> None:
    client = await app_server(experimental=True)
    tid = await _thread(client, workspace)
    await client.call("thread/settings/update", {"threadId": tid, "permissions": ":read-only"})
    await client.call("thread/settings/update", {"threadId": tid, "sandboxPolicy": {"type": "dangerFullAccess"}})
    notes = await _settings_notes(client, 2)
    assert [(n["sandboxPolicy"]["type"], n["activePermissionProfile"]) for n in notes] == [
        ("readOnly", {"id": ":read-only", "extends": None}), ("dangerFullAccess", None)]

    bogus = await client.request("thread/settings/update", {"threadId": tid, "permissions": ":bogus"})
    assert as_codex(bogus["error"]) == {"code": -32600, "message": "failed to load configuration: default_permissions "
                                                         "refers to unknown built-in profile `:bogus`"}
    both = await client.request("thread/settings/update", {"threadId": tid, "permissions": ":workspace",
                                                           "model": "other", "sandboxPolicy": {"type": "readOnly"}})
    assert as_codex(both["error"]) == {"code": -32600, "message": "`permissions` cannot be combined with `sandboxPolicy`"}
    started = await client.request("thread/start", {"cwd": str(workspace), "permissions": ":workspace",
                                                    "sandbox": "read-only"})
    assert as_codex(started["error"]) == {"code": -32600, "message": "`permissions` cannot be combined with `sandbox`"}
    # a refused update changed nothing: no notification, and the model is unchanged
    assert len(client.notifications("thread/settings/updated")) == 2
    read = await client.call("thread/read", {"threadId": tid})
    assert read["thread"]["model"] == "mock-model"


async def test_an_approval_policy_change_asks_before_the_next_command(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    """/approvals (or /permissions' approval half): from never to untrusted, the next write is asked about."""
    model = await fake_model([{"output": [exec_call("c1", "printf hi > asked.txt")]}, {"output": [message("ok")]}])
    model_config(codex_home, model.url)  # approval never
    client = await app_server(experimental=True)
    tid = await _thread(client, workspace)
    await client.call("thread/settings/update", {"threadId": tid, "approvalPolicy": "untrusted"})
    assert (await _settings_notes(client, 1))[0]["approvalPolicy"] == "untrusted"
    turn = (await client.call("turn/start", {"threadId": tid, "input": [{"type": "text", "text": "w"}]}))["turn"]
    request = await client.wait_server_request("item/commandExecution/requestApproval")
    assert request["params"]["itemId"] == "c1"
    await client.respond(request["id"], {"decision": "decline"})
    await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == turn["id"], timeout=30)
    assert not (workspace / "asked.txt").exists()
