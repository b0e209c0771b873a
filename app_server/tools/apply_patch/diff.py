"""The per-file unified diff of an update, in the shape Codex puts into a fileChange item.

Only ``@@ -a,b +c,d @@`` hunks (no ``---``/``+++`` header), one line of context, lines with their own
endings, ``\\ No newline at end of file`` after a line without one. The patch already says which regions
changed, so only those are diffed (difflib within a region): the cost follows the change, not the file.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from app_server.tools.apply_patch.text_file import Region

__all__ = ["unified_diff"]

_NO_NEWLINE = "\n\\ No newline at end of file\n"


def _refine(old: list[str], new: list[str], region: Region) -> list[Region]:
    """The changed spans inside one coarse region, common lines at either end left out."""
    i1, i2, j1, j2 = region
    while i1 < i2 and j1 < j2 and old[i1] == new[j1]:
        i1 += 1
        j1 += 1
    while i1 < i2 and j1 < j2 and old[i2 - 1] == new[j2 - 1]:
        i2 -= 1
        j2 -= 1
    if i1 == i2 or j1 == j2:
        return [] if i1 == i2 and j1 == j2 else [(i1, i2, j1, j2)]
    matcher = SequenceMatcher(None, old[i1:i2], new[j1:j2], autojunk=False)
    return [
        (i1 + a1, i1 + a2, j1 + b1, j1 + b2)
        for tag, a1, a2, b1, b2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _range(start: int, length: int) -> str:
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def _line(sign: str, text: str) -> str:
    return f"{sign}{text}" if text.endswith("\n") else f"{sign}{text}{_NO_NEWLINE}"


def unified_diff(old: list[str], new: list[str], regions: list[Region], context: int = 1) -> str:
    """The hunks from ``old`` to ``new`` (lines with endings) given the changed ``regions``."""
    spans: list[Region] = []
    for region in regions:
        spans.extend(_refine(old, new, region))
    out: list[str] = []
    k = 0
    while k < len(spans):
        group = [spans[k]]
        k += 1
        while k < len(spans) and spans[k][0] - group[-1][1] <= 2 * context:
            group.append(spans[k])
            k += 1
        first, last = group[0], group[-1]
        o_lo = max(0, first[0] - context)
        o_hi = min(len(old), last[1] + context)
        n_lo = first[2] - (first[0] - o_lo)
        n_hi = last[3] + (o_hi - last[1])
        out.append(f"@@ -{_range(o_lo, o_hi - o_lo)} +{_range(n_lo, n_hi - n_lo)} @@\n")
        cur = o_lo
        for i1, i2, j1, j2 in group:
            out.extend(_line(" ", old[i]) for i in range(cur, i1))
            out.extend(_line("-", old[i]) for i in range(i1, i2))
            out.extend(_line("+", new[j]) for j in range(j1, j2))
            cur = i2
        out.extend(_line(" ", old[i]) for i in range(cur, o_hi))
    return "".join(out)
