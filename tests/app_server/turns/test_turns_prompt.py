"""What the model receives: base instructions, developer instructions, permissions, AGENTS.md and the
environment context, in Codex's layout (app_server.md §8)."""

from __future__ import annotations

from pathlib import Path

from tests.support.fake_model import message, model_config
from tests.support.hermetic import stop_walks_at


def _texts(item: dict) -> list[str]:  # type: ignore[type-arg]
    return [c.get("text", "") for c in item.get("content", [])]


async def test_first_request_layout_with_agents_md_and_instructions(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    stop_walks_at(workspace)
    (workspace / "AGENTS.md").write_text("Always answer in haiku.\n")
    model = await fake_model([{"output": [message("ok")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    thread = (await client.call("thread/start", {
        "cwd": str(workspace), "baseInstructions": "BASE-MARKER", "developerInstructions": "DEV-MARKER",
        "approvalPolicy": "on-request", "sandbox": "read-only",
    }))["thread"]
    await client.call("turn/start", {"threadId": thread["id"], "input": [{"type": "text", "text": "hello"}]})
    await client.wait_notification("turn/completed", timeout=20)
    body = model.requests()[0]["body"]
    assert "instructions" not in body
    items = body["input"]
    assert items[0]["role"] == "developer" and _texts(items[0]) == ["BASE-MARKER"]
    dev = _texts(items[1])
    assert items[1]["role"] == "developer" and dev[0] == "DEV-MARKER"
    assert dev[-1].startswith("<permissions instructions>") and "read-only" in dev[-1]
    assert "on-request" in dev[-1]
    user_ctx = _texts(items[2])
    assert items[2]["role"] == "user"
    assert user_ctx[0].startswith(f"# AGENTS.md instructions for {workspace}") and "haiku" in user_ctx[0]
    assert user_ctx[1].startswith("<environment_context>") and f"<cwd>{workspace}</cwd>" in user_ctx[1]
    assert items[3]["role"] == "user" and _texts(items[3]) == ["hello"]
    assert body["prompt_cache_key"] == thread["id"] and body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"] and body["tool_choice"] == "auto"
