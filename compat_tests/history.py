"""The compat matrix's run history: one JSON line per ``pycodex compat`` run, and the cells that flip.

``pycodex compat`` appends a record to ``compat-history.jsonl`` beside its ``--junit`` file (else in
``--logs``; ``--history FILE`` chooses): ``time`` (UTC, ISO 8601), ``commit`` (this checkout's HEAD,
``dirty`` if it has changes), ``builds`` (spec -> what it resolved to: ``0.171.0`` for ``codex@latest``,
``abc1234`` for ``pycodex@REF``, empty where the spec says it all), and per cell ``scenario``,
``app``, ``exec``, ``outcome`` (pass | fail | flaky | skip), ``cause``, ``attempts`` (how many times its
worst test ran), ``failed_attempts`` (the causes of the failed attempts before its last) and ``seconds``.

``pycodex compat history [--history FILE] [--last N] [--strict]`` prints each cell's recent outcomes,
oldest first, and flags a cell as ``FLIPS`` when it had two outcomes other than skip among them (passed
and failed, or was flaky): flaky across runs even where no single run saw it flake. ``--strict`` exits 1
when any cell flips. ``pycodex compat`` itself ends with a ``FLIPS`` line for each of its cells that
flips over the last :data:`RECENT` runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from compat_tests.report import Cell
from compat_tests.support.builds import REPO_ROOT

__all__ = [
    "HISTORY_NAME",
    "append_record",
    "flipping",
    "main",
    "make_record",
    "read_history",
    "render_history",
]

HISTORY_NAME = "compat-history.jsonl"
#: How many runs ``pycodex compat history`` and the end of a ``pycodex compat`` run look back over.
RECENT = 10
#: One history record as read back (JSON: only the keys listed in the module docstring are relied on).
Record = dict[str, Any]
CellKey = tuple[str, str, str]


def _checkout_commit() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=30, check=False
        )
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "HEAD") or "unknown"
    return f"{head} dirty" if git("status", "--porcelain", "--untracked-files=no") else head


def make_record(cells: Sequence[Cell], builds: Mapping[str, str], when: datetime | None = None) -> Record:
    """The history record of one run (``builds``: spec -> what it resolved to)."""
    return {
        "time": (when or datetime.now(UTC)).isoformat(timespec="seconds"),
        "commit": _checkout_commit(),
        "builds": dict(builds),
        "cells": [
            {
                "scenario": c.scenario,
                "app": c.app,
                "exec": c.exec,
                "outcome": c.outcome,
                "cause": c.cause,
                "attempts": len(c.failed_attempts) + 1,
                "failed_attempts": list(c.failed_attempts),
                "seconds": c.seconds,
            }
            for c in cells
        ],
    }


def append_record(path: Path, record: Record) -> None:
    """Add ``record`` as one line at the end of the history file (created with its folder if absent)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")


def read_history(path: Path) -> list[Record]:
    """Every record in the file, oldest first; a line that is not a JSON object (a cut write) is skipped."""
    if not path.is_file():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("cells"), list):
            records.append(record)
    return records


def _outcomes(records: Sequence[Record]) -> dict[CellKey, list[str]]:
    """Each cell's outcome in each record that has it, oldest first."""
    out: dict[CellKey, list[str]] = {}
    for record in records:
        for cell in record["cells"]:
            key = (str(cell.get("scenario")), str(cell.get("app")), str(cell.get("exec")))
            out.setdefault(key, []).append(str(cell.get("outcome")))
    return out


def flipping(records: Sequence[Record]) -> list[CellKey]:
    """The cells with more than one outcome other than skip among ``records`` (pass in one run and fail or
    flaky in another, or fail and flaky): flaky across runs."""
    return [key for key, seen in _outcomes(records).items() if len(set(seen) - {"skip"}) > 1]


def render_history(records: Sequence[Record]) -> str:
    """One line per cell: ``SCENARIO app=APP exec=EXEC: pass pass fail pass  FLIPS``; then a summary."""
    if not records:
        return "no runs recorded"
    flips = set(flipping(records))
    lines = [f"{len(records)} run(s), {records[0].get('time')} .. {records[-1].get('time')}"]
    for (scenario, app, exec_), seen in sorted(_outcomes(records).items()):
        mark = "  FLIPS" if (scenario, app, exec_) in flips else ""
        lines.append(f"{scenario} app={app} exec={exec_}: {' '.join(seen)}{mark}")
    lines.append(f"{len(flips)} cell(s) flip between runs")
    return "\n".join(lines)


def flip_lines(records: Sequence[Record], cells: Sequence[Cell]) -> list[str]:
    """``FLIPS SCENARIO app=APP exec=EXEC over the last N runs: fail pass ...`` for each of ``cells`` (this
    run's) that flips among ``records`` (the recent history, this run included)."""
    seen = _outcomes(records)
    keys = set(flipping(records)) & {(c.scenario, c.app, c.exec) for c in cells}
    return [
        f"FLIPS {s} app={a} exec={e} over the last {len(records)} runs: {' '.join(seen[(s, a, e)])}"
        for s, a, e in sorted(keys)
    ]


def main(argv: Sequence[str]) -> int:
    """``pycodex compat history``: 0, or 1 with ``--strict`` when a cell flips; 2 on bad usage."""
    parser = argparse.ArgumentParser(
        prog="pycodex compat history", description="Each cell's outcomes over the recorded compat runs."
    )
    parser.add_argument(
        "--history", type=Path, default=Path("compat-logs") / HISTORY_NAME, help="the history file"
    )
    parser.add_argument("--last", type=int, default=RECENT, metavar="N", help=f"the N newest runs ({RECENT})")
    parser.add_argument("--strict", action="store_true", help="exit 1 when any cell flips between runs")
    args = parser.parse_args(argv)
    if args.last < 1:
        parser.error("--last must be at least 1")
    if not args.history.is_file():
        print(f"pycodex compat history: no history at {args.history}", file=sys.stderr)
        return 2
    records = read_history(args.history)[-args.last :]
    print(render_history(records))
    return 1 if args.strict and flipping(records) else 0
