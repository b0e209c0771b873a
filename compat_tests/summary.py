"""The compat matrix for GitHub Actions (.github/workflows/compat.yml): the jobs' matrix, and the job summary.

``python -m compat_tests.summary matrix < LISTING``: the ``--list --format github`` documents on stdin
(one or more, one a line) become one job per (app, exec) pair with its scenarios, leaving out the pairs
where neither side is pycodex (``current`` or a ``pycodex@`` release): those test Codex against itself.

``python -m compat_tests.summary render --junit DIR --logs DIR [--builds FILE] [--check]``: every JUnit
file under ``DIR`` (one per pair job) as markdown for ``$GITHUB_STEP_SUMMARY``. Its first line is the
verdict (the first failure's cause when one failed), then the resolved builds, the table, each
non-pass with its cause, and the risky drift the passing drift pairs reported (their ``drift.txt``).
``--check`` exits 1 when a pair failed, printing the verdict as a GitHub ``::error::`` annotation.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from compat_tests.report import Cell, read_junit
from compat_tests.support.matrix import SCENARIOS

__all__ = ["ci_matrix", "is_codex_only", "main", "read_cells", "render_markdown", "risky_drift"]

#: How many risky drift lines one pair shows in the summary (drift.txt has them all).
MAX_RISKY_SHOWN = 10


def is_codex_only(app: str, exec_: str) -> bool:
    """Whether neither side of the pair is pycodex (``current``, ``pycodex@REF``): Codex against Codex."""
    return not any(spec == "current" or spec.startswith("pycodex@") for spec in (app, exec_))


def _safe(text: str) -> str:
    """A name GitHub accepts for an artifact and the file system for a file."""
    return re.sub(r"[^A-Za-z0-9@._-]+", "_", text).strip("_")


def ci_matrix(rows: Sequence[Mapping[str, str]]) -> dict[str, list[dict[str, str]]]:
    """One job per (app, exec) pair of ``rows`` (``scenario``/``app``/``exec``), without Codex-only pairs.

    A job runs ``pycodex compat --app APP --exec EXEC --scenario SCENARIOS``, which runs exactly the
    listed rows: a pair of two builds is never a stdio/turns-end row (those pair a build with itself),
    and a build with itself is never a drift row.
    """
    jobs: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        if is_codex_only(row["app"], row["exec"]):
            continue
        scenarios = jobs.setdefault((row["app"], row["exec"]), [])
        if row["scenario"] not in scenarios:
            scenarios.append(row["scenario"])
    return {
        "include": [
            {"app": app, "exec": exec_, "scenarios": " ".join(s), "name": _safe(f"{app}__{exec_}")}
            for (app, exec_), s in jobs.items()
        ]
    }


def read_cells(junit_dir: Path, logs: Path) -> list[Cell]:
    """The cells of every ``*.xml`` JUnit file under ``junit_dir`` (pair jobs write one each)."""
    return [cell for path in sorted(junit_dir.rglob("*.xml")) for cell in read_junit(path, logs)]


def risky_drift(cell: Cell) -> list[str]:
    """The risky changes a drift pair reported (``RISKY [rule] text`` lines of its drift.txt)."""
    drift = cell.logs / "drift.txt"
    if cell.scenario != "drift" or not drift.is_file():
        return []
    lines = drift.read_text(encoding="utf-8").splitlines()
    return [line.removeprefix("RISKY ") for line in lines if line.startswith("RISKY ")]


def _problems(cells: list[Cell]) -> list[Cell]:
    order = {s: i for i, s in enumerate(SCENARIOS)}
    failing = [c for c in cells if c.outcome != "pass"]
    return sorted(failing, key=lambda c: (c.outcome != "fail", order.get(c.scenario, 99), c.app, c.exec))


def verdict(cells: list[Cell]) -> str:
    """The summary's first line: what failed first and why, or that everything passed."""
    if not cells:
        return "compat: no pair reported a result"
    failed = [c for c in _problems(cells) if c.outcome == "fail"]
    if failed:
        first = failed[0]
        return (
            f"compat: {len(failed)} of {len(cells)} failed; first: {first.scenario} "
            f"app={first.app} exec={first.exec}: {first.cause}"
        )
    skipped = sum(c.outcome == "skip" for c in cells)
    risky = sum(len(risky_drift(c)) for c in cells)
    return f"compat: all {len(cells) - skipped} passed ({skipped} skipped, {risky} risky drift changes)"


