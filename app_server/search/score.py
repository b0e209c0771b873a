"""Fuzzy scores in the manner of Codex 0.169's file search (nucleo's fzf-style path matching).

A query matches a path when its characters appear in order (case-insensitively). The score rewards
each matched character (16), characters at a word start (after `/`: 9, after another non-word
character: 8, camelCase or a digit run: 5; the first query character counts twice) and runs of
consecutive characters (a run keeps its first character's bonus, at least 4); gaps cost 3 for the first
skipped character and 1 for each further one. The best alignment wins. Codex then ranks whole names
first: +65536 when a file's own name contains the query, +131072 when a name equals it.

    score_path("main", "src/app/main.py", is_dir=False)   # (65645, [8, 9, 10, 11])
"""

from __future__ import annotations

import re

SCORE_MATCH = 16
PENALTY_GAP_START = 3
PENALTY_GAP_EXTENSION = 1
BONUS_BOUNDARY = 8
BONUS_DELIMITER = BONUS_BOUNDARY + 1
BONUS_WHITE = BONUS_BOUNDARY + 2
BONUS_CAMEL123 = BONUS_BOUNDARY - PENALTY_GAP_START
BONUS_CONSECUTIVE = PENALTY_GAP_START + PENALTY_GAP_EXTENSION
FIRST_CHAR_MULTIPLIER = 2
NAME_MATCH_BONUS = 1 << 16
EXACT_NAME_BONUS = 2 << 16

_WHITE, _NON_WORD, _DELIMITER, _LOWER, _UPPER, _LETTER, _NUMBER = range(7)


def _char_class(ch: str) -> int:
    if ch == "/":
        return _DELIMITER
    if ch.isspace():
        return _WHITE
    if ch.islower():
        return _LOWER
    if ch.isupper():
        return _UPPER
    if ch.isdigit():
        return _NUMBER
    if ch.isalpha():
        return _LETTER
    return _NON_WORD


def _bonus(prev: int, cur: int) -> int:
    if cur > _DELIMITER:
        if prev == _WHITE:
            return BONUS_WHITE
        if prev == _DELIMITER:
            return BONUS_DELIMITER
        if prev == _NON_WORD:
            return BONUS_BOUNDARY
    if (prev == _LOWER and cur == _UPPER) or (prev != _NUMBER and cur == _NUMBER):
        return BONUS_CAMEL123
    if cur == _WHITE:
        return BONUS_WHITE
    if cur == _NON_WORD:
        return BONUS_BOUNDARY
    return 0


_ASCII_CLASS = [_char_class(chr(code)) for code in range(128)]


def _class_at(text: str, j: int) -> int:
    if j < 0:
        return _DELIMITER  # a path's start counts as coming after a separator
    ch = text[j]
    return _ASCII_CLASS[ord(ch)] if ch < "\x80" else _char_class(ch)


class _Bonuses:
    """Position bonuses of one text, computed only where a query character can land."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cache: dict[int, int] = {}

    def __getitem__(self, j: int) -> int:
        value = self.cache.get(j)
        if value is None:
            value = self.cache[j] = _bonus(_class_at(self.text, j - 1), _class_at(self.text, j))
        return value


def subsequence_pattern(query: str, separator: str = "") -> re.Pattern[str]:
    """A regex that finds paths containing the query's characters in order (a cheap pre-filter).

    `a[^b]*b` rather than `a.*?b`: a negated class cannot backtrack, so a miss costs one pass. A match
    never crosses `separator`, so one scan of paths joined by it finds the matching paths.
    """
    chars = query.lower()
    parts = [re.escape(chars[0])] if chars else []
    parts += [f"[^{re.escape(ch + separator)}]*{re.escape(ch)}" for ch in chars[1:]]
    return re.compile("".join(parts))


def align(query: str, text: str, start: int = 0) -> tuple[int, list[int]] | None:
    """The best fuzzy score of lower-cased `query` in `text[start:]` (bonuses judged on the whole
    `text`), with the matched indices, or None. Of equal scores the alignment ending last wins.

    A sparse dynamic programme over the positions where each query character occurs: a cell is
    (score, first bonus of its run, predecessor position).
    """
    lowered = text.lower() if text.isascii() else "".join(c.lower()[:1] or c for c in text)
    bonus = _Bonuses(text)
    rows: list[dict[int, tuple[int, int, int]]] = []
    for i, ch in enumerate(query):
        positions = []
        j = lowered.find(ch, start)
        while j >= 0:
            positions.append(j)
            j = lowered.find(ch, j + 1)
        row: dict[int, tuple[int, int, int]] = {}
        if i == 0:
            for j in positions:
                row[j] = (SCORE_MATCH + bonus[j] * FIRST_CHAR_MULTIPLIER, bonus[j], -1)
        else:
            prev = rows[-1]
            prev_sorted = sorted(prev)
            best_gap: tuple[int, int] | None = None  # (score + position, position) over k <= j - 2
            cursor = 0
            for j in positions:
                while cursor < len(prev_sorted) and prev_sorted[cursor] <= j - 2:
                    k = prev_sorted[cursor]
                    candidate = (prev[k][0] + k, k)
                    if best_gap is None or candidate[0] > best_gap[0]:
                        best_gap = candidate
                    cursor += 1
                options: list[tuple[int, int, int]] = []
                if best_gap is not None:
                    # A gap of g = j - k - 1 characters costs 3 + (g - 1), i.e. (score + k) - j - 1.
                    gap_score = best_gap[0] - j - 1
                    options.append((gap_score + SCORE_MATCH + bonus[j], bonus[j], best_gap[1]))
                if j - 1 in prev:
                    score, first, _ = prev[j - 1]
                    run_first = bonus[j] if bonus[j] >= BONUS_BOUNDARY and bonus[j] > first else first
                    gained = max(bonus[j], run_first, BONUS_CONSECUTIVE)
                    options.append((score + SCORE_MATCH + gained, run_first, j - 1))
                if options:
                    row[j] = max(options)
        if not row:
            return None
        rows.append(row)
    end = max(rows[-1], key=lambda j: (rows[-1][j][0], j))
    indices = [end]
    for i in range(len(rows) - 1, 0, -1):
        indices.append(rows[i][indices[-1]][2])
    indices.reverse()
    return rows[-1][end][0], indices


def score_path(query: str, path: str, is_dir: bool, exact: bool = False) -> tuple[int, list[int]] | None:
    """Codex's score for `path` (relative, "/"-separated) and the matched indices, or None.

    A file whose own name contains the query is scored on its name alone, plus NAME_MATCH_BONUS;
    `exact` adds EXACT_NAME_BONUS (the caller decides which entry of a name gets it, see fuzzy.py).
    """
    query = query.lower()
    name_start = path.rfind("/") + 1
    extra = EXACT_NAME_BONUS if exact else 0
    if not is_dir:
        in_name = align(query, path, name_start)
        if in_name is not None:
            return in_name[0] + NAME_MATCH_BONUS + extra, in_name[1]
    found = align(query, path)
    if found is None:
        return None
    return found[0] + extra, found[1]
