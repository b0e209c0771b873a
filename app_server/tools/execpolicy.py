"""Persisted command approvals: the `prefix_rule` lines Codex keeps in ``CODEX_HOME/rules/default.rules``.

Accepting an approval with ``acceptWithExecpolicyAmendment`` appends
``prefix_rule(pattern=["/bin/bash", "-lc", "..."], decision="allow")``; a later command whose argv starts
with an allowed pattern runs without asking, in any thread and any later process. Only the lines in that
exact form are read; anything else in the file (Codex's full rule language) is left alone and ignored.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["RULES_FILE", "allowed_prefixes", "append_allowed_prefix", "matches_prefix"]

logger = logging.getLogger(__name__)

RULES_FILE = Path("rules") / "default.rules"
_ALLOW_LINE = re.compile(r'^prefix_rule\(pattern=(\[.*\]), decision="allow"\)\s*$')


def allowed_prefixes(codex_home: Path) -> list[tuple[str, ...]]:
    """The allow patterns in the rules file (none when it is missing or unreadable)."""
    try:
        text = (codex_home / RULES_FILE).read_text("utf-8")
    except OSError:
        return []
    out: list[tuple[str, ...]] = []
    for line in text.splitlines():
        match = _ALLOW_LINE.match(line.strip())
        if match is None:
            continue
        try:
            pattern = json.loads(match.group(1))
        except ValueError:
            continue
        if isinstance(pattern, list) and pattern and all(isinstance(p, str) for p in pattern):
            out.append(tuple(pattern))
    return out


def append_allowed_prefix(codex_home: Path, prefix: Sequence[str]) -> None:
    """Persist an allow rule for ``prefix`` in the rules file (a failure to write is logged, not raised)."""
    path = codex_home / RULES_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f'prefix_rule(pattern={json.dumps(list(prefix))}, decision="allow")\n')
    except OSError as exc:  # the approval still holds for this thread
        logger.warning("could not record the approved command prefix in %s: %s", path, exc)


def matches_prefix(argv: Sequence[str], prefixes: Sequence[tuple[str, ...]]) -> bool:
    """Whether ``argv`` starts with one of ``prefixes`` (an empty prefix matches nothing)."""
    return any(prefix and tuple(argv[: len(prefix)]) == prefix for prefix in prefixes)
