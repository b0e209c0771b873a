"""thread/turns/list pages through a thread's turns with cursors, as Codex does."""

from __future__ import annotations

from pathlib import Path

from tests.support.fake_model import message, model_config


async def test_turns_list_pages_newest_first_with_next_and_backwards_cursors(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [message(f"reply {i}")]} for i in range(3)])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn_ids = []
    for i in range(3):
        turn = (await client.call("turn/start", {"threadId": thread_id,
                                                 "input": [{"type": "text", "text": f"m{i}"}]}))["turn"]
        turn_ids.append(turn["id"])
        await client.wait_notification("turn/completed", lambda p, t=turn["id"]: p["turn"]["id"] == t, timeout=20)

    seen, cursor = [], None
    for _ in range(5):
        params = {"threadId": thread_id, "limit": 1, **({"cursor": cursor} if cursor else {})}
        page = await client.call("thread/turns/list", params)
        seen += [t["id"] for t in page["data"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == list(reversed(turn_ids))

    first = await client.call("thread/turns/list", {"threadId": thread_id, "limit": 1})
    back = await client.call("thread/turns/list", {"threadId": thread_id, "limit": 2, "sortDirection": "asc",
                                                   "cursor": first["backwardsCursor"]})
    assert [t["id"] for t in back["data"]] == [turn_ids[2]]  # the anchor itself, then nothing newer

    asc = await client.call("thread/turns/list", {"threadId": thread_id, "sortDirection": "asc", "limit": 2})
    assert [t["id"] for t in asc["data"]] == turn_ids[:2] and asc["nextCursor"]
    bad = await client.request("thread/turns/list", {"threadId": thread_id, "cursor": "garbage"})
    assert bad["error"]["message"] == "invalid cursor: garbage"
