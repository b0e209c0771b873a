"""A thread's model, provider and reasoning effort as thread/read, thread/list and thread/resume show them follow
its settings (thread/settings/update, sticky turn overrides), loaded or not, as in Codex 0.169."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import ok_model, run_turn

FIELDS = ("model", "modelProvider", "reasoningEffort")


def _view(thread: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(thread[key] for key in FIELDS)


async def _listed(client: Any, thread_id: str) -> tuple[Any, ...]:
    data = (await client.call("thread/list", {}))["data"]
    return next(_view(t) for t in data if t["id"] == thread_id)


async def test_read_and_list_show_the_current_settings(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    await ok_model(fake_model, codex_home)
    client = await app_server(experimental=True)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, tid, "hello", model="turn-model", effort="low")  # sticky for later turns
    turn_view = ("turn-model", "mock_provider", "low")
    assert _view((await client.call("thread/read", {"threadId": tid}))["thread"]) == turn_view
    assert await _listed(client, tid) == turn_view

    await client.call("thread/settings/update", {"threadId": tid, "model": "other-model", "effort": "high"})
    updated = ("other-model", "mock_provider", "high")
    assert _view((await client.call("thread/read", {"threadId": tid}))["thread"]) == updated
    assert await _listed(client, tid) == updated

    # A new server on the same home has the thread only on disk: the stored settings still win.
    await client.close()
    other = await app_server(experimental=True)
    assert _view((await other.call("thread/read", {"threadId": tid}))["thread"]) == updated
    assert await _listed(other, tid) == updated
    resumed = await other.call("thread/resume", {"threadId": tid})
    assert _view(resumed["thread"]) == updated
    assert (resumed["model"], resumed["reasoningEffort"]) == ("other-model", "high")
