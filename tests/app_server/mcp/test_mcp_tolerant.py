"""MCP requests a newer client makes, and a server that answers badly: one broken server does not fail the
listing of the others, and 0.171's extra fields (``environmentId``) are ignored, as Codex does."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

from tests.support.fake_model import model_config
from tests.support.mcp_servers import CALC_SERVER


def _table(name: str, *extra_args: str) -> str:
    args = json.dumps([str(CALC_SERVER), "stdio", f"marker-{uuid.uuid4().hex}", *extra_args])
    return f"\n[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = {args}\n"


async def test_a_server_answering_resources_list_with_nothing_does_not_fail_the_listing(
    app_server: Any, codex_home: Path, workspace: Path
) -> None:
    model_config(codex_home, "http://127.0.0.1:9/v1", approval_policy="never")
    with (codex_home / "config.toml").open("a") as f:
        f.write(_table("broken", "empty-resources") + _table("calc"))
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    for params in ({"threadId": thread_id}, {"threadId": thread_id, "environmentId": "local"}, {}):
        status = await client.call("mcpServerStatus/list", params, timeout=60)
        by_name = {s["name"]: s for s in status["data"]}
        assert sorted(by_name) == ["broken", "calc"]
        assert by_name["broken"]["resources"] == []  # its bad answer, not an error for everyone
        assert "add" in by_name["broken"]["tools"]
        assert [r["uri"] for r in by_name["calc"]["resources"]] == ["calc://greeting"]
    await client.close()
