"""Thread sections, moving threads between them, thread/list by section position, thread/delete and
thread/metadata/update. Passes against Codex 0.169 too (PYCODEX_TEST_TARGET=codex)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn

PINNED = "01984de2-8f74-7c91-a3b2-5c5e937cf318"  # Codex's built-in section
MISSING = "00000000-0000-7000-8000-000000000000"


async def _threads(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, n: int) -> tuple[Any, list[str]]:
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    ids = []
    for i in range(n):
        thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
        await run_turn(client, thread_id, f"thread {i}")
        ids.append(thread_id)
    return client, ids


async def test_sections_create_rename_move_list_and_delete(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, (a, b, c) = await _threads(app_server, fake_model, codex_home, workspace, 3)
    listed = (await client.call("threadSection/list", {}))["data"]
    assert listed[0]["id"] == PINNED and listed[0]["name"] == "Pinned"
    work = (await client.call("threadSection/create", {"name": "Work"}))["section"]
    renamed = (await client.call("threadSection/update", {"sectionId": work["id"], "name": "Jobs",
                                                          "appearance": {"color": "red"}}))["section"]
    assert renamed["id"] == work["id"] and renamed["name"] == "Jobs" and renamed["appearance"]["color"] == "red"
    assert [s["name"] for s in (await client.call("threadSection/list", {}))["data"]][-1] == "Jobs"

    for thread_id in (a, b):
        assert await client.call("thread/section/move", {"threadId": thread_id, "sectionId": work["id"]}) == {}
        await client.wait_notification("thread/section/changed",
                                       lambda p, t=thread_id: p == {"threadId": t, "sectionId": work["id"]})
    await client.call("thread/section/move", {"threadId": c, "sectionId": work["id"], "beforeThreadId": a})
    page = await client.call("thread/list", {"sortKey": "section_position", "sectionId": work["id"]})
    assert [t["id"] for t in page["data"]] == [c, a, b]
    assert all(t["section"]["id"] == work["id"] for t in page["data"])
    assert set(page["readStates"]) == {a, b, c}

    await client.call("thread/section/move", {"threadId": a, "sectionId": None})
    page = await client.call("thread/list", {"sortKey": "section_position", "sectionId": work["id"]})
    assert [t["id"] for t in page["data"]] == [c, b]

    assert await client.call("threadSection/delete", {"sectionId": work["id"]}) == {}
    for method, params in (("threadSection/update", {"sectionId": work["id"], "name": "x"}),
                           ("threadSection/delete", {"sectionId": work["id"]})):
        gone = await client.request(method, params)
        assert gone["error"] == {"code": -32602, "data": {"appErrorCode": "invalid_params"},
                                 "message": f"thread section not found: {work['id']}"}
    missing = await client.request("thread/list", {"sortKey": "section_position"})
    assert missing["error"]["message"] == "section-position sorting requires a section filter"


async def test_thread_delete_removes_the_thread_and_metadata_update_patches_git_info(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, (a,) = await _threads(app_server, fake_model, codex_home, workspace, 1)
    empty = await client.request("thread/metadata/update", {"threadId": a})
    assert empty["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                              "message": "thread metadata update must include at least one field"}
    updated = await client.call("thread/metadata/update", {"threadId": a, "gitInfo": {"branch": "main"}})
    assert updated["thread"]["id"] == a and updated["thread"]["gitInfo"]["branch"] == "main"

    assert await client.call("thread/delete", {"threadId": a}) == {}
    await client.wait_notification("thread/deleted", lambda p: p == {"threadId": a})
    assert a not in [t["id"] for t in (await client.call("thread/list", {}))["data"]]
    again = await client.request("thread/delete", {"threadId": a})
    assert again["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": a},
                              "message": f"no rollout found for thread id {a}"}


async def test_memory_mode_and_memory_read(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path) -> None:
    client, (a,) = await _threads(app_server, fake_model, codex_home, workspace, 1)
    assert await client.call("thread/memoryMode/set", {"threadId": a, "mode": "disabled"}) == {}
    assert await client.call("thread/memory/read", {"threadId": a}) == {"summary": None}
    unknown = await client.request("thread/memoryMode/set", {"threadId": MISSING, "mode": "enabled"})
    assert unknown["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
                                "message": f"no rollout found for thread id {MISSING}"}
    unknown = await client.request("thread/memory/read", {"threadId": MISSING})
    assert unknown["error"] == {"code": -32600, "data": {"appErrorCode": "thread_not_found", "threadId": MISSING},
                                "message": f"thread not found: {MISSING}"}
