"""thread/search and thread/searchOccurrences (shapes checked against Codex 0.169's schema; these two also pass
against Codex), and Codex 0.171's thread/search/stream with thread/search/partial batches."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.support.fake_model import message, model_config, run_turn


async def _threads(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path) -> tuple[Any, str, str]:
    model = await fake_model({"responses": [{"output": [message("reply text")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    first = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, first, "hello world foo")
    await run_turn(client, first, "second Hello")
    other = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, other, "unrelated")
    return client, first, other


async def test_search_finds_threads_and_occurrences(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    client, first, other = await _threads(app_server, fake_model, codex_home, workspace)
    found = await client.call("thread/search", {"searchTerm": "hello"})
    assert [(r["thread"]["id"], r["snippet"]) for r in found["data"]] == [(first, "hello world foo")]
    assert (await client.call("thread/search", {"searchTerm": "zzz"}))["data"] == []
    empty = await client.request("thread/search", {"searchTerm": ""})
    assert empty["error"] == {"code": -32600, "data": {"appErrorCode": "invalid_request"},
                              "message": "thread/search requires a non-empty searchTerm"}

    hits = (await client.call("thread/searchOccurrences", {"threadId": first, "searchTerm": "hello"}))["data"]
    assert [(h["snippet"], h["snippetMatchRange"]) for h in hits] == [
        ("hello world foo", {"start": 0, "end": 5}), ("second Hello", {"start": 7, "end": 12})]
    turns = await client.call("thread/turns/list", {"threadId": first, "cursor": hits[1]["turnCursor"],
                                                    "sortDirection": "asc"})
    assert turns["data"][0]["id"] == hits[1]["turnId"]
    replies = (await client.call("thread/searchOccurrences", {"threadId": other, "searchTerm": "reply"}))["data"]
    assert len(replies) == 1 and replies[0]["snippet"] == "reply text"


async def test_search_stream_sends_partials_then_the_final_page(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    if os.environ.get("PYCODEX_TEST_TARGET") == "codex":
        import pytest

        pytest.skip("thread/search/stream is a Codex 0.171 method; the reference binary is 0.169")
    client, first, _ = await _threads(app_server, fake_model, codex_home, workspace)
    # These 0.171 methods are not in the 0.169 schema the client validates against: shapes are checked here.
    validator, client.validator = client.validator, None
    response = await client.request("thread/search/stream", {"searchTerm": "HELLO"}, id="search-1")
    assert [r["thread"]["id"] for r in response["result"]["data"]] == [first]
    partials = client.notifications("thread/search/partial")
    assert partials and all(p["params"]["requestId"] == "search-1" for p in partials)
    assert {r["thread"]["id"] for p in partials for r in p["params"]["data"]} == {first}
    assert await client.call("thread/search/cancel", {"requestId": "search-1"}) == {}
    assert await client.call("thread/search/stream/cancel", {"requestId": "search-1"}) == {}
    assert set(response["result"]) == {"data", "nextCursor", "backwardsCursor"}
    client.validator = validator
    no_exp = await app_server()
    refused = await no_exp.request("thread/search/stream", {"searchTerm": "x"})
    assert refused["error"]["message"] == "thread/search/stream requires experimentalApi capability"


async def test_thread_list_honours_included_thread_ids_for_0171_clients_only(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    if os.environ.get("PYCODEX_TEST_TARGET") == "codex":
        import pytest

        pytest.skip("includedThreadIds is a Codex 0.171 field; the reference binary is 0.169")
    client, first, other = await _threads(app_server, fake_model, codex_home, workspace)
    await client.close()
    new = await app_server(initialize=False)
    await new.initialize(version="0.171.0")
    new.validator = None  # the 0.171 field is not in the 0.169 schema the client checks requests against
    only = await new.call("thread/list", {"includedThreadIds": [other]})
    assert [t["id"] for t in only["data"]] == [other]
    assert (await new.call("thread/list", {"includedThreadIds": []}))["data"] == []
    old = await app_server(initialize=False)
    await old.initialize(version="0.169.0")
    old.validator = None
    assert {t["id"] for t in (await old.call("thread/list", {"includedThreadIds": []}))["data"]} == {first, other}
