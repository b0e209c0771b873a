"""The hosted web search: a ``web_search_call`` in the model's stream becomes a ``webSearch`` item
(started when announced, completed with its query and action) and goes back to the model as history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_server.threads.web_search import web_search_action, web_search_query
from tests.support.fake_model import message, model_config

SEARCH = {"type": "web_search_call", "id": "ws_1", "action": {"type": "search", "query": "weather paris"},
          "status": "completed"}


async def test_web_search_call_becomes_a_web_search_item(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([{"output": [SEARCH, message("sunny")]}, {"output": [message("again")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    for text in ("search", "more"):
        await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]})
        await client.wait_notification("turn/completed", timeout=15)
    started = [n["params"]["item"] for n in client.notifications("item/started")
               if n["params"]["item"]["type"] == "webSearch"]
    completed = [n["params"]["item"] for n in client.notifications("item/completed")
                 if n["params"]["item"]["type"] == "webSearch"]
    assert started == [{"type": "webSearch", "id": "ws_1", "query": "", "action": {"type": "other"},
                        "results": None, "startedAtMs": started[0]["startedAtMs"], "completedAtMs": None}]
    assert completed == [{
        "type": "webSearch", "id": "ws_1", "query": "weather paris",
        "action": {"type": "search", "query": "weather paris", "queries": None}, "results": None,
        "startedAtMs": started[0]["startedAtMs"], "completedAtMs": completed[0]["completedAtMs"],
    }]
    # The next request carries the search as the model sent it.
    history = model.requests()[1]["body"]["input"]
    assert [i for i in history if i.get("type") == "web_search_call"] == [SEARCH]
    turns = (await client.call("thread/read", {"threadId": thread_id, "includeTurns": True}))["thread"]["turns"]
    assert [i["type"] for i in turns[0]["items"]] == ["userMessage", "webSearch", "agentMessage"]


def test_actions_and_their_short_texts() -> None:
    cases = [
        ({"type": "search", "queries": ["a", "b"]}, {"type": "search", "query": None, "queries": ["a", "b"]},
         "a ..."),
        ({"type": "open_page", "url": "https://x.test"}, {"type": "openPage", "url": "https://x.test"},
         "https://x.test"),
        ({"type": "find_in_page", "url": "https://x.test", "pattern": "p"},
         {"type": "findInPage", "url": "https://x.test", "pattern": "p"}, "'p' in https://x.test"),
        (None, {"type": "other"}, ""),
    ]
    for raw, action, query in cases:
        assert web_search_action(raw) == action
        assert web_search_query(action) == query


def test_exec_json_view_leaves_unset_action_fields_out() -> None:
    from pycodex.item_views.table import ITEM_VIEWS

    view = ITEM_VIEWS.view_of("webSearch")
    assert view.exec_item is not None
    item = {"type": "webSearch", "id": "ws_1", "query": "q",
            "action": {"type": "search", "query": "q", "queries": None}}
    assert view.exec_item(item, lambda: "item_0") == {
        "id": "item_0", "type": "web_search", "query": "q", "action": {"type": "search", "query": "q"}}
