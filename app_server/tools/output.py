"""Command output as Codex bounds it: retained head and tail, and the text the model is sent.

Two caps apply, as in Codex 0.169:

* Retention: a process's output is kept in a ``HeadTailBuffer`` of 1 MiB (the first 512 KiB and the
  last 512 KiB); what falls between is only counted. One buffer collects each ``exec_command`` /
  ``write_stdin`` call's output, another the whole process for the item's ``aggregatedOutput``.
* The model's copy (``function_call_output.output``)::

    Chunk ID: <hex6>
    Wall time: <seconds> seconds
    Process exited with code <n>          | Process running with session ID <id>
    Original token count: <ceil(all bytes the call saw / 4)>
    Output:
    <body>

  The body is the retained text cut to the model budget: ``max_output_tokens`` (default 10,000) as
  tokens when that is strictly smaller than the model's own policy, else the policy, which for a
  model without catalog metadata is 10,000 bytes. A cut body starts with
  ``Warning: truncated output (original token count: <n>)`` and then either
  ``Total output lines: <n>`` or, when retention dropped bytes, the ``... <n> bytes omitted ...``
  line (Codex prints no line count then), and a blank line.
"""

from __future__ import annotations

import secrets
from collections import deque
from dataclasses import dataclass

from app_server.truncation import (
    TruncationPolicy,
    approx_tokens_from_bytes,
    formatted_truncate_text,
    truncate_text,
)

__all__ = [
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "FALLBACK_MODEL_POLICY",
    "OUTPUT_MAX_BYTES",
    "CollectedOutput",
    "HeadTailBuffer",
    "format_exec_output",
    "model_output_body",
    "model_output_policy",
    "omission_marker",
]

DEFAULT_MAX_OUTPUT_TOKENS = 10_000
OUTPUT_MAX_BYTES = 1 << 20
#: Codex's truncation policy for a model it has no catalog entry for (catalog models use 10,000 tokens).
FALLBACK_MODEL_POLICY = TruncationPolicy.bytes(10_000)


def omission_marker(omitted: int) -> str:
    """The line that stands for ``omitted`` bytes dropped from the middle of an output."""
    return f"... {omitted} bytes omitted ..."


@dataclass(frozen=True)
class CollectedOutput:
    """What a buffer held: the retained bytes (with the omission line when bytes were dropped) and counts."""

    data: bytes
    total_bytes: int
    omitted_bytes: int

    @property
    def text(self) -> str:
        """The retained bytes decoded as UTF-8 (undecodable bytes replaced)."""
        return self.data.decode("utf-8", "replace")


class HeadTailBuffer:
    """Keeps the first ``max_bytes // 2`` bytes and the last rest of a byte stream; counts the middle.

    Memory stays at ``max_bytes`` however much passes through; ``total_bytes`` and ``omitted_bytes``
    are exact.
    """

    def __init__(self, max_bytes: int = OUTPUT_MAX_BYTES) -> None:
        self._head_budget = max(max_bytes, 0) // 2
        self._tail_budget = max(max_bytes, 0) - self._head_budget
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_len = 0
        self.total_bytes = 0
        self.omitted_bytes = 0

    @property
    def retained_bytes(self) -> int:
        """How many bytes the buffer holds now (head plus tail)."""
        return len(self._head) + self._tail_len

    def push(self, chunk: bytes) -> None:
        """Add a chunk: it fills the head, then the tail, whose oldest bytes are dropped (and counted)."""
        if not chunk:
            return
        self.total_bytes += len(chunk)
        room = self._head_budget - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._push_tail(chunk)

    def _push_tail(self, chunk: bytes) -> None:
        budget = self._tail_budget
        if len(chunk) >= budget:  # the chunk alone fills the tail: everything older goes
            self.omitted_bytes += self._tail_len + len(chunk) - budget
            self._tail.clear()
            kept = chunk[len(chunk) - budget:] if budget else b""
            if kept:
                self._tail.append(kept)
            self._tail_len = len(kept)
            return
        self._tail.append(chunk)
        self._tail_len += len(chunk)
        excess = self._tail_len - budget
        while excess > 0:
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                cut = len(first)
            else:
                self._tail[0] = first[excess:]
                cut = excess
            self._tail_len -= cut
            self.omitted_bytes += cut
            excess -= cut

    def snapshot(self) -> CollectedOutput:
        """What the buffer holds, without emptying it."""
        parts = [bytes(self._head)]
        if self.omitted_bytes:
            parts.append(f"\n{omission_marker(self.omitted_bytes)}\n".encode())
        parts.extend(self._tail)
        return CollectedOutput(b"".join(parts), self.total_bytes, self.omitted_bytes)

    def drain(self) -> CollectedOutput:
        """The snapshot, and start over empty."""
        out = self.snapshot()
        self._head = bytearray()
        self._tail.clear()
        self._tail_len = 0
        self.total_bytes = 0
        self.omitted_bytes = 0
        return out


def model_output_policy(max_output_tokens: int | None) -> TruncationPolicy:
    """The budget of one call's output: the requested tokens when strictly tighter than the model's policy."""
    requested = TruncationPolicy.tokens(DEFAULT_MAX_OUTPUT_TOKENS if max_output_tokens is None else max_output_tokens)
    return requested if requested.byte_budget < FALLBACK_MODEL_POLICY.byte_budget else FALLBACK_MODEL_POLICY


def model_output_body(output: CollectedOutput, policy: TruncationPolicy) -> str:
    """The output text the model is shown: truncated to ``policy``, with a warning when bytes were dropped."""
    text = output.text
    if not output.omitted_bytes:
        return formatted_truncate_text(text, policy)
    return (
        f"Warning: truncated output (original token count: {approx_tokens_from_bytes(output.total_bytes)})\n"
        f"{omission_marker(output.omitted_bytes)}\n\n{truncate_text(text, policy)}"
    )


def format_exec_output(
    *,
    output: CollectedOutput,
    wall_time_s: float,
    exit_code: int | None,
    session_id: int | None,
    max_output_tokens: int | None,
) -> str:
    """The ``exec_command``/``write_stdin`` result text in Codex's layout (chunk id, wall time, exit)."""
    lines = [f"Chunk ID: {secrets.token_hex(3)}", f"Wall time: {wall_time_s:.4f} seconds"]
    if exit_code is not None:
        lines.append(f"Process exited with code {exit_code}")
    elif session_id is not None:
        lines.append(f"Process running with session ID {session_id}")
    lines.append(f"Original token count: {approx_tokens_from_bytes(output.total_bytes)}")
    lines.append("Output:")
    return "\n".join(lines) + "\n" + model_output_body(output, model_output_policy(max_output_tokens))
