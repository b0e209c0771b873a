"""A two-patch turn shows the same notification sequence on pycodex and on Codex 0.169 (codex-marked).

What is compared is the order of the turn's file-change, diff and token-usage notifications, and each
``turn/diff/updated`` diff (paths made relative): Codex reports the turn's diff once per applied patch and
again after every model response from the first patch on, which is easy to get wrong by one.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.app_server.tools.test_patch_tool import patch_call, patch_of
from tests.support.fake_model import message, model_config, run_turn
from tests.support.tools import require_codex

WATCHED = {"item/started", "item/completed", "turn/diff/updated", "thread/tokenUsage/updated", "turn/completed"}


def _sequence(client: Any) -> list[str]:
    out: list[str] = []
    for note in client.messages:
        method = note.get("method")
        if method not in WATCHED or "id" in note:
            continue
        item = note["params"].get("item")
        if item is not None and item["type"] != "fileChange":
            continue
        out.append(method if item is None else f"{method}:{item['id']}")
    return out


@pytest.mark.codex
async def test_a_two_patch_turn_reports_the_diff_as_codex_does(app_server, fake_model, tmp_path: Path) -> None:
    codex_bin = require_codex()
    seen: dict[str, tuple[list[str], list[str]]] = {}
    for label, argv in (("pycodex", [sys.executable, "-m", "pycodex", "app-server"]),
                        ("codex", [str(codex_bin), "app-server"])):
        home, workspace = tmp_path / f"home_{label}", tmp_path / f"ws_{label}"
        workspace.mkdir()
        (workspace / "a.txt").write_text("one\ntwo\n")
        model = await fake_model([
            {"output": [patch_call("p1", patch_of("*** Update File: a.txt\n@@\n-one\n+uno\n two\n"))]},
            {"output": [patch_call("p2", patch_of("*** Add File: b.txt\n+bee\n"))]},
            {"output": [message("done")]},
        ], name=f"model_{label}")
        model_config(home, model.url)
        (home / "config.toml").write_text((home / "config.toml").read_text().replace('"mock-model"', '"gpt-5.5"'))
        client = await app_server(argv=argv, codex_home=home)
        thread_id = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=60))["thread"]["id"]
        turn = await run_turn(client, thread_id, "edit", timeout=60)
        assert turn["status"] == "completed", (label, turn)
        assert (workspace / "a.txt").read_text() == "uno\ntwo\n" and (workspace / "b.txt").read_text() == "bee\n"
        diffs = [n["params"]["diff"] for n in client.notifications("turn/diff/updated")]
        seen[label] = (_sequence(client), diffs)
        await client.close()
    assert seen["pycodex"][0] == seen["codex"][0]
    assert seen["pycodex"][1] == seen["codex"][1]
