"""A thread's lifecycle and metadata notifications reach every connection, as in Codex 0.169; its turn, item,
usage and settings notifications reach only its subscribers. Two websocket connections to one server: the
second never subscribes. Passes against the binary too (PYCODEX_TEST_TARGET=codex)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from tests.support.appserver_ws import WsAppServerClient
from tests.support.fake_model import ok_model, thread_with_a_turn
from tests.support.schema import SchemaPair

#: Codex's own start-up notices to a new connection, not part of this test.
START_UP = ("configWarning", "remoteControl/status/changed")


async def test_lifecycle_notices_reach_every_connection(
    app_server_ws: Callable[..., Awaitable[WsAppServerClient]], fake_model: Any, codex_home: Path,
    workspace: Path, codex_schemas: SchemaPair,
) -> None:
    await ok_model(fake_model, codex_home)
    owner = await app_server_ws(experimental=True)
    assert owner.process is not None
    other = await WsAppServerClient.connect(owner.process.argv[-1], codex_schemas, label="ws-other")
    try:
        await other.initialize(name="other", experimental=True)
        tid = await thread_with_a_turn(owner, workspace)
        await owner.call("thread/settings/update", {"threadId": tid, "model": "other-model"})
        await owner.call("thread/name/set", {"threadId": tid, "name": "named"})
        await owner.call("thread/goal/set", {"threadId": tid, "objective": "ship", "status": "paused"})
        await owner.call("thread/archive", {"threadId": tid})
        await other.wait_notification("thread/archived", lambda p: p["threadId"] == tid, timeout=20)
        seen = [m["method"] for m in other.messages if "method" in m and m["method"] not in START_UP]
        assert seen == ["thread/started", "thread/status/changed", "thread/status/changed", "thread/name/updated",
                        "thread/goal/updated", "thread/status/changed", "thread/archived"]
        statuses = [n["params"]["status"]["type"] for n in other.notifications("thread/status/changed")]
        assert statuses == ["active", "idle", "notLoaded"]
        assert "thread/settings/updated" in [m.get("method") for m in owner.messages]
    finally:
        await other.close()
