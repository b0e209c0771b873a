"""Command output caps as Codex 0.169 applies them: the truncation rules, the bounded buffers, and a
20 MB command end to end (item, model request, rollout), plus a differential run against Codex."""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path
from typing import Any

import pytest

from app_server.store import persisted_item
from app_server.tools.output import (
    CollectedOutput,
    HeadTailBuffer,
    format_exec_output,
    model_output_policy,
)
from app_server.tools.unified_exec import MAX_OUTPUT_DELTAS, UnifiedExec
from app_server.truncation import (
    TruncationPolicy,
    approx_token_count,
    formatted_truncate_text,
    line_count,
    truncate_middle_with_marker,
    truncate_text,
)
from tests.support.fake_model import exec_call, message, model_config, run_turn

# 200,000 lines of 100 'a' and no final newline: 20,199,999 bytes.
BIG_CMD = "head -c 20000000 /dev/zero | tr '\\0' a | fold -w 100"
BIG_BYTES = 20_199_999
MIB = 1 << 20


# -- the truncation rules --------------------------------------------------------------------------------


def test_a_byte_budget_keeps_half_at_each_end_and_counts_removed_chars() -> None:
    assert truncate_text("0123456789abcdef", TruncationPolicy.bytes(10)) == "01234…6 chars truncated…bcdef"
    assert truncate_text("0123456789", TruncationPolicy.bytes(10)) == "0123456789"
    assert truncate_text("abc", TruncationPolicy.bytes(0)) == "…3 chars truncated…"
    assert truncate_text("", TruncationPolicy.bytes(0)) == ""


def test_a_token_budget_reports_the_removed_bytes_as_tokens() -> None:
    text = "x" * 1000
    # 4 tokens = 16 bytes kept; (1000 - 16) / 4 = 246 tokens removed
    assert truncate_text(text, TruncationPolicy.tokens(4)) == "x" * 8 + "…246 tokens truncated…" + "x" * 8
    assert truncate_text("x" * 1001, TruncationPolicy.tokens(4)).count("247 tokens") == 1  # rounds up


def test_multibyte_text_is_cut_on_character_boundaries() -> None:
    text = "é" * 10  # 20 bytes
    # 9 bytes: the head gets 4 bytes (2 chars), the tail 5 bytes rounded up to 4 (2 chars)
    assert truncate_text(text, TruncationPolicy.bytes(9)) == "éé…6 chars truncated…éé"
    # 7 bytes: 3 for the head cannot hold "a€" (4 bytes); the tail's 4 bytes start inside "a€b" and round up
    assert truncate_text("a€b" * 10, TruncationPolicy.bytes(7)) == "a…27 chars truncated…€b"
    # what is kept never splits a character
    for budget in range(0, 24):
        cut = truncate_text("日本語テキスト", TruncationPolicy.bytes(budget))
        assert "\ufffd" not in cut


def test_formatted_truncation_adds_the_original_size_header() -> None:
    text = "".join(f"{i}\n" for i in range(1, 3001))
    out = formatted_truncate_text(text, TruncationPolicy.bytes(10_000))
    assert out.startswith(
        f"Warning: truncated output (original token count: {approx_token_count(text)})\n"
        "Total output lines: 3000\n\n1\n2\n3\n"
    )
    assert out.endswith("2999\n3000\n") and "…3893 chars truncated…" in out
    assert formatted_truncate_text("short\n", TruncationPolicy.bytes(10)) == "short\n"


def test_line_count_follows_rust_lines() -> None:
    assert [line_count(t) for t in ("", "a", "a\n", "a\nb", "a\n\n", "\n")] == [0, 1, 1, 2, 2, 1]


def test_truncate_with_marker_fits_the_hard_limit() -> None:
    marker = "\n... cut ...\n"
    out = truncate_middle_with_marker("z" * 1000, 100, marker)
    assert len(out.encode()) == 100 and marker in out
    assert out.startswith("z" * 43) and out.endswith("z" * 44)
    assert truncate_middle_with_marker("é" * 100, 5, marker) == "éé"  # no room for the marker: a prefix
    assert len(truncate_middle_with_marker("é" * 100, 100, marker).encode()) <= 100


def test_model_budget_is_the_requested_tokens_only_when_strictly_tighter() -> None:
    assert model_output_policy(None) == TruncationPolicy.bytes(10_000)
    assert model_output_policy(40) == TruncationPolicy.tokens(40)
    assert model_output_policy(2_500) == TruncationPolicy.bytes(10_000)  # 10,000 bytes either way
    assert model_output_policy(20_000) == TruncationPolicy.bytes(10_000)


