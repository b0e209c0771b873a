"""thread/goal/* and thread/backgroundTerminals/*, and the tools a title thread offers (none). Answers are
checked against Codex's schema; the goal and terminal tests pass against Codex 0.169 too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import exec_call, message, model_config, run_turn

MISSING = "00000000-0000-7000-8000-000000000000"


async def _started(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path,
                   script: list[Any]) -> tuple[Any, Any, str]:
    model = await fake_model(script)
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    return client, model, thread_id


async def test_goal_set_get_clear_with_notifications(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, _, thread_id = await _started(app_server, fake_model, codex_home, workspace,
                                          [{"output": [message("hi")]}])
    await run_turn(client, thread_id, "hello")
    assert await client.call("thread/goal/get", {"threadId": thread_id}) == {"goal": None}
    no_goal = await client.request("thread/goal/set", {"threadId": thread_id, "status": "paused"})
    assert no_goal["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                "message": f"cannot update goal for thread {thread_id}: no goal exists"}

    goal = (await client.call("thread/goal/set", {"threadId": thread_id, "objective": "ship it",
                                                  "status": "paused"}))["goal"]
    assert (goal["objective"], goal["status"], goal["tokensUsed"]) == ("ship it", "paused", 0)
    note = await client.wait_notification("thread/goal/updated")
    assert note["params"] == {"threadId": thread_id, "turnId": None, "goal": goal}
    budget = (await client.call("thread/goal/set", {"threadId": thread_id, "tokenBudget": 1000}))["goal"]
    assert (budget["objective"], budget["status"], budget["tokenBudget"]) == ("ship it", "paused", 1000)
    assert (await client.call("thread/goal/get", {"threadId": thread_id}))["goal"] == budget

    assert await client.call("thread/goal/clear", {"threadId": thread_id}) == {"cleared": True}
    await client.wait_notification("thread/goal/cleared", lambda p: p == {"threadId": thread_id})
    assert await client.call("thread/goal/clear", {"threadId": thread_id}) == {"cleared": False}

    missing = await client.request("thread/goal/get", {"threadId": MISSING})
    assert missing["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
                                "message": f"thread not found: {MISSING}"}


async def test_background_terminal_is_listed_and_terminated(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    script = [{"output": [exec_call("c1", "sleep 30", yield_time_ms=250)]}, {"output": [message("started")]}]
    client, _, thread_id = await _started(app_server, fake_model, codex_home, workspace, script)
    await run_turn(client, thread_id, "start a long command", timeout=30)
    listed = await client.call("thread/backgroundTerminals/list", {"threadId": thread_id})
    assert len(listed["data"]) == 1 and "sleep 30" in listed["data"][0]["command"]
    terminal = listed["data"][0]
    bad = await client.request("thread/backgroundTerminals/terminate", {"threadId": thread_id, "processId": "x"})
    assert bad["error"]["code"] == -32600
    done = await client.call("thread/backgroundTerminals/terminate",
                             {"threadId": thread_id, "processId": terminal["processId"]})
    assert done == {"terminated": True}
    again = await client.call("thread/backgroundTerminals/terminate",
                              {"threadId": thread_id, "processId": terminal["processId"]})
    assert again == {"terminated": False}
    assert (await client.call("thread/backgroundTerminals/list", {"threadId": thread_id}))["data"] == []
    assert await client.call("thread/backgroundTerminals/clean", {"threadId": thread_id}) == {}
    missing = await client.request("thread/backgroundTerminals/list", {"threadId": MISSING})
    assert missing["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
                                "message": f"thread not found: {MISSING}"}


async def test_title_thread_without_environments_offers_the_model_no_tools(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message('{"title":"T"}')]}, {"output": [message("ok")]}])
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    title = await client.call("thread/start", {
        "cwd": str(workspace), "ephemeral": True, "threadSource": "thread_title", "environments": [],
        "sandbox": "read-only", "config": {"features.shell_tool": False},
    })
    assert title["thread"]["environments"] == []
    await run_turn(client, title["thread"]["id"], "name this")
    shell_off = await client.call("thread/start", {"cwd": str(workspace),
                                                   "config": {"features.shell_tool": False}})
    await run_turn(client, shell_off["thread"]["id"], "hello")
    for request in model.requests()[-2:]:  # Codex keeps non-command tools unless their features are off too
        names = {t.get("name") for t in request["body"].get("tools", [])}
        assert not names & {"exec_command", "write_stdin", "shell"}, names
