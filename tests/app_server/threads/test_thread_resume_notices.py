"""What thread/resume announces, as Codex 0.169 does: loading a stored thread sends its status before the answer
and its token usage after it; joining a loaded thread sends neither; either way the goal state follows the
answer, to every subscriber of the thread. Passes against the binary too (PYCODEX_TEST_TARGET=codex)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.support.appserver_ws import WsAppServerClient
from tests.support.fake_model import ok_model, thread_with_a_turn
from tests.support.schema import SchemaPair

#: Not part of these sequences (Codex also greets a new connection with configWarning and remote-control status).
QUIET = ("account/rateLimits/updated", "thread/readState/changed", "warning", "configWarning",
         "remoteControl/status/changed")


async def _after(client: Any, request: dict[str, Any], settle: str) -> list[str]:
    """What ``client`` receives from sending ``request`` until the ``settle`` notification, as method names
    ("RESPONSE" for the answer)."""
    seen = len(client.messages)
    await client.send(request)
    await client.wait_notification(settle, timeout=20)
    return [m.get("method", "RESPONSE") for m in client.messages[seen:] if m.get("method") not in QUIET]


async def test_joining_a_loaded_thread(
    app_server_ws: Callable[..., Awaitable[WsAppServerClient]], fake_model: Any, codex_home: Path,
    workspace: Path, codex_schemas: SchemaPair,
) -> None:
    await ok_model(fake_model, codex_home)
    first = await app_server_ws()
    assert first.process is not None
    second = await WsAppServerClient.connect(first.process.argv[-1], codex_schemas, label="ws-second")
    try:
        await second.initialize(name="second")
        tid = await thread_with_a_turn(first, workspace)
        # The thread's lifecycle reaches every connection: let the second see the turn's end (the idle status)
        # before it joins, or that broadcast, still on its way, lands inside the join's sequence.
        await second.wait_notification(
            "thread/status/changed",
            lambda p: p["threadId"] == tid and p["status"]["type"] == "idle", timeout=20,
        )

        # joining the loaded thread: the answer, then the goal state, which its first subscriber sees too
        joined = await _after(second, {"id": 90, "method": "thread/resume",
                                       "params": {"threadId": tid, "excludeTurns": True}}, "thread/goal/cleared")
        assert joined == ["RESPONSE", "thread/goal/cleared"]
        await first.wait_notification("thread/goal/cleared")
    finally:
        await second.close()


async def test_loading_a_stored_thread(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    await ok_model(fake_model, codex_home)
    client = await app_server()
    tid = await thread_with_a_turn(client, workspace)
    await client.close()
    other = await app_server()  # a new server: the thread is only on disk
    loaded = await _after(other, {"id": 91, "method": "thread/resume",
                                  "params": {"threadId": tid, "excludeTurns": True}}, "thread/goal/cleared")
    assert loaded == ["thread/status/changed", "RESPONSE", "thread/tokenUsage/updated", "thread/goal/cleared"]
    status = next(m for m in other.messages if m.get("method") == "thread/status/changed")
    assert status["params"] == {"threadId": tid, "status": {"type": "idle"}}