def test_persisted_command_output_is_cut_to_64_kib() -> None:
    item = {"type": "commandExecution", "id": "c", "aggregatedOutput": "".join(f"{i}\n" for i in range(40_000))}
    stored = persisted_item(item)
    out = stored["aggregatedOutput"]
    assert len(out.encode()) == 64 * 1024 and "\n... command output truncated for persistence ...\n" in out
    assert out.startswith("0\n1\n2\n") and out.endswith("39998\n39999\n")
    assert item["aggregatedOutput"] != out  # the live item is untouched
    small = {"type": "commandExecution", "id": "c", "aggregatedOutput": "x" * 65536}
    assert persisted_item(small) is small
    message_item = {"type": "agentMessage", "id": "m", "text": "x" * 100_000}
    assert persisted_item(message_item) is message_item


# -- the bounded buffer ------------------------------------------------------------------------------------


def _reference(data: bytes, max_bytes: int) -> CollectedOutput:
    head_n = max_bytes // 2
    tail_n = max_bytes - head_n
    if len(data) <= max_bytes:
        return CollectedOutput(data, len(data), 0)
    omitted = len(data) - head_n - tail_n
    kept = data[:head_n] + f"\n... {omitted} bytes omitted ...\n".encode() + data[len(data) - tail_n:]
    return CollectedOutput(kept, len(data), omitted)


@pytest.mark.parametrize("max_bytes", [0, 1, 7, 64, 1000])
def test_any_chunking_keeps_the_same_head_tail_and_exact_counts(max_bytes: int) -> None:
    rng = random.Random(max_bytes)
    data = bytes(rng.randrange(256) for _ in range(5000))
    for _ in range(30):
        buffer = HeadTailBuffer(max_bytes)
        pos = 0
        while pos < len(data):
            size = rng.choice([1, 2, 3, 50, 499, 500, 501, 2000])
            buffer.push(data[pos:pos + size])
            pos += size
        assert buffer.retained_bytes <= max_bytes
        assert buffer.snapshot() == _reference(data, max_bytes)


def test_drain_hands_over_and_starts_again() -> None:
    buffer = HeadTailBuffer(10)
    buffer.push(b"0123456789abc")
    first = buffer.drain()
    assert first == CollectedOutput(b"01234\n... 3 bytes omitted ...\n89abc", 13, 3)
    assert buffer.drain() == CollectedOutput(b"", 0, 0)
    buffer.push(b"xy")
    assert buffer.snapshot() == CollectedOutput(b"xy", 2, 0)


