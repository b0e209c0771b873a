"""Middle truncation of text by a byte or token budget, with Codex's markers and counts.

Codex measures text in UTF-8 bytes and estimates tokens as ``ceil(bytes / 4)``. A cut keeps the first
half of the budget and the last half, moved to character boundaries (the head rounds down, the tail
rounds up), and puts a marker between them:

* a byte budget reports the characters it removed: ``…N chars truncated…``
* a token budget reports ``ceil((total bytes - budget bytes) / 4)``: ``…N tokens truncated…``

The marker is outside the budget. ``truncate_middle_with_marker`` is the variant whose whole result,
marker included, fits a hard byte limit (used for what is persisted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "BYTES_PER_TOKEN",
    "TruncationPolicy",
    "approx_token_count",
    "approx_tokens_from_bytes",
    "formatted_truncate_text",
    "line_count",
    "truncate_middle_with_marker",
    "truncate_text",
]

BYTES_PER_TOKEN = 4
_ENCODING_ERRORS = "surrogatepass"  # a str may hold lone surrogates (from JSON); keep them round-trippable


@dataclass(frozen=True)
class TruncationPolicy:
    """A budget in bytes or in (approximate) tokens."""

    kind: Literal["bytes", "tokens"]
    limit: int

    @classmethod
    def bytes(cls, limit: int) -> TruncationPolicy:
        """A policy that keeps at most ``limit`` bytes."""
        return cls("bytes", max(limit, 0))

    @classmethod
    def tokens(cls, limit: int) -> TruncationPolicy:
        """A policy that keeps about ``limit`` tokens."""
        return cls("tokens", max(limit, 0))

    @property
    def byte_budget(self) -> int:
        """The limit in bytes (tokens count as ``BYTES_PER_TOKEN`` bytes each)."""
        return self.limit if self.kind == "bytes" else self.limit * BYTES_PER_TOKEN


def approx_tokens_from_bytes(count: int) -> int:
    """Codex's token estimate for ``count`` bytes (rounded up)."""
    return (max(count, 0) + BYTES_PER_TOKEN - 1) // BYTES_PER_TOKEN


def approx_token_count(text: str) -> int:
    """Codex's token estimate for ``text``."""
    return approx_tokens_from_bytes(len(_utf8(text)))


def line_count(text: str) -> int:
    """Lines as Rust's ``str::lines`` counts them: a final newline does not start another line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", _ENCODING_ERRORS)


def _text(data: bytes) -> str:
    return data.decode("utf-8", _ENCODING_ERRORS)


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _floor_boundary(data: bytes, index: int) -> int:
    index = min(index, len(data))
    while 0 < index < len(data) and _is_continuation(data[index]):
        index -= 1
    return index


def _ceil_boundary(data: bytes, index: int) -> int:
    index = max(index, 0)
    while index < len(data) and _is_continuation(data[index]):
        index += 1
    return index


def _split(data: bytes, budget: int) -> tuple[str, str]:
    """The head (``budget // 2`` bytes, rounded down to a character) and the tail (the rest, rounded up)."""
    left = budget // 2
    right = budget - left
    head = data[: _floor_boundary(data, left)]
    tail = data[_ceil_boundary(data, len(data) - right):]
    return _text(head), _text(tail)


def truncate_text(content: str, policy: TruncationPolicy) -> str:
    """``content`` cut in the middle to ``policy``'s budget, with the marker; unchanged when it fits."""
    if not content:
        return ""
    data = _utf8(content)
    budget = policy.byte_budget
    tokens = policy.kind == "tokens"
    if budget == 0:
        removed = approx_tokens_from_bytes(len(data)) if tokens else len(content)
        return _marker(tokens, removed)
    if len(data) <= budget:
        return content
    head, tail = _split(data, budget)
    if tokens:
        removed = approx_tokens_from_bytes(len(data) - budget)
    else:
        removed = len(content) - len(head) - len(tail)
    return f"{head}{_marker(tokens, removed)}{tail}"


def _marker(tokens: bool, removed: int) -> str:
    return f"…{removed} tokens truncated…" if tokens else f"…{removed} chars truncated…"


def formatted_truncate_text(content: str, policy: TruncationPolicy) -> str:
    """Like ``truncate_text``, with a header naming the original size when anything was cut."""
    if len(_utf8(content)) <= policy.byte_budget:
        return content
    return (
        f"Warning: truncated output (original token count: {approx_token_count(content)})\n"
        f"Total output lines: {line_count(content)}\n\n{truncate_text(content, policy)}"
    )


def truncate_middle_with_marker(content: str, max_bytes: int, marker: str) -> str:
    """``content`` cut so that the result, ``marker`` included, is at most ``max_bytes`` bytes."""
    data = _utf8(content)
    if len(data) <= max_bytes:
        return content
    room = max_bytes - len(_utf8(marker))
    if room < 0:
        return _text(data[: _floor_boundary(data, max_bytes)])
    head, tail = _split(data, room)
    return f"{head}{marker}{tail}"
