"""Notifications around thread/fork, thread/archive and thread/delete, as Codex 0.169 sends them: a fork
without its turns gets no token usage (one with them does); archiving or deleting a loaded thread first tells
its subscribers it is notLoaded, then answers, then announces the archive or delete. Passes against the binary
too (PYCODEX_TEST_TARGET=codex)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.fake_model import ok_model, thread_with_a_turn

#: Not part of these sequences (Codex also greets a new connection with configWarning and remote-control status).
IGNORED = ("account/rateLimits/updated", "deprecationNotice", "warning", "configWarning",
           "remoteControl/status/changed")


async def _sequence(client: Any, method: str, params: dict[str, Any], last: str,
                    match: Callable[[Any], bool]) -> list[str]:
    """Method names (RESPONSE for the answer) from sending the request until its ``last`` notification."""
    seen = len(client.messages)
    await client.request(method, params, timeout=20)
    await client.wait_notification(last, match, timeout=20)
    return [m.get("method", "RESPONSE") for m in client.messages[seen:] if m.get("method") not in IGNORED]


async def test_fork_archive_and_delete_notices(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    await ok_model(fake_model, codex_home)
    client = await app_server()
    tid = await thread_with_a_turn(client, workspace)

    forks: list[str] = []

    def new_fork(params: Any) -> bool:
        if params["thread"]["forkedFromId"] != tid or params["thread"]["id"] in forks:
            return False
        forks.append(params["thread"]["id"])
        return True

    assert await _sequence(client, "thread/fork", {"threadId": tid, "excludeTurns": True}, "thread/started",
                           new_fork) == ["RESPONSE", "thread/started"]
    assert await _sequence(client, "thread/fork", {"threadId": tid}, "thread/started", new_fork) == [
        "RESPONSE", "thread/tokenUsage/updated", "thread/started"]
    fork = forks[-1]

    assert await _sequence(client, "thread/archive", {"threadId": tid}, "thread/archived",
                           lambda p: p["threadId"] == tid) == ["thread/status/changed", "RESPONSE", "thread/archived"]
    assert await _sequence(client, "thread/delete", {"threadId": fork}, "thread/deleted",
                           lambda p: p["threadId"] == fork) == ["thread/status/changed", "RESPONSE", "thread/deleted"]
    unloaded = [n["params"] for n in client.notifications("thread/status/changed")][-2:]
    assert unloaded == [{"threadId": tid, "status": {"type": "notLoaded"}},
                        {"threadId": fork, "status": {"type": "notLoaded"}}]
    assert fork not in (await client.call("thread/loaded/list", {}))["data"]
