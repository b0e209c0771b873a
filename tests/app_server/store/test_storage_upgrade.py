"""A store written by pycodex's last release (0.1.0) opens in this build with nothing lost, in Codex's format.

The recording (scripts/capture_release_store.py, run with the release's own checkout) holds the release's
rollouts, its index and its own thread/read and thread/list answers. This build must answer the same threads,
turns and items; rewrite every rollout in Codex's format on the first start; keep each original byte for byte
under ``pycodex_migrated/``; and continue a migrated thread with the old history sent to the model.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from app_server.store.migrate import BACKUP_DIR, is_legacy_file
from tests.support.fake_model import message, model_config, run_turn

RECORDING = Path(__file__).resolve().parents[2] / "data" / "storage" / "pycodex_0_1_0"
# Fields the release did not have, or that this build derives differently on purpose.
NEW_OR_DERIVED = {"path", "status", "updatedAt", "recencyAt", "environments"}  # environments: loaded only


def _install(home: Path, workspace: Path) -> dict[str, Any]:
    """Copy the recorded home under ``home`` with its placeholders filled in; return the release's answers."""
    for source in sorted((RECORDING / "home").rglob("*")):
        if not source.is_file():
            continue
        target = home / source.relative_to(RECORDING / "home")
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.suffix == ".jsonl":
            target.write_text(source.read_text().replace("@HOME@", str(home)).replace("@WORK@", str(workspace)))
        else:
            shutil.copy2(source, target)
    answers: dict[str, Any] = json.loads(
        (RECORDING / "answers.json").read_text().replace("@HOME@", str(home)).replace("@WORK@", str(workspace))
    )
    return answers


def _comparable(thread: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in thread.items() if k not in NEW_OR_DERIVED}


def _rollouts(home: Path) -> list[Path]:
    return sorted(p for top in ("sessions", "archived_sessions") for p in (home / top).rglob("rollout-*.jsonl"))


async def test_a_store_of_the_last_release_opens_with_nothing_lost(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    answers = _install(codex_home, workspace)
    originals = {p: p.read_bytes() for p in _rollouts(codex_home)}
    assert originals and all(is_legacy_file(p) for p in originals)
    model = await fake_model({"responses": [{"output": [message("after the upgrade")]}]})
    model_config(codex_home, model.url)
    config = codex_home / "config.toml"  # the release's threads name their provider "mock"
    config.write_text(config.read_text().replace("mock_provider", "mock"))
    client = await app_server()

    listed = await client.call("thread/list", {})
    # The release listed its loaded threads with their environments and fork parent; Codex's thread/list
    # fills neither (the threads are not loaded here), so those two are left out of the list comparison.
    for got, want in zip(listed["data"], answers["list"]["data"], strict=True):
        differing = {k: (v, want.get(k)) for k, v in _comparable(got).items() if v != want.get(k)}
        assert set(differing) <= {"forkedFromId"}, differing
    for thread_id, old in answers["reads"].items():
        new = await client.call("thread/read", {"threadId": thread_id, "includeTurns": True})
        assert _comparable(new["thread"]) == _comparable(old["thread"]), thread_id

    # Every rollout is in Codex's format now, and each original is kept, byte for byte.
    for path, data in originals.items():
        first = json.loads(path.read_text().splitlines()[0])
        assert first["type"] == "session_meta" and first["payload"]["session_id"] == first["payload"]["id"]
        assert not is_legacy_file(path)
        assert (codex_home / BACKUP_DIR / path.relative_to(codex_home)).read_bytes() == data

    # A migrated thread goes on: the model gets the release's history, the new turn is kept beside the old.
    named = next(t for t, a in answers["reads"].items() if a["thread"]["name"] == "old thread")
    await client.call("thread/resume", {"threadId": named})
    turn = await run_turn(client, named, "after the upgrade?")
    assert turn["status"] == "completed"
    sent = json.dumps(model.requests()[-1]["body"]["input"])
    assert "say hello" in sent and "hello there" in sent and "echo hi" in sent and "ran it" in sent
    read = await client.call("thread/read", {"threadId": named, "includeTurns": True})
    old_turns = answers["reads"][named]["thread"]["turns"]
    assert read["thread"]["turns"][: len(old_turns)] == old_turns
    assert read["thread"]["name"] == "old thread" and len(read["thread"]["turns"]) == len(old_turns) + 1
