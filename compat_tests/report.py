"""The compat matrix as a table, read back from pytest's JUnit XML and the per-pair log folders."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from compat_tests.support.matrix import SCENARIO_FILES, log_dir, parse_test_id

__all__ = ["Cell", "read_junit", "render_table"]

_MODULE_SCENARIO = {name.removesuffix(".py"): scenario for scenario, name in SCENARIO_FILES.items()}


@dataclass(frozen=True)
class Cell:
    scenario: str
    app: str
    exec: str
    outcome: str  # pass | fail | skip
    cause: str
    logs: Path


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line.removeprefix("AssertionError: ").removeprefix(
                "compat_tests.support.rpc.ScenarioError: "
            )
    return ""


def read_junit(path: Path, logs: Path) -> list[Cell]:
    cells = []
    for case in ET.parse(path).getroot().iter("testcase"):
        scenario = _MODULE_SCENARIO.get(case.get("classname", "").rsplit(".", 1)[-1])
        pair = parse_test_id(case.get("name", ""))
        if scenario is None or pair is None:
            continue
        folder = log_dir(logs, scenario, *pair)
        outcome, cause = "pass", ""
        for tag in ("failure", "error"):
            node = case.find(tag)
            if node is not None:
                outcome = "fail"
                cause_file = folder / "cause.txt"
                cause = (
                    cause_file.read_text().strip()
                    if cause_file.is_file()
                    else _first_line(node.get("message") or node.text or "")
                )
                break
        skipped = case.find("skipped")
        if outcome == "pass" and skipped is not None:
            outcome, cause = "skip", _first_line(skipped.get("message") or "").removeprefix("Skipped: ")
        cells.append(Cell(scenario, pair[0], pair[1], outcome, cause, folder))
    return cells


def _rank(spec: str) -> tuple[int, str]:
    """Table order: current, pycodex releases, Codex releases, other paths."""
    kinds = ("current", "pycodex@", "codex@", "path:")
    return next((i for i, k in enumerate(kinds) if spec.startswith(k)), len(kinds)), spec


def render_table(cells: list[Cell], scenarios: list[str], labels: Mapping[str, str] | None = None) -> str:
    """The matrix as text: a ``builds`` block (``labels``: spec -> ``spec → resolved`` for the specs that
    resolved to something they do not name, ``codex@latest → 0.171.0``), the table, then every non-pass."""
    pairs = sorted(dict.fromkeys((c.app, c.exec) for c in cells), key=lambda p: (_rank(p[0]), _rank(p[1])))
    by_key = {(c.app, c.exec, c.scenario): c for c in cells}
    header = ["APP", "EXEC", *scenarios]
    rows = [
        [
            app,
            exec_,
            *(by_key[(app, exec_, s)].outcome if (app, exec_, s) in by_key else "-" for s in scenarios),
        ]
        for app, exec_ in pairs
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [f"build {label}" for spec, label in (labels or {}).items() if label != spec]
    lines += [""] if lines else []
    lines += [
        "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in [header, *rows]
    ]
    problems = [c for c in cells if c.outcome != "pass"]
    if problems:
        lines.append("")
    for c in sorted(problems, key=lambda c: (c.outcome != "fail", c.scenario, c.app, c.exec)):
        where = f"\n    logs: {c.logs}" if c.outcome == "fail" else ""
        lines.append(f"{c.outcome.upper()} {c.scenario} app={c.app} exec={c.exec}: {c.cause}{where}")
    counts = {o: sum(c.outcome == o for c in cells) for o in ("pass", "fail", "skip")}
    lines.append(f"\n{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped")
    return "\n".join(lines)
