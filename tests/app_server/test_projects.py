"""Codex 0.169's experimental projects (project/list, read, create, import, update, move, delete) on the
in-memory pair: stored in Codex's state database (``state_5.sqlite``, built here from the schema the Codex
binary recorded), with Codex's checks, texts, cursors and notifications. ``test_projects_against_codex.py``
runs the same kind of script against the real binary."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tests.support.errors import as_codex
from tests.support.fake_model import message, model_config, run_turn

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "storage" / "codex_0169" / "sqlite_schema.json"
RELATIVE = {"code": -32600, "message": "Invalid request: AbsolutePathBuf deserialized without a base path"}


def codex_state_db(codex_home: Path) -> Path:
    """Codex 0.169's ``state_5.sqlite`` as the binary makes it (tables first, then indexes and triggers)."""
    objects = json.loads(SCHEMA.read_text())["state_5.sqlite"]["objects"]
    path = codex_home / "state_5.sqlite"
    conn = sqlite3.connect(path)
    try:
        for obj in sorted(objects, key=lambda o: o["type"] != "table"):
            conn.execute(obj["sql"])
        conn.commit()
    finally:
        conn.close()
    return path


def invalid(text: str) -> dict[str, Any]:
    return {"code": -32602, "message": text}


async def _error(client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    error: dict[str, Any] = as_codex((await client.request(method, params))["error"])
    return error


async def _create(client: Any, key: str, name: str, **more: Any) -> dict[str, Any]:
    project: dict[str, Any] = (await client.call("project/create",
                                                 {"idempotencyKey": key, "name": name, "roots": [], **more}))["project"]
    return project


def _changes(client: Any) -> list[tuple[str, str]]:
    return [(n["params"]["projectId"], n["params"]["changeType"]) for n in client.notifications("project/changed")]


async def test_create_read_update_move_and_delete(app_server: Any, codex_home: Path, workspace: Path) -> None:
    codex_state_db(codex_home)
    client = await app_server(experimental=True)
    assert await client.call("project/list", {}) == {"data": [], "nextCursor": None}
    roots = [{"path": f"{workspace}/"}, {"path": f"{workspace}/sub/../other"}]
    a = await _create(client, "k-a", "  Alpha  ", roots=roots, metadata={"z": "1", "a": "2"})
    assert (a["name"], a["roots"], a["metadata"], a["position"], a["recencyAt"]) == (
        "Alpha", [{"path": str(workspace)}, {"path": f"{workspace}/other"}], {"a": "2", "z": "1"}, 0, None)
    assert list(a) == ["id", "name", "roots", "metadata", "position", "createdAt", "updatedAt", "recencyAt"]
    assert await _create(client, "k-a", "Other name") == a  # the same key answers the first project
    b, c = await _create(client, "k-b", "Beta"), await _create(client, "k-c", "Gamma")
    assert [p["position"] for p in (b, c)] == [1, 2]
    assert _changes(client) == [(a["id"], "created"), (b["id"], "created"), (c["id"], "created")]
    assert (await client.call("project/read", {"projectId": b["id"]}))["project"] == b

    same = await client.call("project/update", {"projectId": b["id"], "name": "Beta"})
    assert same["project"] == b and len(_changes(client)) == 3  # nothing changed: no notification
    renamed = (await client.call("project/update", {"projectId": b["id"], "name": "B2",
                                                    "roots": [{"path": str(workspace)}]}))["project"]
    assert (renamed["name"], renamed["roots"], renamed["metadata"]) == ("B2", [{"path": str(workspace)}], {})
    assert _changes(client)[-1] == (b["id"], "updated")

    assert await client.call("project/move", {"projectId": c["id"]}) == {}  # already last: no change
    assert len(_changes(client)) == 4
    assert await client.call("project/move", {"projectId": c["id"], "beforeProjectId": a["id"]}) == {}
    assert _changes(client)[-1] == (c["id"], "updated")
    listed = (await client.call("project/list", {}))["data"]
    assert [(p["id"], p["position"]) for p in listed] == [(c["id"], 0), (a["id"], 1), (b["id"], 2)]

    assert await client.call("project/delete", {"projectId": a["id"]}) == {}
    assert _changes(client)[-1] == (a["id"], "deleted")
    assert [p["id"] for p in (await client.call("project/list", {}))["data"]] == [c["id"], b["id"]]
    assert await _error(client, "project/create", {"idempotencyKey": "k-a", "name": "A", "roots": []}) == \
        invalid("idempotency key refers to deleted project: k-a")


async def test_bad_input_gets_codex_errors(app_server: Any, codex_home: Path, workspace: Path) -> None:
    codex_state_db(codex_home)
    client = await app_server(experimental=True)
    project = await _create(client, "k", "P")
    pid = project["id"]
    cases = [
        ("project/read", {"projectId": "nope"}, invalid("project not found: nope")),
        ("project/update", {"projectId": "nope", "name": "x"}, invalid("project not found: nope")),
        ("project/update", {"projectId": pid, "name": " "}, invalid("project name must not be empty")),
        ("project/move", {"projectId": "nope"}, invalid("project not found: nope")),
        ("project/move", {"projectId": pid, "beforeProjectId": pid},
         invalid(f"project {pid} cannot be moved before itself")),
        ("project/move", {"projectId": pid, "beforeProjectId": "x"}, invalid("before project not found: x")),
        ("project/delete", {"projectId": "nope"}, invalid("project not found: nope")),
        ("project/create", {"idempotencyKey": " ", "name": "x", "roots": []},
         invalid("idempotencyKey must not be empty")),
        ("project/create", {"idempotencyKey": "k" * 513, "name": "x", "roots": []},
         invalid("idempotencyKey must be at most 512 bytes")),
        ("project/create", {"idempotencyKey": "n", "name": "", "roots": []}, invalid("project name must not be empty")),
        ("project/create", {"idempotencyKey": "n", "name": "x", "roots": [{"path": "rel"}]}, RELATIVE),
        ("project/create", {"idempotencyKey": "n", "name": "x",
                            "roots": [{"path": str(workspace)}, {"path": f"{workspace}/"}]},
         invalid(f"duplicate project root: {workspace}")),
        ("project/import", {"idempotencyKey": "n", "name": "x", "roots": [], "threads": ["t", "t"]},
         invalid("duplicate thread id: t")),
        ("project/import", {"idempotencyKey": "n", "name": "x", "roots": [], "threads": ["t"]},
         invalid("thread not found: t")),
        ("project/list", {"sortDirection": "desc"}, invalid("sortDirection requires sortKey")),
        ("project/list", {"cursor": "garbage"}, invalid("invalid project cursor: malformed or mismatched sort anchor")),
        ("project/list", {"cursor": f"0|{pid}", "sortKey": "recencyAt"},
         invalid("invalid project cursor: malformed or mismatched sort anchor")),
    ]
    for method, params, expected in cases:
        assert await _error(client, method, params) == expected, (method, params)
    assert [p["id"] for p in (await client.call("project/list", {}))["data"]] == [pid]  # none was made


async def test_pages_in_position_and_recency_order(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    codex_state_db(codex_home)
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    ids = [(await _create(client, f"k{i}", f"P{i}"))["id"] for i in range(3)]
    first = await client.call("project/list", {"limit": 2})
    assert [p["id"] for p in first["data"]] == ids[:2] and first["nextCursor"] == f"1|{ids[1]}"
    rest = await client.call("project/list", {"limit": 2, "cursor": first["nextCursor"]})
    assert [p["id"] for p in rest["data"]] == ids[2:] and rest["nextCursor"] is None
    back = await client.call("project/list", {"limit": 1, "sortKey": "position", "sortDirection": "desc"})
    assert back["nextCursor"] == f"v1|position|desc|2|{ids[2]}"
    assert (await client.call("project/list", {"limit": 0}))["data"][0]["id"] == ids[0]  # at least one

    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, thread_id, "hi")
    imported = (await client.call("project/import", {"idempotencyKey": "imp", "name": "Imported", "roots": [],
                                                     "threads": [thread_id]}))["project"]  # fmt: skip
    assert isinstance(imported["recencyAt"], int)
    updates = [n["params"] for n in client.notifications("thread/project/updated")]
    assert updates == [{"threadId": thread_id, "projectId": imported["id"]}]
    page = await client.call("project/list", {"sortKey": "recencyAt", "limit": 2})
    # the one project with a thread first; the empty ones after it, newest id first (desc)
    assert [p["id"] for p in page["data"]] == [imported["id"], ids[2]]
    assert page["nextCursor"] == f"v1|recencyAt|desc|null|{ids[2]}"
    tail = await client.call("project/list", {"sortKey": "recencyAt", "limit": 5, "cursor": page["nextCursor"]})
    assert [p["id"] for p in tail["data"]] == [ids[1], ids[0]]

    await client.call("thread/archive", {"threadId": thread_id})  # an archived thread gives no recency
    assert (await client.call("project/read", {"projectId": imported["id"]}))["project"]["recencyAt"] is None
    await client.call("thread/unarchive", {"threadId": thread_id})
    assert await client.call("project/delete", {"projectId": imported["id"]}) == {}
    assert [n["params"] for n in client.notifications("thread/project/updated")][-1] == \
        {"threadId": thread_id, "projectId": None}
    conn = sqlite3.connect(codex_home / "state_5.sqlite")
    try:
        assert conn.execute("SELECT project_id FROM threads WHERE id = ?", (thread_id,)).fetchone() == (None,)
        assert conn.execute("SELECT COUNT(*) FROM project_roots WHERE project_id = ?",
                            (imported["id"],)).fetchone() == (0,)  # fmt: skip
    finally:
        conn.close()


async def test_projects_survive_a_restart(app_server: Any, codex_home: Path, workspace: Path) -> None:
    codex_state_db(codex_home)
    first = await app_server(experimental=True)
    made = await _create(first, "k", "Kept", roots=[{"path": str(workspace)}], metadata={"m": "v"})
    await first.close()
    second = await app_server(experimental=True)
    assert (await second.call("project/list", {}))["data"] == [made]


async def test_without_codex_state_db_projects_are_unavailable(app_server: Any, codex_home: Path) -> None:
    client = await app_server(experimental=True)
    for method, params in (("project/list", {}), ("project/read", {"projectId": "x"}),
                           ("project/create", {"idempotencyKey": "k", "name": "n", "roots": []})):
        assert await _error(client, method, params) == {
            "code": -32601, "message": f"{method} is unavailable without sqlite state"}
    assert not (codex_home / "state_5.sqlite").exists()  # Codex's database is never made by pycodex


async def test_project_methods_need_the_experimental_capability(app_server: Any, codex_home: Path) -> None:
    codex_state_db(codex_home)
    client = await app_server()
    error = await _error(client, "project/list", {})
    assert error == {"code": -32600, "message": "project/list requires experimentalApi capability"}


async def test_metadata_update_moves_a_thread_between_projects(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    codex_state_db(codex_home)
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, thread_id, "hi")
    project = await _create(client, "k", "P")

    async def assign(project_id: str | None) -> Any:
        params = {"threadId": thread_id} if project_id is None else {"threadId": thread_id, "projectId": project_id}
        return (await client.call("thread/metadata/update", params))["thread"]["projectId"]

    def told() -> list[Any]:
        return [n["params"] for n in client.notifications("thread/project/updated")]

    assert await assign(project["id"]) == project["id"]
    assert told() == [{"threadId": thread_id, "projectId": project["id"]}]
    assert await assign(project["id"]) == project["id"] and len(told()) == 1  # unchanged: no notification
    assert (await client.call("project/read", {"projectId": project["id"]}))["project"]["recencyAt"] is not None
    unknown = await _error(client, "thread/metadata/update", {"threadId": thread_id, "projectId": "nope"})
    assert unknown == {"code": -32600, "message": "project not found: nope"}
    git = await client.call("thread/metadata/update", {"threadId": thread_id, "gitInfo": {"branch": "b"}})
    assert git["thread"]["projectId"] == project["id"]  # shown, and kept, when not given
    assert await assign("") is None
    assert told()[-1] == {"threadId": thread_id, "projectId": None}
    empty = await _error(client, "thread/metadata/update", {"threadId": thread_id, "projectId": None})
    assert empty == {"code": -32600, "message": "thread metadata update must include at least one field"}


async def test_thread_read_and_list_show_and_filter_by_project(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    codex_state_db(codex_home)
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    ids = []
    for text in ("one", "two"):
        thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
        await run_turn(client, thread_id, text)
        ids.append(thread_id)
    inside, outside = ids
    project = (await client.call("project/import", {"idempotencyKey": "k", "name": "P", "roots": [],
                                                    "threads": [inside]}))["project"]  # fmt: skip

    async def listed(**filters: Any) -> list[tuple[str, Any]]:
        return [(t["id"], t["projectId"]) for t in (await client.call("thread/list", filters))["data"]]

    assert sorted(await listed()) == sorted([(inside, project["id"]), (outside, None)])
    assert await listed(projectId=project["id"]) == [(inside, project["id"])]
    assert await listed(projectId=None) == [(outside, None)]
    assert await listed(projectId="nope") == []
    read = await client.call("thread/read", {"threadId": inside})
    assert read["thread"]["projectId"] == project["id"]
    found = (await client.call("thread/search", {"searchTerm": "one"}))["data"]
    assert [(r["thread"]["id"], r["thread"]["projectId"]) for r in found] == [(inside, project["id"])]


async def test_thread_start_puts_the_new_thread_in_a_project(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    codex_state_db(codex_home)
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    unknown = await _error(client, "thread/start", {"cwd": str(workspace), "projectId": "nope"})
    assert unknown == {"code": -32600, "message": "project not found: nope"}
    assert (await client.call("thread/loaded/list", {}))["data"] == []  # refused before a thread was made
    project = await _create(client, "k", "P")
    started = await client.call("thread/start", {"cwd": str(workspace), "projectId": project["id"]})
    thread_id = started["thread"]["id"]
    assert started["thread"]["projectId"] == project["id"]
    await run_turn(client, thread_id, "hi")
    started_note = client.notifications("thread/started")[-1]["params"]["thread"]
    assert started_note["projectId"] == project["id"]
    assert [t["id"] for t in (await client.call("thread/list", {"projectId": project["id"]}))["data"]] == [thread_id]
    assert (await client.call("thread/resume", {"threadId": thread_id}))["thread"]["projectId"] == project["id"]
    fork = (await client.call("thread/fork", {"threadId": thread_id}))["thread"]
    assert fork["projectId"] == project["id"]  # a fork stays in its source's project, as in Codex
    announced = await client.wait_notification("thread/started", lambda p: p["thread"]["id"] == fork["id"])
    assert announced["params"]["thread"]["projectId"] == project["id"]
    members = (await client.call("thread/list", {"projectId": project["id"]}))["data"]
    assert sorted(t["id"] for t in members) == sorted([thread_id, fork["id"]])
    ephemeral = await client.call("thread/start", {"cwd": str(workspace), "projectId": project["id"],
                                                   "ephemeral": True})  # fmt: skip
    assert ephemeral["thread"]["projectId"] == project["id"]  # shown live, stored nowhere
    assert client.notifications("thread/project/updated") == []  # Codex sends none for a thread/start
