"""Thread history for paginated clients (the Codex TUI's resume path): items/list and items/read, read state,
resume cursors, turns/list before the first message. Every answer is checked against Codex's schema by the
client; the same tests pass against Codex 0.169 (PYCODEX_TEST_TARGET=codex)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn

PINNED = "01984de2-8f74-7c91-a3b2-5c5e937cf318"  # Codex's built-in section, the one the TUI asks for


async def _thread_with_turns(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path,
                             n: int) -> tuple[Any, str, list[str]]:
    model = await fake_model([{"output": [message(f"reply {i}")]} for i in range(n)])
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turns = [(await run_turn(client, thread_id, f"m{i}"))["id"] for i in range(n)]
    return client, thread_id, turns


async def test_before_the_first_message_turns_and_items_are_unavailable(
    app_server: Any, workspace: Path
) -> None:
    client = await app_server(experimental=True)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turns = await client.request("thread/turns/list", {"threadId": thread_id})
    assert turns["error"]["code"] == -32600
    assert turns["error"]["message"] == (f"thread {thread_id} is not materialized yet; thread/turns/list is "
                                         "unavailable before first user message")
    items = await client.request("thread/items/list", {"threadId": thread_id})
    assert items["error"]["code"] == -32601
    listed = await client.call("thread/list", {})
    assert thread_id not in [t["id"] for t in listed["data"]]  # never used: not listed, as in Codex


async def test_items_list_pages_forward_and_back_and_items_read_picks_by_id(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, thread_id, turns = await _thread_with_turns(app_server, fake_model, codex_home, workspace, 2)
    everything = await client.call("thread/items/list", {"threadId": thread_id})
    kinds = [(e["turnId"], e["item"]["type"]) for e in everything["data"]]
    assert kinds == [(turns[0], "userMessage"), (turns[0], "agentMessage"),
                     (turns[1], "userMessage"), (turns[1], "agentMessage")]
    assert everything["nextCursor"] is None and everything["backwardsCursor"]

    seen, cursor = [], None
    for _ in range(6):
        page = await client.call("thread/items/list", {"threadId": thread_id, "limit": 1, "cursor": cursor})
        seen += [e["item"]["id"] for e in page["data"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == [e["item"]["id"] for e in everything["data"]]

    last = await client.call("thread/items/list", {"threadId": thread_id, "turnId": turns[1],
                                                   "sortDirection": "desc", "limit": 1})
    assert last["data"][0]["item"]["type"] == "agentMessage"
    back = await client.call("thread/items/list", {"threadId": thread_id, "cursor": last["nextCursor"],
                                                   "turnId": turns[1], "sortDirection": "desc"})
    assert [e["item"]["type"] for e in back["data"]] == ["userMessage"]

    bad = await client.request("thread/items/list", {"threadId": thread_id, "cursor": "garbage"})
    assert bad["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_cursor"},
                            "message": "invalid cursor: garbage"}

    wanted = everything["data"][3]["item"]["id"]
    read = await client.call("thread/items/read", {"threadId": thread_id, "turnId": turns[1],
                                                   "itemIds": [wanted, "nosuch"]})
    assert [e["item"]["id"] for e in read["data"]] == [wanted]
    empty = await client.request("thread/items/read", {"threadId": thread_id, "turnId": turns[1], "itemIds": []})
    assert empty["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                              "message": "itemIds must contain 1 to 100 IDs"}


async def test_read_state_is_marked_read_with_its_revision_and_survives_a_restart(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, thread_id, turns = await _thread_with_turns(app_server, fake_model, codex_home, workspace, 1)
    changed = client.notifications("thread/readState/changed")[-1]["params"]["readState"]
    state = (await client.call("thread/read", {"threadId": thread_id}))["readState"]
    assert state == changed and state["firstUnread"] == {"type": "turn", "turnId": turns[0]}

    stale = await client.request("thread/readState/update", {
        "threadId": thread_id, "expectedRevision": "stale", "operation": {"type": "read"}})
    assert stale["error"]["message"] == "read state changed"
    assert stale["error"]["data"] == {"reason": "readStateConflict", "readState": state}

    done = await client.call("thread/readState/update", {
        "threadId": thread_id, "expectedRevision": state["revision"], "operation": {"type": "read"}})
    assert done["readState"]["firstUnread"] is None and done["readState"]["revision"] != state["revision"]
    note = await client.wait_notification("thread/readState/changed", lambda p: p["readState"] == done["readState"])
    assert note["params"]["threadId"] == thread_id
    listed = await client.call("thread/list", {})
    assert listed["readStates"][thread_id] == done["readState"]

    await client.close()
    again = await app_server(experimental=True)
    listed = await again.call("thread/list", {})
    assert listed["readStates"][thread_id]["firstUnread"] is None
    unread = await again.call("thread/readState/update", {
        "threadId": thread_id, "expectedRevision": listed["readStates"][thread_id]["revision"],
        "operation": {"type": "unread"}})
    assert unread["readState"]["firstUnread"] == {"type": "threadStart"}


async def test_resume_gives_collaboration_mode_and_backwards_cursors_that_page(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, thread_id, turns = await _thread_with_turns(app_server, fake_model, codex_home, workspace, 2)
    await client.close()
    other = await app_server(experimental=True)
    resumed = await other.call("thread/resume", {"threadId": thread_id, "excludeTurns": True})
    assert resumed["collaborationMode"]["mode"] == "default"
    assert resumed["collaborationMode"]["settings"]["model"] == "mock-model"
    assert resumed["thread"]["canAcceptDirectInput"] is True
    keys = list(resumed)
    assert keys.index("collaborationMode") + 1 == keys.index("multiAgentMode")
    # What the TUI sends next: the newest turns without items, then the items.
    page = await other.call("thread/turns/list", {"threadId": thread_id, "limit": 5, "sortDirection": "desc",
                                                  "itemsView": "notLoaded"})
    assert [t["id"] for t in page["data"]] == turns[::-1] and all(t["items"] == [] for t in page["data"])
    items = await other.call("thread/items/list", {"threadId": thread_id, "cursor": resumed["itemsBackwardsCursor"],
                                                   "sortDirection": "desc"})
    assert [e["item"]["type"] for e in items["data"]] == ["agentMessage", "userMessage"] * 2
    json.loads(resumed["turnsBackwardsCursor"])  # an opaque string, but ours is JSON like Codex's


async def test_turns_list_defaults_to_pages_of_25(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, thread_id, turns = await _thread_with_turns(app_server, fake_model, codex_home, workspace, 26)
    page = await client.call("thread/turns/list", {"threadId": thread_id})
    assert len(page["data"]) == 25 and page["nextCursor"]
    rest = await client.call("thread/turns/list", {"threadId": thread_id, "cursor": page["nextCursor"]})
    assert [t["id"] for t in rest["data"]] == [turns[0]]


async def test_thread_list_section_position_needs_a_section(app_server: Any) -> None:
    client = await app_server(experimental=True)
    missing = await client.request("thread/list", {"sortKey": "section_position"})
    assert missing["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                                "message": "section-position sorting requires a section filter"}
    empty = await client.call("thread/list", {"sortKey": "section_position", "sectionId": PINNED})
    assert empty["data"] == [] and empty["readStates"] == {}


async def test_whole_history_hydration_gets_a_deprecation_notice_and_resume_reports_the_goal(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, thread_id, _ = await _thread_with_turns(app_server, fake_model, codex_home, workspace, 1)
    await client.call("thread/read", {"threadId": thread_id, "includeTurns": True})
    note = await client.wait_notification("deprecationNotice")
    assert "omit `includeTurns`" in note["params"]["summary"]
    await client.close()
    other = await app_server(experimental=True)
    await other.call("thread/resume", {"threadId": thread_id})
    note = await other.wait_notification("deprecationNotice")
    assert "use `excludeTurns: true`" in note["params"]["summary"]
    await other.wait_notification("thread/goal/cleared", lambda p: p == {"threadId": thread_id})
    await other.call("thread/read", {"threadId": thread_id})
    await other.call("thread/resume", {"threadId": thread_id, "excludeTurns": True})
    assert len(other.notifications("deprecationNotice")) == 1


async def test_injected_items_reach_the_next_model_request_and_bad_ones_are_refused(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message("one")]}, {"output": [message("two")]}])
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, thread_id, "first")
    note = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "injected note"}]}
    assert await client.call("thread/inject_items", {"threadId": thread_id, "items": [note]}) == {}
    empty = await client.request("thread/inject_items", {"threadId": thread_id, "items": []})
    assert empty["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                              "message": "items must not be empty"}
    bad = await client.request("thread/inject_items", {"threadId": thread_id, "items": [{"bogus": 1}]})
    assert bad["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                            "message": "items[0] is not a valid response item: missing field `type`"}
    await run_turn(client, thread_id, "second")
    texts = json.dumps(model.requests()[-1]["body"]["input"])
    assert texts.index("injected note") < texts.index("second")
