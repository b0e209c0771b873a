"""``pycodex exec --json`` prints an apply_patch turn's ``file_change`` items as ``codex exec --json`` does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.pycodex.test_exec_cli import make_env  # noqa: F401  (the fixture)
from tests.support.fake_model import message

PATCH = ("*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** Update File: a.txt\n@@\n-one\n+uno\n"
         "*** Delete File: gone.txt\n*** End Patch")
SCRIPT = [
    {"output": [{"type": "custom_tool_call", "name": "apply_patch", "call_id": "c1", "input": PATCH}]},
    {"output": [message("done")]},
]


def _normalised(events: list[dict[str, Any]], work: Path) -> list[Any]:
    """The events with the thread id, usage and the run's directory taken out."""
    out: list[Any] = []
    for event in events:
        event = {k: v for k, v in event.items() if k not in ("thread_id", "usage")}
        item = event.get("item")
        if isinstance(item, dict) and item.get("type") == "error" and "metadata" in str(item.get("message")):
            continue
        out.append(json.loads(json.dumps(event).replace(str(work), "WORK")))
    return out


@pytest.mark.codex
async def test_file_change_events_match_codex(make_env: Any, codex_bin: Path) -> None:  # noqa: F811
    runs = []
    for binary in (None, codex_bin):
        env = await make_env(SCRIPT)
        (env.work / "a.txt").write_text("one\ntwo\n")
        (env.work / "gone.txt").write_text("bye\n")
        run = await env.exec("--json", "--skip-git-repo-check", "-m", "gpt-5.5", "edit", binary=binary)
        assert run.code == 0, run.stderr
        assert (env.work / "a.txt").read_text() == "uno\ntwo\n" and not (env.work / "gone.txt").exists()
        runs.append(_normalised(run.events, env.work))
    ours, theirs = runs
    assert ours == theirs
    changes = [{"path": "WORK/a.txt", "kind": "update"}, {"path": "WORK/gone.txt", "kind": "delete"},
               {"path": "WORK/hello.txt", "kind": "add"}]
    assert {"type": "item.completed",
            "item": {"id": "item_0", "type": "file_change", "changes": changes, "status": "completed"}} in ours
