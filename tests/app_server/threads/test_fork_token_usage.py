"""`thread/fork` reports the fork's token usage (`thread/tokenUsage/updated`) only when it sends the history, as
Codex 0.169 does: the TUI forks with `excludeTurns: true` and, against Codex, has no usage for the new fork (its
exit line prints none); with the turns included the usage comes before `thread/started`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import message, model_config, run_turn


@pytest.mark.parametrize("exclude_turns", [True, False])
async def test_fork_reports_usage_only_with_its_history(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, exclude_turns: bool
) -> None:
    model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url)
    client = await app_server(codex_home=codex_home, experimental=True)
    source = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, source, "hello")
    assert client.notifications("thread/tokenUsage/updated"), "the source's turn reported no usage to fork"

    fork = (await client.call("thread/fork", {"threadId": source, "excludeTurns": exclude_turns}))["thread"]["id"]
    # thread/started is the fork's last notice: whatever usage report comes, comes before it.
    await client.wait_notification("thread/started", lambda p: p["thread"]["id"] == fork)
    reports = [n for n in client.notifications("thread/tokenUsage/updated") if n["params"]["threadId"] == fork]
    if exclude_turns:
        assert reports == []
    else:
        [report] = reports
        assert report["params"]["tokenUsage"]["total"]["totalTokens"] > 0