def _rank(spec: str) -> tuple[int, str]:
    """Table order, as the text table's: current, pycodex releases, Codex releases, anything else."""
    kinds = ("current", "pycodex@", "codex@")
    return next((i for i, k in enumerate(kinds) if spec.startswith(k)), len(kinds)), spec


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(cells: list[Cell], labels: Mapping[str, str] | None = None) -> str:
    """The job summary (see the module docstring); ``labels`` maps a spec to ``spec → resolved``."""
    lines = [verdict(cells), ""]
    resolved = [(spec, label) for spec, label in (labels or {}).items() if label != spec]
    if resolved:
        lines += ["Builds: " + ", ".join(f"`{_cell(label)}`" for _, label in resolved), ""]
    scenarios = [s for s in SCENARIOS if any(c.scenario == s for c in cells)]
    by_key = {(c.app, c.exec, c.scenario): c for c in cells}
    lines += ["| app | exec | " + " | ".join(scenarios) + " |", "|---|---|" + "---|" * len(scenarios)]
    for app, exec_ in sorted(
        dict.fromkeys((c.app, c.exec) for c in cells), key=lambda p: (_rank(p[0]), _rank(p[1]))
    ):
        row = []
        for scenario in scenarios:
            cell = by_key.get((app, exec_, scenario))
            risky = len(risky_drift(cell)) if cell else 0
            shown = "-" if cell is None else ("**FAIL**" if cell.outcome == "fail" else cell.outcome)
            row.append(f"{shown} (⚠ {risky} risky)" if risky else shown)
        lines.append(f"| `{_cell(app)}` | `{_cell(exec_)}` | " + " | ".join(row) + " |")
    problems = _problems(cells)
    if problems:
        lines += ["", "### Not passing", ""]
        lines += [
            f"- **{c.outcome.upper()}** {c.scenario} `{c.app}` -> `{c.exec}`: {_cell(c.cause)}"
            for c in problems
        ]
    risky_cells = [(c, risky_drift(c)) for c in cells if risky_drift(c)]
    if risky_cells:
        lines += ["", "### Risky drift (reported, passes)", ""]
        for cell, changes in risky_cells:
            more = (
                f" (+{len(changes) - MAX_RISKY_SHOWN} more in drift.txt)"
                if len(changes) > MAX_RISKY_SHOWN
                else ""
            )
            lines += [
                f"<details><summary>{cell.app} -> {cell.exec}: {len(changes)} risky{more}</summary>",
                "",
            ]
            lines += [f"- `{_cell(line)}`" for line in changes[:MAX_RISKY_SHOWN]]
            lines += ["", "</details>"]
    counts = {o: sum(c.outcome == o for c in cells) for o in ("pass", "fail", "skip")}
    lines += ["", f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"]
    return "\n".join(lines) + "\n"


def _listings(text: str) -> list[dict[str, Any]]:
    """The rows of one or more ``--list --format github`` documents, one a line."""
    rows: list[dict[str, Any]] = []
    for line in text.splitlines():
        if line.strip():
            rows += json.loads(line)["include"]
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m compat_tests.summary")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("matrix", help="stdin: --list --format github output; stdout: the jobs' matrix")
    render = commands.add_parser("render", help="markdown job summary from the pair jobs' JUnit files")
    render.add_argument("--junit", type=Path, required=True, help="folder of JUnit XML files")
    render.add_argument("--logs", type=Path, required=True, help="the merged per-pair log folders")
    render.add_argument("--builds", type=Path, help="JSON {spec: label} of the resolved builds")
    render.add_argument("--check", action="store_true", help="exit 1 when a pair failed")
    args = parser.parse_args(argv)
    if args.command == "matrix":
        print(json.dumps(ci_matrix(_listings(sys.stdin.read())), separators=(",", ":")))
        return 0
    cells = read_cells(args.junit, args.logs)
    labels = (
        json.loads(args.builds.read_text(encoding="utf-8")) if args.builds and args.builds.is_file() else {}
    )
    print(render_markdown(cells, labels), end="")
    failed = not cells or any(c.outcome == "fail" for c in cells)
    if args.check and failed:
        print(f"::error title=compat::{verdict(cells)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
