"""Locating a chunk's old lines in a file as Codex's ``seek_sequence`` does.

Four passes of decreasing strictness, each scanning from ``start`` forward: exact, trailing whitespace
ignored, surrounding whitespace ignored, then common Unicode punctuation (dashes, quotes, odd spaces)
read as ASCII. With ``eof`` the only candidate is the position that ends the pattern at the file's end.
The exact pass jumps between occurrences of the first line (``list.index``), so a chunk near the
previous one costs about the distance between them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["normalise", "seek_sequence"]

_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)

# Rust's str::trim / trim_end strip Unicode White_Space; Python's str.strip() with no argument is close
# (it also strips a few separators Rust keeps, such as \x1c-\x1f, which do not occur in source lines).


def normalise(line: str) -> str:
    """The last pass's key: trimmed, with Unicode dashes, quotes and spaces mapped to ASCII."""
    return line.strip().translate(_PUNCTUATION)


def _rstrip(line: str) -> str:
    return line.rstrip()


def _strip(line: str) -> str:
    return line.strip()


def _exact(lines: Sequence[str], pattern: Sequence[str], lo: int, hi: int) -> int | None:
    first = pattern[0]
    n = len(pattern)
    i = lo
    while i <= hi:
        try:
            i = lines.index(first, i, hi + 1)
        except ValueError:
            return None
        if all(lines[i + k] == pattern[k] for k in range(1, n)):
            return i
        i += 1
    return None


def _keyed(
    lines: Sequence[str], pattern: Sequence[str], lo: int, hi: int, key: Callable[[str], str]
) -> int | None:
    keys = [key(p) for p in pattern]
    n = len(pattern)
    for i in range(lo, hi + 1):
        if all(key(lines[i + k]) == keys[k] for k in range(n)):
            return i
    return None


def seek_sequence(lines: Sequence[str], pattern: Sequence[str], start: int, eof: bool) -> int | None:
    """Index at or after ``start`` where ``pattern`` occurs in ``lines``, or None."""
    if not pattern:
        return start
    if len(pattern) > len(lines):
        return None
    hi = len(lines) - len(pattern)
    lo = hi if eof else start
    found = _exact(lines, pattern, lo, hi)
    if found is not None:
        return found
    for key in (_rstrip, _strip, normalise):
        found = _keyed(lines, pattern, lo, hi, key)
        if found is not None:
            return found
    return None
