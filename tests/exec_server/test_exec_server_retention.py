"""Bounded output retention: what a finished process keeps, what a session keeps, what expiry frees.

Codex 0.169 keeps the newest 1 MiB of each process's output and answers a ``process/read`` behind that
window with the oldest chunk it still has (no error); the per-session cap is ours.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any

from exec_server.output_log import PAGE_BYTES, OutputLog, RetentionBudget
from exec_server.processes import output_head, output_message
from exec_server.session import Limits, SessionRegistry
from pycodex.jsonrpc import RpcPeer
from pycodex.jsonrpc.codec import VerbatimString
from pycodex.platform.spawn import SpawnRequest, spawn
from tests.support.execserver import STEP, raw_client, run_ws_server, start_params

CHUNK = 8192


def _chunk(i: int) -> bytes:
    return bytes([i % 251]) * CHUNK


def test_a_finished_process_keeps_only_its_newest_window_and_reads_start_there() -> None:
    log = OutputLog(retain_bytes=1 << 20)
    count = 20 * (1 << 20) // CHUNK  # 20 MiB
    for i in range(count):
        log.append_output("stdout", _chunk(i))
    log.mark_exited(0)
    log.mark_closed()
    assert log.retained_bytes <= 1 << 20
    assert log.mapped_bytes <= (1 << 20) + PAGE_BYTES  # at most one partly used page of slack
    got = log.read(0, None)
    seqs = [c.seq for c in got.chunks]
    assert seqs == list(range(count - len(seqs) + 1, count + 1))
    assert all(c.data == _chunk(c.seq - 1) for c in got.chunks)
    assert got.next_seq == count + 3 and got.closed
    behind = log.read(5, 1)  # far behind the window: the oldest retained chunk, as Codex answers
    assert [c.seq for c in behind.chunks] == [seqs[0]] and behind.next_seq == seqs[0] + 1


def test_the_session_budget_empties_finished_processes_first_then_trims_the_writer() -> None:
    budget = RetentionBudget(limit=3 * CHUNK)
    old, running = OutputLog(budget=budget), OutputLog(budget=budget)
    for i in range(2):
        old.append_output("stdout", _chunk(i))
    old.mark_exited(0)
    old.mark_closed()
    running.append_output("stdout", _chunk(7))
    new = OutputLog(budget=budget)
    for i in range(3):
        new.append_output("stderr", _chunk(i))
        assert budget.used <= budget.limit
    assert old.retained_bytes == 0 and old.mapped_bytes == 0
    assert running.retained_bytes == CHUNK  # a running process is not robbed for another
    assert [c.seq for c in new.read(0, None).chunks] == [2, 3]
    assert budget.used == sum(log.retained_bytes for log in (old, running, new))


def test_release_unmaps_everything_and_forget_leaves_the_budget() -> None:
    budget = RetentionBudget()
    log = OutputLog(budget=budget)
    for i in range(100):
        log.append_output("stdout", _chunk(i))
    log.forget()
    assert (log.retained_bytes, log.mapped_bytes, budget.used) == (0, 0, 0)
    assert log.read(0, None).chunks == []


async def test_session_expiry_frees_its_processes_and_their_output(tmp_path: Path) -> None:
    registry = SessionRegistry(Limits(detached_ttl_s=0.05))
    seen: list[str] = []

    async def notify(method: str, params: dict[str, Any]) -> None:
        seen.append(method)

    token = object()
    session = registry.attach(None, notify, token)
    spawned = await spawn(
        SpawnRequest(["head", "-c", "3000000", "/dev/zero"], tmp_path, {"PATH": "/usr/bin:/bin"})
    )
    proc = session.add("p", spawned, tty=False)
    assert await proc.wait_closed(STEP)
    assert 0 < session.retention.used <= session.limits.retain_bytes
    log = proc.log
    registry.detach(session, token)
    for _ in range(int(STEP / 0.02)):
        if not session.processes:
            break
        await asyncio.sleep(0.02)
    assert session.processes == {}
    assert (session.retention.used, log.mapped_bytes) == (0, 0)
    assert seen.count("process/closed") == 1
    await registry.shutdown()


def test_the_output_fast_path_encodes_exactly_what_the_peer_would() -> None:
    for process_id in ("1-abc", 'q"\\\u2028\u00e9\x01'):
        data = bytes(range(256))
        params = {
            "processId": process_id,
            "seq": 42,
            "stream": "stderr",
            "chunk": base64.b64encode(data).decode(),
        }
        want = RpcPeer(include_jsonrpc=False).notify("process/output", params)
        assert output_message(output_head(process_id), 42, "stderr", memoryview(data)) == want
        params["chunk"] = VerbatimString(params["chunk"])
        assert RpcPeer(include_jsonrpc=False).notify("process/output", params) == want


WRITER = (
    "import sys\n"
    "n = int(sys.argv[1])\n"
    "out = sys.stdout.buffer\n"
    "for i in range(n):\n"
    "    out.write(bytes([i % 251]) * 1000)\n"
)


def _expected(blocks: int) -> bytes:
    return b"".join(bytes([i % 251]) * 1000 for i in range(blocks))


async def test_concurrent_streams_arrive_whole_in_seq_order_in_codex_sized_chunks(tmp_path: Path) -> None:
    streams, blocks = 8, 2000  # 8 x 2 MB at once
    with run_ws_server("pycodex", tmp_path) as server:
        async with raw_client(server.url) as c:
            await c.initialize()
            for i in range(streams):
                argv = [sys.executable, "-c", WRITER, str(blocks)]
                params = {**start_params(f"s{i}", argv, tmp_path), "env": {"PATH": "/usr/bin:/bin"}}
                await c.ok("process/start", params)
            events: dict[str, list[dict[str, Any]]] = {f"s{i}": [] for i in range(streams)}
            early, c.notes = c.notes, []  # notifications that came before a start's response
            closed = 0
            for _ in range(1_000_000):
                if closed == streams:
                    break
                note = early.pop(0) if early else json.loads(await asyncio.wait_for(c.ws.recv(), STEP))
                events[note["params"]["processId"]].append(note)
                closed += note["method"] == "process/closed"
            want = _expected(blocks)
            for pid, evs in events.items():
                assert [e["params"]["seq"] for e in evs] == list(range(1, len(evs) + 1)), pid
                assert [e["method"] for e in evs[-2:]] == ["process/exited", "process/closed"]
                chunks = [base64.b64decode(e["params"]["chunk"]) for e in evs[:-2]]
                assert all(0 < len(chunk) <= CHUNK for chunk in chunks)
                assert b"".join(chunks) == want, pid
                # After the fact a read returns the newest 1 MiB, matching what was streamed.
                got = await c.ok(
                    "process/read", {"processId": pid, "afterSeq": 0, "maxBytes": None, "waitMs": 0}
                )
                tail = b"".join(base64.b64decode(chunk["chunk"]) for chunk in got["chunks"])
                assert 0 < len(tail) <= 1 << 20 and want.endswith(tail)
                assert got["chunks"][-1]["seq"] == len(evs) - 2 and got["nextSeq"] == len(evs) + 1
