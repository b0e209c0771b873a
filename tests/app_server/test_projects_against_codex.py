"""Projects against the real Codex 0.169: the same script gets the same answers and notifications from both
(ids and times aside), and one CODEX_HOME shared by both shows each program's projects, their roots, order,
metadata and member threads to the other.

Each home is first opened by Codex, so its state database (where Codex keeps projects) exists, as it does
for a user switching from Codex; pycodex never creates it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.errors import as_codex
from tests.support.fake_model import message, model_config, run_turn
from tests.support.tools import require_codex

pytestmark = pytest.mark.codex

PYCODEX = [sys.executable, "-m", "pycodex", "app-server"]
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _argv(program: str) -> list[str]:
    return [str(require_codex()), "app-server"] if program == "codex" else PYCODEX


class _Ids:
    """Replaces each id by its order of first appearance, so two runs' transcripts compare."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def text(self, value: str) -> str:
        return UUID.sub(lambda m: self.names.setdefault(m[0], f"<id{len(self.names)}>"), value)

    def __call__(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ("<time>" if k in ("createdAt", "updatedAt", "recencyAt") and isinstance(v, int)
                        else self(v)) for k, v in value.items()}  # fmt: skip
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        return self.text(value) if isinstance(value, str) else value


async def _home(app_server: Any, model_url: str, home: Path) -> Path:
    model_config(home, model_url)
    await (await app_server(argv=_argv("codex"), codex_home=home)).close()  # Codex makes its state database
    return home


async def _script(client: Any, workspace: Path) -> list[Any]:
    """Every answer and project notification of one run, in order (the caller normalizes ids)."""
    out: list[Any] = []
    seen = 0

    async def step(method: str, params: dict[str, Any]) -> Any:
        nonlocal seen
        answer = await client.request(method, params)
        result = answer.get("result")
        if method in ("thread/metadata/update", "thread/read", "thread/start", "thread/fork") and result:  # the project is what matters here
            result = result["thread"]["projectId"]
        elif method == "thread/list" and result:
            result = [(t["id"], t["projectId"]) for t in result["data"]]
        out.append((method, result, as_codex(answer["error"]) if "error" in answer else None))
        notes = [n for n in client.notifications() if n["method"] in ("project/changed", "thread/project/updated")]
        out.extend((n["method"], n["params"]) for n in notes[seen:])
        seen = len(notes)
        return answer.get("result")

    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, thread_id, "hi", timeout=60)
    early = (await step("project/create", {"idempotencyKey": "e", "name": "E", "roots": []}))["project"]["id"]
    await step("thread/start", {"cwd": str(workspace), "projectId": early})
    a = (await step("project/create", {"idempotencyKey": "a", "name": " A ", "metadata": {"k": "v"},
                                       "roots": [{"path": f"{workspace}/"}]}))["project"]["id"]  # fmt: skip
    await step("project/create", {"idempotencyKey": "a", "name": "again", "roots": []})
    b = (await step("project/create", {"idempotencyKey": "b", "name": "B", "roots": []}))["project"]["id"]
    c = (await step("project/import", {"idempotencyKey": "c", "name": "C", "roots": [],
                                       "threads": [thread_id]}))["project"]["id"]  # fmt: skip
    for method, params in (
        ("project/list", {"limit": 2}), ("project/list", {"sortKey": "recencyAt"}),
        ("project/list", {"sortKey": "position", "sortDirection": "desc", "limit": 1}),
        ("project/list", {"sortDirection": "asc"}), ("project/list", {"cursor": "0|x"}),
        ("project/read", {"projectId": c}), ("project/read", {"projectId": "missing"}),
        ("project/update", {"projectId": b, "name": "B"}),
        ("project/update", {"projectId": b, "metadata": {"x": "y"}, "roots": [{"path": str(workspace)}]}),
        ("project/update", {"projectId": b, "name": ""}),
        ("project/move", {"projectId": c, "beforeProjectId": a}), ("project/move", {"projectId": c}),
        ("project/move", {"projectId": a, "beforeProjectId": a}), ("project/move", {"projectId": a,
                                                                                    "beforeProjectId": "x"}),
        ("project/list", {}),
        ("project/import", {"idempotencyKey": "d", "name": "D", "roots": [], "threads": [thread_id, thread_id]}),
        ("project/import", {"idempotencyKey": "d", "name": "D", "roots": [], "threads": ["nope"]}),
        ("project/create", {"idempotencyKey": "", "name": "D", "roots": []}),
        ("project/create", {"idempotencyKey": "d", "name": "D", "roots": [{"path": "relative"}]}),
        ("project/create", {"idempotencyKey": "d", "name": "D", "roots": [{"path": str(workspace)},
                                                                          {"path": f"{workspace}/."}]}),
        ("thread/metadata/update", {"threadId": thread_id, "projectId": b}),
        ("thread/metadata/update", {"threadId": thread_id, "projectId": b}),
        ("thread/metadata/update", {"threadId": thread_id, "projectId": "nope"}),
        ("project/read", {"projectId": b}), ("thread/metadata/update", {"threadId": thread_id, "projectId": ""}),
        ("thread/metadata/update", {"threadId": thread_id, "projectId": c}),
        ("thread/fork", {"threadId": thread_id}),
        ("thread/list", {"projectId": c}), ("thread/list", {"projectId": None}), ("thread/list", {"projectId": b}),
        ("thread/read", {"threadId": thread_id}),
        ("thread/start", {"cwd": str(workspace), "projectId": "nope"}),
        ("project/delete", {"projectId": c}), ("project/delete", {"projectId": c}),
        ("thread/read", {"threadId": thread_id}), ("thread/list", {"projectId": None}),
        ("project/create", {"idempotencyKey": "c", "name": "C", "roots": []}),
        ("project/list", {}),
    ):
        await step(method, params)
    return out


