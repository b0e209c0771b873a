"""How thread/list and thread/search show threads, as Codex 0.169 does: a loaded thread with its live state
(status, environments), forkedFromId never filled (only thread/read shows it), a fork searched only in the
messages it added itself, names not searched. Passes against the binary too (PYCODEX_TEST_TARGET=codex)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import ok_model, run_turn


async def test_list_and_search_views(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path) -> None:
    await ok_model(fake_model, codex_home)
    client = await app_server(experimental=True)
    parent = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, parent, "hello world")
    fork = (await client.call("thread/fork", {"threadId": parent, "excludeTurns": True}))["thread"]
    assert fork["forkedFromId"] == parent
    assert (await client.call("thread/read", {"threadId": fork["id"]}))["thread"]["forkedFromId"] == parent

    async def search(term: str) -> list[tuple[str, str]]:
        found = (await client.call("thread/search", {"searchTerm": term}))["data"]
        for result in found:
            thread = result["thread"]
            assert thread["forkedFromId"] is None and thread["status"] == {"type": "idle"}
            assert thread["environments"] == [{"environmentId": "local", "cwd": str(workspace),
                                               "runtimeWorkspaceRoots": [str(workspace)]}]
        return [(r["thread"]["id"], r["snippet"]) for r in found]

    assert await search("hello") == [(parent, "hello world")]  # the fork's copy of it does not count
    await run_turn(client, fork["id"], "hello again")
    assert await search("hello") == [(fork["id"], "hello again"), (parent, "hello world")]
    await client.call("thread/name/set", {"threadId": parent, "name": "zebra"})
    assert await search("zebra") == []

    listed = (await client.call("thread/list", {}))["data"]
    assert [(t["id"], t["forkedFromId"], t["status"]["type"]) for t in listed] == [
        (fork["id"], None, "idle"), (parent, None, "idle")]
