"""A thread another app-server holds: resuming it is refused with Codex's words (-32600), not -32603."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.errors import as_codex
from tests.support.fake_model import message, model_config, run_turn


async def test_resuming_a_thread_another_app_server_writes_is_refused_with_codex_words(
    app_server_process: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model([[message("hi")]])
    model_config(codex_home, model.url)
    holder = await app_server_process()
    thread_id = (await holder.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert (await run_turn(holder, thread_id, "hello", timeout=30))["status"] == "completed"
    other = await app_server_process()
    answer = await other.request("thread/resume", {"threadId": thread_id}, timeout=30)
    assert as_codex(answer["error"]) == {"code": -32600, "message": f"thread {thread_id} already has an active writer"}
    assert answer["error"]["data"] == {"appErrorCode": "thread_locked", "threadId": thread_id}
    await other.close()
    await holder.close()
