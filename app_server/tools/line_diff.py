"""A unified diff whose cost follows the changes, not the file: for the turn's diff of big files.

``difflib.unified_diff`` rescans the whole remaining range for every difference it finds, so a 5 MB file
with 100 edits takes about a second. Here the two line lists are walked together; at a mismatch the
walk looks ahead (in a window that grows when needed) for the nearest point where three lines agree
again, and only the lines between go to ``difflib.SequenceMatcher``. On the sparse edits patches make,
the output equals difflib's; on any input it is a correct diff (applying it gives the new text). The
hunk text follows difflib's format (``@@ -a,b +c,d @@``, ``---``/``+++`` headers, ``n`` lines of context).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence

__all__ = ["opcodes", "unified_diff"]

Opcode = tuple[str, int, int, int, int]
_SYNC = 3  # lines that must agree for the walk to resynchronise
_FIRST_WINDOW = 64


def _resync(a: Sequence[str], b: Sequence[str], i: int, j: int, window: int) -> tuple[int, int] | None:
    """The nearest (i2, j2) past a mismatch at (i, j) where ``_SYNC`` lines agree, within ``window``."""
    first: dict[str, list[int]] = {}
    for j2 in range(j, min(len(b), j + window)):
        first.setdefault(b[j2], []).append(j2)
    best: tuple[int, int] | None = None
    for i2 in range(i, min(len(a), i + window)):
        if best is not None and i2 - i >= best[0] - i + best[1] - j:
            break
        for j2 in first.get(a[i2], ()):
            if a[i2:i2 + _SYNC] == b[j2:j2 + _SYNC] and (
                best is None or (i2 - i) + (j2 - j) < (best[0] - i) + (best[1] - j)
            ):
                best = (i2, j2)
                break
    return best


def opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """``SequenceMatcher.get_opcodes``-style edits turning ``a`` into ``b``."""
    out: list[Opcode] = []
    i = j = 0
    while i < len(a) or j < len(b):
        start_i, start_j = i, j
        while i < len(a) and j < len(b) and a[i] == b[j]:
            i, j = i + 1, j + 1
        if i > start_i:
            out.append(("equal", start_i, i, start_j, j))
        if i >= len(a) or j >= len(b):
            end: tuple[int, int] = (len(a), len(b))
        else:
            window, found = _FIRST_WINDOW, None
            while found is None and window < 2 * max(len(a) - i, len(b) - j) + _FIRST_WINDOW:
                found = _resync(a, b, i, j, window)
                window *= 4
            end = found if found is not None else (len(a), len(b))
        if end == (i, j):
            continue
        matcher = difflib.SequenceMatcher(None, a[i:end[0]], b[j:end[1]], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            out.append((tag, i + i1, i + i2, j + j1, j + j2))
        i, j = end
    return _merge_equal(out)


def _merge_equal(ops: list[Opcode]) -> list[Opcode]:
    merged: list[Opcode] = []
    for op in ops:
        if merged and merged[-1][0] == op[0] == "equal":
            tag, i1, _, j1, _ = merged[-1]
            merged[-1] = (tag, i1, op[2], j1, op[4])
        else:
            merged.append(op)
    return merged


def _groups(ops: list[Opcode], n: int) -> Iterator[list[Opcode]]:
    """difflib's ``get_grouped_opcodes`` over our opcodes."""
    if not ops:
        ops = [("equal", 0, 1, 0, 1)]
    if ops[0][0] == "equal":
        tag, i1, i2, j1, j2 = ops[0]
        ops[0] = (tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2)
    if ops[-1][0] == "equal":
        tag, i1, i2, j1, j2 = ops[-1]
        ops[-1] = (tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n))
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, stop: int) -> str:
    length = stop - start
    begin = start + 1
    if length == 1:
        return str(begin)
    if not length:
        begin -= 1
    return f"{begin},{length}"


def unified_diff(a: Sequence[str], b: Sequence[str], fromfile: str, tofile: str, n: int = 3) -> Iterator[str]:
    """Lines of the unified diff of ``a`` -> ``b`` (lines keep their endings), as ``difflib.unified_diff``."""
    if a == b:
        return
    started = False
    for group in _groups(opcodes(a, b), n):
        if not started:
            started = True
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from ("-" + line for line in a[i1:i2])
            if tag in ("replace", "insert"):
                yield from ("+" + line for line in b[j1:j2])