async def test_the_same_script_gets_the_same_answers(
    app_server: Any, fake_model: Any, tmp_path: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    runs = {}
    for program in ("codex", "pycodex"):
        home = await _home(app_server, model.url, tmp_path / program)
        client = await app_server(argv=_argv(program), codex_home=home, experimental=True)
        runs[program] = _Ids()(await _script(client, workspace))
        await client.close()
    assert sum(1 for entry in runs["codex"] if entry[0] == "project/changed") == 8  # the script did run
    for step, (theirs, ours) in enumerate(zip(runs["codex"], runs["pycodex"], strict=True)):
        assert ours == theirs, step


@pytest.mark.parametrize(("writer", "reader"), [("pycodex", "codex"), ("codex", "pycodex")])
async def test_each_reads_the_projects_the_other_wrote(
    writer: str, reader: str, app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    await _home(app_server, model.url, codex_home)
    first = await app_server(argv=_argv(writer), experimental=True)
    thread_id = (await first.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(first, thread_id, "hi", timeout=60)
    one = (await first.call("project/create", {"idempotencyKey": "one", "name": "One", "metadata": {"k": "v"},
                                               "roots": [{"path": str(workspace)}]}))["project"]  # fmt: skip
    two = (await first.call("project/import", {"idempotencyKey": "two", "name": "Two", "roots": [],
                                               "threads": [thread_id]}))["project"]  # fmt: skip
    await first.call("project/move", {"projectId": two["id"], "beforeProjectId": one["id"]})
    written = (await first.call("project/list", {}))["data"]
    await first.close()

    second = await app_server(argv=_argv(reader), experimental=True)
    assert (await second.call("project/list", {}))["data"] == written
    assert [p["name"] for p in written] == ["Two", "One"] and written[0]["recencyAt"] is not None
    # the reader's idempotency check sees the writer's key; its changes reach the writer's rows
    assert (await second.call("project/create", {"idempotencyKey": "one", "name": "x", "roots": []}))["project"] \
        == next(p for p in written if p["id"] == one["id"])
    assert await second.call("project/delete", {"projectId": two["id"]}) == {}
    updates = [n["params"] for n in second.notifications("thread/project/updated")]
    assert updates == [{"threadId": thread_id, "projectId": None}]  # the writer's thread was a member
    await second.close()

    again = await app_server(argv=_argv(writer), experimental=True)
    assert [p["id"] for p in (await again.call("project/list", {}))["data"]] == [one["id"]]


@pytest.mark.parametrize("program", ["codex", "pycodex"])
async def test_every_experimental_connection_is_told_and_only_those(
    program: str, app_server: Any, app_server_ws: Any, codex_schemas: Any, fake_model: Any, codex_home: Path
) -> None:
    from tests.support.appserver_ws import WsAppServerClient

    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    await _home(app_server, model.url, codex_home)
    caller = await app_server_ws(argv=_argv(program), experimental=True)
    assert caller.process is not None
    others = []
    for label, experimental in (("watcher", True), ("stable", False)):
        other = await WsAppServerClient.connect(caller.process.argv[-1], codex_schemas, label=label)
        await other.initialize(name=label, experimental=experimental)
        others.append(other)
    watcher, stable = others
    try:
        made = (await caller.call("project/create", {"idempotencyKey": "k", "name": "P", "roots": []}))["project"]
        expected = {"projectId": made["id"], "changeType": "created"}
        for client in (caller, watcher):
            assert (await client.wait_notification("project/changed"))["params"] == expected
        # The change was sent before the caller's answer: one round trip on the stable connection after it
        # would have brought it there too.
        await stable.call("thread/loaded/list", {})
        assert stable.notifications("project/changed") == []
    finally:
        for client in others:
            await client.close()
