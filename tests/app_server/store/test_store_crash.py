"""Crash safety of the thread store: a writer process SIGKILLed mid-turn, torn lines, lost or corrupt index."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from app_server.store import ThreadStore, new_uuid7

# The child appends items to a second turn forever and reports each one only after append() returned, the
# point at which a server would send item/completed. Big items make a kill inside a write likely.
CHILD = textwrap.dedent(
    """
    import sys, time
    from app_server.store import ThreadStore, new_uuid7

    store = ThreadStore(sys.argv[1], fsync=True)
    writer = store.create_thread({"cwd": "/ws", "modelProvider": "mock", "model": "m", "source": "vscode"})
    first = new_uuid7()
    writer.turn_started(first)
    user = {"type": "text", "text": "before the crash", "text_elements": []}
    writer.item_completed(first, {"type": "userMessage", "id": new_uuid7(), "content": [user]})
    writer.item_completed(first, {"type": "agentMessage", "id": "msg_first", "text": "done"})
    writer.turn_ended(first, "completed")
    second = new_uuid7()
    writer.turn_started(second)
    print("THREAD", writer.thread_id, first, second, flush=True)
    for i in range(100000):
        writer.response_items([{"type": "message", "role": "assistant", "content": [], "pad": "x" * 50000}])
        writer.item_completed(second, {"type": "agentMessage", "id": f"item-{i}", "text": "y" * 20000})
        print("DONE", i, flush=True)
    """
)


def run_child_until(home: Path, items_wanted: int, timeout_s: float = 20.0) -> tuple[list[str], int]:
    """Start the writer child, SIGKILL it once it acknowledged `items_wanted` items; return its header
    fields and the highest acknowledged item number."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    header: list[str] = []
    last_done = -1
    buffer = b""
    deadline = time.monotonic() + timeout_s
    try:
        with selectors.DefaultSelector() as sel:
            assert proc.stdout is not None
            sel.register(proc.stdout, selectors.EVENT_READ)
            while last_done < items_wanted:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not sel.select(timeout=remaining):
                    pytest.fail(f"child did not acknowledge {items_wanted} items in time (last {last_done})")
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    stderr = proc.stderr.read().decode() if proc.stderr else ""
                    pytest.fail(f"child exited early: {stderr[-2000:]}")
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    fields = line.decode().split()
                    if fields[0] == "THREAD":
                        header = fields[1:]
                    elif fields[0] == "DONE":
                        last_done = int(fields[1])
        os.kill(proc.pid, signal.SIGKILL)
        # Items acknowledged after our last read but before the kill are fine: they must be stored as well.
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert proc.returncode == -signal.SIGKILL
    return header, last_done


def test_a_killed_writer_loses_no_acknowledged_item_and_its_open_turn_reads_interrupted(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (thread_id, first, second), acknowledged = run_child_until(home, items_wanted=15)

    with ThreadStore(home, fsync=False) as store:
        loaded = store.load_thread(thread_id)
        assert [t["id"] for t in loaded.turns] == [first, second]
        assert loaded.turns[0]["status"] == "completed"
        assert loaded.turns[1]["status"] == "interrupted"
        stored = [item["id"] for item in loaded.turns[1]["items"]]
        assert stored[: acknowledged + 1] == [f"item-{i}" for i in range(acknowledged + 1)]
        page = store.list_threads()
        assert [t["id"] for t in page.threads] == [thread_id]
        assert page.threads[0]["preview"] == "before the crash"

        # The thread resumes: the next turn is appended after whatever the crash left behind.
        writer = store.open_writer(thread_id)
        third = new_uuid7()
        writer.turn_started(third)
        writer.item_completed(third, {"type": "agentMessage", "id": "after", "text": "resumed"})
        writer.turn_ended(third, "completed")
    with ThreadStore(home, fsync=False) as store:
        turns = store.load_thread(thread_id).turns
        assert [t["status"] for t in turns] == ["completed", "interrupted", "completed"]
        assert turns[2]["items"][0]["id"] == "after"


def test_after_a_crash_a_deleted_or_corrupt_database_is_rebuilt(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (thread_id, _first, _second), _ = run_child_until(home, items_wanted=3)
    db = home / "state_pycodex.sqlite"
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.write_bytes(b"\x00garbage" * 512)
    with ThreadStore(home, fsync=False) as store:
        assert [t["id"] for t in store.list_threads().threads] == [thread_id]
    db.unlink()
    with ThreadStore(home, fsync=False) as store:
        assert store.list_threads().threads[0]["preview"] == "before the crash"


def _thread_with_items(home: Path, count: int) -> tuple[str, Path, str]:
    with ThreadStore(home, fsync=False) as store:
        writer = store.create_thread({"cwd": "/ws", "source": "vscode"})
        turn = new_uuid7()
        writer.turn_started(turn)
        for i in range(count):
            writer.item_completed(turn, {"type": "agentMessage", "id": f"item-{i}", "text": "t"})
        assert writer.path is not None
        return writer.thread_id, writer.path, turn


def test_a_torn_last_line_is_ignored_on_read_and_cut_off_before_the_next_append(tmp_path: Path) -> None:
    home = tmp_path / "home"
    thread_id, path, turn = _thread_with_items(home, 3)
    with path.open("ab") as f:
        f.write(b'{"timestamp":"2026-11-30T00:00:00.000Z","ordinal":5,"type":"item_comp')
    with ThreadStore(home, fsync=False) as store:
        items = store.load_thread(thread_id).turns[0]["items"]
        assert [i["id"] for i in items] == ["item-0", "item-1", "item-2"]
        writer = store.open_writer(thread_id)
        writer.item_completed(turn, {"type": "agentMessage", "id": "item-3", "text": "t"})
        writer.turn_ended(turn, "completed")
    data = path.read_bytes()
    assert b"item_comp\n" not in data and b"item_comp{" not in data
    with ThreadStore(home, fsync=False) as store:
        loaded = store.load_thread(thread_id)
        assert [i["id"] for i in loaded.turns[0]["items"]] == ["item-0", "item-1", "item-2", "item-3"]
        assert loaded.turns[0]["status"] == "completed"
        assert loaded.record_count == 7


def test_a_damaged_line_in_the_middle_is_skipped_and_the_rest_is_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    thread_id, path, _turn = _thread_with_items(home, 3)
    lines = path.read_bytes().split(b"\n")
    lines[3] = lines[3][:20] + b"\xff\xfe garbage"  # item-1 (lines: meta, turn_started, item-0, item-1, ...)
    path.write_bytes(b"\n".join(lines))
    with ThreadStore(home, fsync=False) as store:
        items: list[dict[str, Any]] = store.load_thread(thread_id).turns[0]["items"]
        assert [i["id"] for i in items] == ["item-0", "item-2"]
