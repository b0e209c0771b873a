"""Thread lifecycle around real turns: resume in a new process, fork, list, read, archive, names, subscriptions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_model import exec_call, message, model_config, run_turn


def _replies(*texts: str) -> dict[str, Any]:
    """One message reply per text, then the last one again for any further request."""
    return {
        "responses": [{"output": [message(t, item_id=f"msg_{i}")]} for i, t in enumerate(texts)],
        "when_exhausted": "repeat_last",
    }




def _user_texts(body: dict[str, Any]) -> list[str]:
    return [
        c.get("text", "")
        for i in body["input"]
        if i.get("type") == "message" and i.get("role") == "user"
        for c in i["content"]
    ]


def _metadata(request: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(request["headers"]["x-codex-turn-metadata"])
    return meta


async def test_resume_in_a_new_process_returns_every_completed_turn_and_item(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        {
            "responses": [
                {"output": [exec_call("call_a", "echo resumed-output")]},
                {"output": [message("first done", item_id="msg_a")]},
                {"output": [message("second done", item_id="msg_b")]},
                {"output": [message("third done", item_id="msg_c")]},
            ]
        }
    )
    model_config(codex_home, model.url)
    first = await app_server()
    thread_id = (await first.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    t1 = await run_turn(first, thread_id, "turn one")
    t2 = await run_turn(first, thread_id, "turn two")
    assert t1["status"] == t2["status"] == "completed"
    completed = [m["params"] for m in first.notifications("item/completed")]
    ids_by_turn: dict[str, list[str]] = {}
    for note in completed:
        ids_by_turn.setdefault(note["turnId"], []).append(note["item"]["id"])
    assert await first.close() == 0

    second = await app_server()
    resumed = await second.call("thread/resume", {"threadId": thread_id})
    thread = resumed["thread"]
    assert thread["id"] == thread_id and thread["preview"] == "turn one"
    turns = thread["turns"]
    assert [t["id"] for t in turns] == [t1["id"], t2["id"]]
    assert all(t["status"] == "completed" and t["error"] is None for t in turns)
    assert [[i["type"] for i in t["items"]] for t in turns] == [
        ["userMessage", "commandExecution", "agentMessage"],
        ["userMessage", "agentMessage"],
    ]
    assert [[i["id"] for i in t["items"]] for t in turns] == [ids_by_turn[t1["id"]], ids_by_turn[t2["id"]]]
    command = turns[0]["items"][1]
    assert command["id"] == "call_a" and command["exitCode"] == 0
    assert "resumed-output" in command["aggregatedOutput"]
    assert turns[0]["items"][2]["text"] == "first done"
    status = await second.wait_notification("thread/status/changed", lambda p: p["threadId"] == thread_id)
    assert status["params"]["status"] == {"type": "idle"}
    usage = await second.wait_notification("thread/tokenUsage/updated")
    assert usage["params"]["tokenUsage"]["total"]["totalTokens"] == 45
    assert not second.notifications("thread/started")

    # Resuming an already-loaded thread answers at once, with the same thread.
    again = await second.call("thread/resume", {"threadId": thread_id}, timeout=5)
    assert again["thread"]["id"] == thread_id and len(again["thread"]["turns"]) == 2

    t3 = await run_turn(second, thread_id, "turn three")
    assert t3["status"] == "completed" and t3["items"][0]["text"] == "third done"
    request = model.requests()[-1]
    assert _metadata(request)["history_initialization"] == "cold_resume"
    texts = _user_texts(request["body"])
    assert texts[-3:] == ["turn one", "turn two", "turn three"] or [
        t for t in texts if t.startswith("turn ")
    ] == ["turn one", "turn two", "turn three"]
    outputs = [i for i in request["body"]["input"] if i.get("type") == "function_call_output"]
    assert [o["call_id"] for o in outputs] == ["call_a"] and "resumed-output" in outputs[0]["output"]
    calls = [i for i in request["body"]["input"] if i.get("type") == "function_call"]
    assert [c["call_id"] for c in calls] == ["call_a"]


async def test_resume_of_an_unknown_thread_is_a_clear_error(app_server, codex_home: Path) -> None:
    client = await app_server()
    missing = "01a22b0e-0000-7000-8000-000000000001"
    bad = await client.request("thread/resume", {"threadId": missing})
    assert bad["error"]["code"] == -32600
    assert bad["error"]["message"] == f"no rollout found for thread id {missing}"
    bad_fork = await client.request("thread/fork", {"threadId": missing})
    assert bad_fork["error"]["message"] == f"no rollout found for thread id {missing}"
    bad_read = await client.request("thread/read", {"threadId": missing})
    assert bad_read["error"]["message"] == f"thread not loaded: {missing}"


async def test_fork_copies_turns_and_the_model_sees_the_copied_history(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(_replies("source reply", "fork reply", "source again"))
    model_config(codex_home, model.url)
    client = await app_server()
    source_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, source_id, "source question")
    await client.call("thread/name/set", {"threadId": source_id, "name": "the source"})
    forked = await client.call("thread/fork", {"threadId": source_id})
    fork = forked["thread"]
    assert fork["id"] != source_id and fork["forkedFromId"] == source_id
    assert fork["name"] == "the source"
    assert [[i["type"] for i in t["items"]] for t in fork["turns"]] == [["userMessage", "agentMessage"]]
    started = await client.wait_notification("thread/started", lambda p: p["thread"]["id"] == fork["id"])
    assert started["params"]["thread"]["forkedFromId"] == source_id

    final = await run_turn(client, fork["id"], "fork question")
    assert final["status"] == "completed"
    request = model.requests()[-1]
    assert _metadata(request)["history_initialization"] == "warm_fork"
    assert request["headers"]["session-id"] == fork["id"]
    texts = [t for t in _user_texts(request["body"]) if t.endswith("question")]
    assert texts == ["source question", "fork question"]
    assistant = [
        c["text"] for i in request["body"]["input"] if i.get("role") == "assistant" for c in i["content"]
    ]
    assert assistant == ["source reply"]

    # The source thread is untouched by the fork's turn.
    await run_turn(client, source_id, "source follow-up")
    texts = [t for t in _user_texts(model.requests()[-1]["body"]) if "question" in t or "follow-up" in t]
    assert texts == ["source question", "source follow-up"]
    loaded = (await client.call("thread/loaded/list", {}))["data"]
    assert sorted(loaded) == sorted([source_id, fork["id"]])


async def test_list_read_names_archive_and_subscriptions(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(_replies("ok"))
    model_config(codex_home, model.url)
    sub = workspace / "sub"
    sub.mkdir()
    client = await app_server()
    ids = []
    for text, cwd in (("alpha apples", workspace), ("beta bananas", workspace), ("gamma grapes", sub)):
        thread_id = (await client.call("thread/start", {"cwd": str(cwd)}))["thread"]["id"]
        await run_turn(client, thread_id, text)
        ids.append(thread_id)
    ephemeral = (await client.call("thread/start", {"cwd": str(workspace), "ephemeral": True}))["thread"]
    assert ephemeral["ephemeral"] is True and ephemeral["path"] is None
    await run_turn(client, ephemeral["id"], "ephemeral words")

    listed = await client.call("thread/list", {})
    assert [t["id"] for t in listed["data"]] == ids[::-1]  # newest first
    assert [t["preview"] for t in listed["data"]] == ["gamma grapes", "beta bananas", "alpha apples"]
    assert set(listed["readStates"]) == set(ids)
    page1 = await client.call("thread/list", {"limit": 2})
    assert [t["id"] for t in page1["data"]] == [ids[2], ids[1]] and page1["nextCursor"]
    page2 = await client.call("thread/list", {"limit": 2, "cursor": page1["nextCursor"]})
    assert [t["id"] for t in page2["data"]] == [ids[0]] and page2["nextCursor"] is None
    by_cwd = await client.call("thread/list", {"cwd": str(sub)})
    assert [t["id"] for t in by_cwd["data"]] == [ids[2]]
    found = await client.call("thread/list", {"searchTerm": "bananas"})
    assert [t["id"] for t in found["data"]] == [ids[1]]
    # A later turn moves the first thread to the front when sorting by update time.
    await run_turn(client, ids[0], "alpha again")
    by_update = await client.call("thread/list", {"sortKey": "updated_at"})
    assert by_update["data"][0]["id"] == ids[0]
    assert [t["id"] for t in (await client.call("thread/list", {"sortKey": "created_at"}))["data"]] == ids[
        ::-1
    ]

    read = await client.call("thread/read", {"threadId": ids[1], "includeTurns": True})
    assert read["thread"]["status"] == {"type": "idle"}
    (turn,) = read["thread"]["turns"]
    assert turn["itemsView"] == "full" and [i["type"] for i in turn["items"]] == [
        "userMessage",
        "agentMessage",
    ]
    assert (await client.call("thread/read", {"threadId": ids[1]}))["thread"]["turns"] == []
    listed_turns = (await client.call("thread/turns/list", {"threadId": ids[0]}))["data"]
    # Newest first; the summary view holds the user message and the final agent message.
    assert [t["status"] for t in listed_turns] == ["completed", "completed"]
    assert all(t["itemsView"] == "summary" for t in listed_turns)
    assert [[i.get("text") or i["content"][0]["text"] for i in t["items"]] for t in listed_turns] == [
        ["alpha again", "ok"],
        ["alpha apples", "ok"],
    ]
    oldest_first = await client.call("thread/turns/list", {"threadId": ids[0], "sortDirection": "asc"})
    assert [t["id"] for t in oldest_first["data"]] == [t["id"] for t in listed_turns[::-1]]

    assert await client.call("thread/name/set", {"threadId": ids[1], "name": "Banana work"}) == {}
    named = await client.wait_notification("thread/name/updated")
    assert named["params"] == {"threadId": ids[1], "threadName": "Banana work"}
    assert (await client.call("thread/read", {"threadId": ids[1]}))["thread"]["name"] == "Banana work"

    rollout = Path((await client.call("thread/read", {"threadId": ids[1]}))["thread"]["path"])
    assert rollout.is_file()
    assert await client.call("thread/archive", {"threadId": ids[1]}) == {}
    gone = await client.wait_notification(
        "thread/status/changed", lambda p: p["threadId"] == ids[1] and p["status"]["type"] == "notLoaded"
    )
    assert gone is not None
    await client.wait_notification("thread/archived", lambda p: p["threadId"] == ids[1])
    assert not rollout.exists()
    archived_files = list((codex_home / "archived_sessions").rglob(f"*{ids[1]}*.jsonl"))
    assert len(archived_files) == 1
    assert ids[1] not in [t["id"] for t in (await client.call("thread/list", {}))["data"]]
    assert [t["id"] for t in (await client.call("thread/list", {"archived": True}))["data"]] == [ids[1]]
    assert ids[1] not in (await client.call("thread/loaded/list", {}))["data"]
    unarchived = await client.call("thread/unarchive", {"threadId": ids[1]})
    assert unarchived["thread"]["id"] == ids[1] and unarchived["thread"]["name"] == "Banana work"
    await client.wait_notification("thread/unarchived", lambda p: p["threadId"] == ids[1])
    assert ids[1] in [t["id"] for t in (await client.call("thread/list", {}))["data"]]
    assert not list((codex_home / "archived_sessions").rglob(f"*{ids[1]}*.jsonl"))

    loaded = (await client.call("thread/loaded/list", {}))["data"]
    assert sorted(loaded) == sorted([ids[0], ids[2], ephemeral["id"]])
    assert await client.call("thread/unsubscribe", {"threadId": ids[2]}) == {"status": "unsubscribed"}
    assert await client.call("thread/unsubscribe", {"threadId": ids[2]}) == {"status": "notSubscribed"}
    assert await client.call("thread/unsubscribe", {"threadId": ids[1]}) == {"status": "notLoaded"}


async def test_a_turn_in_progress_is_shown_and_archiving_interrupts_it(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        [
            {"output": [message("one")]},
            {"output": [message("never")], "stall_after": 2, "stall_s": 20},
            {"output": [message("after unarchive")]},
        ]
    )
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    first = await run_turn(client, thread_id, "x")
    busy = (
        await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "y"}]})
    )["turn"]
    await client.wait_notification(
        "item/started",
        lambda p: p["turnId"] == busy["id"] and p["item"]["type"] == "agentMessage",
        timeout=10,
    )

    def shape(turns: list[dict[str, Any]]) -> list[tuple[str, str, list[str]]]:
        return [(t["id"], t["status"], [i["type"] for i in t["items"]]) for t in turns]

    expected = [
        (first["id"], "completed", ["userMessage", "agentMessage"]),
        (busy["id"], "inProgress", ["userMessage"]),
    ]
    read = await client.call("thread/read", {"threadId": thread_id, "includeTurns": True})
    assert shape(read["thread"]["turns"]) == expected
    assert read["thread"]["status"] == {"type": "active", "activeFlags": []}
    resumed = await client.call("thread/resume", {"threadId": thread_id})
    assert shape(resumed["thread"]["turns"]) == expected
    listed = (await client.call("thread/turns/list", {"threadId": thread_id}))["data"]
    assert [(t["id"], t["status"]) for t in listed] == [
        (busy["id"], "inProgress"),
        (first["id"], "completed"),
    ]

    assert await client.call("thread/archive", {"threadId": thread_id}) == {}
    done = await client.wait_notification("turn/completed", lambda p: p["turn"]["id"] == busy["id"])
    assert done["params"]["turn"]["status"] == "interrupted"
    await client.wait_notification("thread/archived")
    methods = [m["method"] for m in client.notifications()]
    assert methods.index("thread/archived") > len(methods) - 4
    assert (await client.call("thread/loaded/list", {}))["data"] == []
    await client.call("thread/unarchive", {"threadId": thread_id})
    again = await client.call("thread/resume", {"threadId": thread_id})
    assert [t["status"] for t in again["thread"]["turns"]] == ["completed", "interrupted"]
    final = await run_turn(client, thread_id, "z")
    assert final["status"] == "completed" and final["items"][0]["text"] == "after unarchive"


async def test_resume_keeps_a_failed_turn_applies_overrides_and_ephemeral_threads_are_gone(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model(
        {
            "responses": [{"status": 500, "body": "x"}, {"output": [message("ok")]}],
            "when_exhausted": "repeat_last",
        }
    )
    model_config(codex_home, model.url)
    first = await app_server()
    thread_id = (await first.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    ephemeral = (await first.call("thread/start", {"cwd": str(workspace), "ephemeral": True}))["thread"]["id"]
    failed = await run_turn(first, thread_id, "x")
    assert failed["status"] == "failed"
    assert (await run_turn(first, ephemeral, "x"))["status"] == "completed"
    assert await first.close() == 0

    second = await app_server()
    resumed = await second.call("thread/resume", {"threadId": thread_id, "model": "resumed-model"})
    assert resumed["model"] == "resumed-model" and resumed["thread"]["status"] == {"type": "idle"}
    (turn,) = resumed["thread"]["turns"]
    assert turn["status"] == "failed" and turn["error"] == failed["error"]
    assert (await run_turn(second, thread_id, "y"))["status"] == "completed"
    assert model.requests()[-1]["body"]["model"] == "resumed-model"
    gone = await second.request("thread/resume", {"threadId": ephemeral})
    assert gone["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": ephemeral},
                             "message": f"no rollout found for thread id {ephemeral}"}
    unread = await second.request("thread/read", {"threadId": ephemeral})
    assert unread["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_loaded", "threadId": ephemeral},
                               "message": f"thread not loaded: {ephemeral}"}
