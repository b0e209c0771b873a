"""A file's lines with their own line endings, as Codex 0.169 keeps them through an update.

Each line keeps the ending it had (``\\n``, ``\\r\\n``, or none for an unterminated last line). Lines a
patch inserts take the file's preferred ending (context lines stay the file's own lines, endings included), the ending of its first terminated line (``\\n`` when it
has none). After an update every line is terminated, so an update adds a missing final newline.
"""

from __future__ import annotations

__all__ = ["Region", "Replacement", "SourceFile"]

Replacement = tuple[int, int, list[str | int]]
"""``(start, old_len, segment)``: a segment item is a new line's text, or the index of a line kept as is."""
Region = tuple[int, int, int, int]


class SourceFile:
    """The parsed lines: ``texts`` (without endings, what chunks are matched against) and ``endings``."""

    def __init__(self, texts: list[str], endings: list[str], preferred: str) -> None:
        self.texts = texts
        self.endings = endings
        self.preferred = preferred

    @classmethod
    def parse(cls, contents: str) -> SourceFile:
        """Split ``contents`` after each ``\\n``; a ``\\r`` before it belongs to the ending."""
        parts = contents.split("\n")
        tail = parts.pop()
        texts: list[str] = []
        endings: list[str] = []
        for part in parts:
            if part.endswith("\r"):
                texts.append(part[:-1])
                endings.append("\r\n")
            else:
                texts.append(part)
                endings.append("\n")
        if tail:
            texts.append(tail)
            endings.append("")
        preferred = endings[0] if endings and endings[0] else "\n"
        return cls(texts, endings, preferred)

    def old_lines(self) -> list[str]:
        """The original lines with their endings."""
        return [t + e for t, e in zip(self.texts, self.endings, strict=True)]

    def apply(self, replacements: list[Replacement]) -> tuple[list[str], list[Region]]:
        """The new lines (with endings) after ``replacements`` (sorted ``(start, old_len, new)``).

        Also the changed regions ``(old_lo, old_hi, new_lo, new_hi)`` in order, for the diff.
        """
        out: list[str] = []
        regions: list[Region] = []
        pos = 0
        pref = self.preferred
        for start, old_len, segment in replacements:
            if start > pos:
                self._copy(out, regions, pos, start)
            lo = len(out)
            for item in segment:
                if isinstance(item, int):
                    out.append(self.texts[item] + (self.endings[item] or pref))
                else:
                    out.append(item + pref)
            end = max(pos, start + old_len)
            regions.append((start, end, lo, len(out)))
            pos = end
        self._copy(out, regions, pos, len(self.texts))
        return out, regions

    def _copy(self, out: list[str], regions: list[Region], lo: int, hi: int) -> None:
        hi = min(hi, len(self.texts))
        if lo >= hi:
            return
        out.extend(t + e for t, e in zip(self.texts[lo:hi], self.endings[lo:hi], strict=True))
        if self.endings[hi - 1] == "":
            # The unterminated last line gets the preferred ending.
            out[-1] += self.preferred
            regions.append((hi - 1, hi, len(out) - 1, len(out)))
