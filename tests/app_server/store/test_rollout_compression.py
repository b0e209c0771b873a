"""rollout/compress and compressed rollouts: a cold rollout becomes ``.jsonl.zst`` (Codex 0.169's format), pycodex
still lists, reads and resumes it (restoring the plain file first, as Codex does), and Codex and pycodex read
each other's compressed rollouts."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest
import zstandard

from app_server.store.compression import MARKER_FILE, compress_cold
from app_server.store.writer_lock import WriterLock
from tests.support.fake_model import message, model_config, run_turn

EIGHT_DAYS = 8 * 24 * 3600


def _rollouts(home: Path, pattern: str = "rollout-*.jsonl") -> list[Path]:
    return sorted(home.glob(f"sessions/*/*/*/{pattern}"))


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


async def _stored_thread(app_server: Any, fake_model: Any, home: Path, workspace: Path, argv: Any = None) -> str:
    """A thread with one finished turn, written by a server that is then shut down (no writer left)."""
    model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"},
                             name=f"model_{home.name}")
    model_config(home, model.url)
    client = await app_server(argv=argv, codex_home=home, experimental=True)
    tid: str = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, tid, "hello")
    await client.close()
    return tid


async def _until(check: Any, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


async def test_compress_pass_compresses_cold_rollouts_only_and_keeps_a_cooldown(
    app_server: Any, fake_model: Any, tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    await _stored_thread(app_server, fake_model, home, workspace)
    await _stored_thread(app_server, fake_model, home, workspace)
    cold, warm = _rollouts(home)
    original = cold.read_bytes()
    _age(cold, EIGHT_DAYS)
    mtime = cold.stat().st_mtime_ns

    stale, fresh = cold.with_name("rollout-compress-dead.tmp"), cold.with_name("rollout-compress-live.tmp")
    stale.write_bytes(b"x")
    fresh.write_bytes(b"x")
    _age(stale, 7 * 3600)
    stats = compress_cold(home)
    assert (stats.ran, stats.compressed, stats.skipped) == (True, 1, 1)
    assert (stale.exists(), fresh.exists()) == (False, True)  # a dead pass's temp file goes after 6 hours
    packed = cold.with_name(cold.name + ".zst")
    assert not cold.exists() and warm.exists() and packed.stat().st_mtime_ns == mtime
    with packed.open("rb") as f:
        assert zstandard.ZstdDecompressor().stream_reader(f).read() == original
    assert (home / ".tmp" / MARKER_FILE).exists()
    _age(warm, EIGHT_DAYS)
    assert not compress_cold(home).ran  # a pass within 6 hours: skipped
    (home / ".tmp" / MARKER_FILE).unlink()
    tid = warm.name.removesuffix(".jsonl")[-36:]
    lock = WriterLock.acquire(home, tid)  # a thread open for writing (here or in Codex) is left alone
    try:
        assert (compress_cold(home).compressed, warm.exists()) == (0, True)
    finally:
        lock.release()


async def test_rollout_compress_then_list_read_and_resume(
    app_server: Any, fake_model: Any, tmp_path: Path, workspace: Path
) -> None:
    home = tmp_path / "home"
    tid = await _stored_thread(app_server, fake_model, home, workspace)
    [plain] = _rollouts(home)
    _age(plain, EIGHT_DAYS)
    client = await app_server(codex_home=home, experimental=True)
    assert await client.call("rollout/compress") == {}
    await _until(lambda: not plain.exists() and bool(_rollouts(home, "*.jsonl.zst")))
    listed = (await client.call("thread/list", {}))["data"]
    assert [(t["id"], t["path"]) for t in listed] == [(tid, str(plain))]  # listed under its plain path
    read = (await client.call("thread/read", {"threadId": tid, "includeTurns": True}))["thread"]
    assert [t["status"] for t in read["turns"]] == ["completed"]
    assert plain.exists() and not _rollouts(home, "*.jsonl.zst")  # restored to the plain file on use
    await client.call("thread/resume", {"threadId": tid})
    assert (await run_turn(client, tid, "again"))["status"] == "completed"


@pytest.mark.codex
async def test_codex_and_pycodex_read_each_others_compressed_rollouts(
    app_server: Any, fake_model: Any, codex_bin: Path, tmp_path: Path, workspace: Path
) -> None:
    codex = [str(codex_bin), "app-server"]
    # pycodex compresses a rollout pycodex wrote; Codex reads and resumes it.
    ours = tmp_path / "ours"
    tid = await _stored_thread(app_server, fake_model, ours, workspace)
    [plain] = _rollouts(ours)
    _age(plain, EIGHT_DAYS)
    assert compress_cold(ours).compressed == 1
    client = await app_server(argv=codex, codex_home=ours, experimental=True)
    read = (await client.call("thread/read", {"threadId": tid, "includeTurns": True}))["thread"]
    assert [t["status"] for t in read["turns"]] == ["completed"]
    await client.call("thread/resume", {"threadId": tid})
    assert (await run_turn(client, tid, "again"))["status"] == "completed"
    await client.close()

    # Codex compresses a rollout Codex wrote; pycodex lists and reads it.
    theirs = tmp_path / "theirs"
    tid = await _stored_thread(app_server, fake_model, theirs, workspace, argv=codex)
    [plain] = _rollouts(theirs)
    _age(plain, EIGHT_DAYS)
    client = await app_server(argv=codex, codex_home=theirs, experimental=True)
    assert await client.call("rollout/compress") == {}
    await _until(lambda: not plain.exists() and bool(_rollouts(theirs, "*.jsonl.zst")))
    await client.close()
    ours_client = await app_server(codex_home=theirs, experimental=True)
    assert tid in [t["id"] for t in (await ours_client.call("thread/list", {}))["data"]]
    read = (await ours_client.call("thread/read", {"threadId": tid, "includeTurns": True}))["thread"]
    assert [t["status"] for t in read["turns"]] == ["completed"]