class _ChunkProcess:
    """An ExecProcess that prints fixed chunks and exits 0 once they are all read."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = list(chunks)
        self._drained = asyncio.Event()

    @property
    def pid(self) -> str | None:
        return None

    @property
    def exit_code(self) -> int | None:
        return 0

    async def read(self) -> bytes:
        await asyncio.sleep(0)
        if not self._chunks:
            self._drained.set()
            return b""
        return self._chunks.pop(0)

    async def write(self, data: bytes) -> None:
        raise BrokenPipeError

    async def wait(self) -> int:
        await self._drained.wait()
        return 0

    async def kill(self) -> None:
        return None


async def test_a_session_counts_every_byte_and_streams_characters_split_across_chunks() -> None:
    text = "héllo wörld ✓ 日本\n" * 50_000
    data = text.encode()
    chunks = [data[i:i + 4093] for i in range(0, len(data), 4093)]  # boundaries fall inside characters
    deltas: list[str] = []

    async def on_output(delta: str) -> None:
        deltas.append(delta)

    sessions = UnifiedExec()
    session = sessions.open(_ChunkProcess(chunks), on_output)
    result = await asyncio.wait_for(sessions.collect(session, 5_000, 0.0), 10)
    assert result.exit_code == 0
    assert "".join(deltas) == text  # no replacement characters from the chunk boundaries
    assert result.output == _reference(data, MIB)
    assert result.output.total_bytes == len(data) > MIB
    assert session.transcript.snapshot() == _reference(data, MIB)
    model_text = format_exec_output(output=result.output, wall_time_s=0.5, exit_code=0, session_id=None,
                                    max_output_tokens=None)
    omitted = len(data) - MIB
    header = (f"Process exited with code 0\nOriginal token count: {(len(data) + 3) // 4}\nOutput:\n"
              f"Warning: truncated output (original token count: {(len(data) + 3) // 4})\n"
              f"... {omitted} bytes omitted ...\n\nhéllo")
    assert header in model_text and len(model_text.encode()) < 10_300


async def test_deltas_stop_after_the_codex_cap_but_the_output_is_all_counted() -> None:
    chunks = [f"{i}\n".encode() for i in range(MAX_OUTPUT_DELTAS + 500)]
    deltas: list[str] = []

    async def on_output(delta: str) -> None:
        deltas.append(delta)

    sessions = UnifiedExec()
    session = sessions.open(_ChunkProcess(chunks), on_output)
    result = await asyncio.wait_for(sessions.collect(session, 5_000, 0.0), 20)
    assert len(deltas) == MAX_OUTPUT_DELTAS and deltas[-1] == f"{MAX_OUTPUT_DELTAS - 1}\n"
    everything = b"".join(chunks)
    assert result.output == _reference(everything, MIB)
    assert session.transcript.snapshot().data == everything


# -- end to end -------------------------------------------------------------------------------------------


def _function_output(model: Any, call_id: str) -> str:
    for request in model.requests():
        for item in request["body"].get("input", []):
            if item.get("type") == "function_call_output" and item["call_id"] == call_id:
                return str(item["output"])
    raise AssertionError(f"the model never received the output of {call_id}")


async def _run_big_command(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path,
                           **spawn: Any) -> tuple[Any, Any, str]:
    # The longest yield either server allows (30 s), not the default 10 s: on a loaded machine 20 MB through
    # a pipe can take longer, and the call returns as soon as the command exits anyway.
    big = exec_call("call_big", BIG_CMD, yield_time_ms=30_000)
    model = await fake_model([{"output": [big]}, {"output": [message("done")]}],
                             name=f"model-{codex_home.name}")
    model_config(codex_home, model.url, sandbox_mode="danger-full-access")
    client = await app_server(codex_home=codex_home, **spawn)
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    final = await run_turn(client, thread_id, "print a lot", timeout=60)
    assert final["status"] == "completed"
    return model, client, thread_id


async def test_a_20_mb_command_stays_small_in_the_item_the_request_and_the_rollout(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    model, client, thread_id = await _run_big_command(app_server, fake_model, codex_home, workspace)
    omitted = BIG_BYTES - MIB
    marker = f"... {omitted} bytes omitted ..."

    item = next(m["params"]["item"] for m in client.notifications("item/completed")
                if m["params"]["item"]["id"] == "call_big")
    aggregated = item["aggregatedOutput"]
    assert len(aggregated) == MIB + len(marker) + 2
    assert aggregated[MIB // 2:MIB // 2 + len(marker) + 2] == f"\n{marker}\n"
    deltas = client.notifications("item/commandExecution/outputDelta")
    # The stream is not held to the retention cap (Codex may drop deltas when its channel lags, so not ==)
    assert 10 * MIB < sum(len(d["params"]["delta"]) for d in deltas) <= BIG_BYTES

    output = _function_output(model, "call_big")
    tokens = (BIG_BYTES + 3) // 4
    head, body = output.split("Output:\n", 1)
    assert re.fullmatch(
        rf"Chunk ID: [0-9a-f]{{6}}\nWall time: [0-9.]+ seconds\nProcess exited with code 0\n"
        rf"Original token count: {tokens}\n", head)
    assert body.startswith(f"Warning: truncated output (original token count: {tokens})\n{marker}\n\n" + "a" * 100)
    assert f"…{MIB + len(marker) + 2 - 10_000} chars truncated…" in body
    assert "Total output lines" not in body
    assert 10_000 < len(output) < 10_300

    rollouts = list(codex_home.rglob("rollout-*.jsonl"))
    assert len(rollouts) == 1 and rollouts[0].stat().st_size < 300_000, [p.stat().st_size for p in rollouts]
    read = await client.call("thread/read", {"threadId": thread_id, "includeTurns": True})
    stored = [i for t in read["thread"]["turns"] for i in t["items"] if i["id"] == "call_big"]
    assert len(stored) == 1
    assert len(stored[0]["aggregatedOutput"].encode()) == 64 * 1024
    assert "command output truncated for persistence" in stored[0]["aggregatedOutput"]


@pytest.mark.codex
async def test_the_model_sees_the_same_20_mb_output_as_from_codex(
    app_server, fake_model, codex_bin: Path, tmp_path: Path, workspace: Path
) -> None:
    results: dict[str, tuple[str, str]] = {}
    for name, argv in (("pycodex", None), ("codex", [str(codex_bin), "app-server"])):
        spawn: dict[str, Any] = {} if argv is None else {"argv": argv}
        home = tmp_path / f"home-{name}"
        model, client, _ = await _run_big_command(app_server, fake_model, home, workspace, **spawn)
        item = next(m["params"]["item"] for m in client.notifications("item/completed")
                    if m["params"]["item"]["id"] == "call_big")
        # Chunk ID and wall time differ from run to run; everything after them must match
        results[name] = (_function_output(model, "call_big").split("\n", 2)[2], item["aggregatedOutput"])
    assert results["pycodex"][0] == results["codex"][0]
    assert results["pycodex"][1] == results["codex"][1]

