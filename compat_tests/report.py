"""The compat matrix as a table, read back from pytest's JUnit XML and the per-pair log folders.

A scenario may run several tests per pair (turns-end runs one per fault): :func:`read_cases` reads each
test, :func:`cells_of` folds the tests of one (scenario, app, exec) into one cell with the worst outcome
(``fail`` > ``flaky`` > ``pass`` > ``skip``: a cell with passed and skipped tests passed) and the cause of
its first such test. ``flaky`` is a test that failed and then passed when ``pycodex compat --reruns``
ran it again; it keeps its failed attempts' causes.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from compat_tests.support.matrix import SCENARIO_FILES, log_dir, parse_test_id

__all__ = [
    "OUTCOMES",
    "Case",
    "Cell",
    "attempt_dir",
    "cells_of",
    "read_cases",
    "read_junit",
    "render_table",
    "with_retry",
]

_MODULE_SCENARIO = {name.removesuffix(".py"): scenario for scenario, name in SCENARIO_FILES.items()}
#: Worst first: the outcome a cell shows is the first of these any of its tests had.
OUTCOMES = ("fail", "flaky", "pass", "skip")


@dataclass(frozen=True)
class Case:
    """One test of one pair: its pytest node id, outcome and cause (the failed attempts' causes, if any)."""

    scenario: str
    app: str
    exec: str
    node_id: str
    outcome: str  # pass | fail | skip | flaky
    cause: str
    logs: Path
    failed_attempts: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True)
class Cell:
    """One (scenario, app, exec) of the table: the worst outcome of its tests and that test's cause."""

    scenario: str
    app: str
    exec: str
    outcome: str  # fail | flaky | pass | skip
    cause: str
    logs: Path
    #: Causes of the failed attempts of a flaky cell's first flaky test (attempt 1 first).
    failed_attempts: tuple[str, ...] = ()
    tests: int = 1
    #: The tests' durations added up (every attempt's).
    seconds: float = 0.0


def attempt_dir(folder: Path, attempt: int) -> Path:
    """Where a rerun keeps the artifacts of a pair's failed attempt ``attempt``: ``SCENARIO.attempt-N``."""
    return folder.with_name(f"{folder.name}.attempt-{attempt}")


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line.removeprefix("AssertionError: ").removeprefix(
                "compat_tests.support.rpc.ScenarioError: "
            )
    return ""


def _node_id(classname: str, name: str) -> str:
    """``compat_tests/test_x.py::[Class::]name`` from a JUnit classname (``compat_tests.test_x[.Class]``)."""
    parts = classname.split(".")
    module = next((i for i, p in enumerate(parts) if p in _MODULE_SCENARIO), len(parts) - 1)
    return "::".join(["/".join(parts[: module + 1]) + ".py", *parts[module + 1 :], name])


def _failure_cause(folder: Path, function: str, node: ET.Element) -> str:
    # A test that writes its own folder (turns-end: one per fault) has its cause.txt there.
    for cause_file in (folder / function / "cause.txt", folder / "cause.txt"):
        if cause_file.is_file():
            return cause_file.read_text(encoding="utf-8").strip()
    return _first_line(node.get("message") or node.text or "")


def read_cases(path: Path, logs: Path) -> list[Case]:
    """Every compat test in the JUnit file at ``path``, in file order; ``logs`` is the artifacts root."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        classname = case.get("classname", "")
        scenario = _MODULE_SCENARIO.get(next((p for p in classname.split(".") if p in _MODULE_SCENARIO), ""))
        name = case.get("name", "")
        pair = parse_test_id(name)
        if scenario is None or pair is None:
            continue
        folder = log_dir(logs, scenario, *pair)
        outcome, cause = "pass", ""
        for tag in ("failure", "error"):
            node = case.find(tag)
            if node is not None:
                outcome, cause = "fail", _failure_cause(folder, name.split("[", 1)[0], node)
                break
        skipped = case.find("skipped")
        if outcome == "pass" and skipped is not None:
            outcome, cause = "skip", _first_line(skipped.get("message") or "").removeprefix("Skipped: ")
        seconds = float(case.get("time") or 0.0)
        node_id = _node_id(classname, name)
        cases.append(Case(scenario, pair[0], pair[1], node_id, outcome, cause, folder, (), seconds))
    return cases


def with_retry(first: Case, retry: Case | None) -> Case:
    """``first`` (a failed attempt) after its rerun ``retry``: flaky if the rerun passed, else the rerun's
    failure; either way the failed attempts' causes are kept. No rerun (it did not run): ``first``."""
    if retry is None:
        return first
    attempts = (*first.failed_attempts, first.cause)
    seconds = first.seconds + retry.seconds
    if retry.outcome == "pass":
        return replace(retry, outcome="flaky", cause=attempts[0], failed_attempts=attempts, seconds=seconds)
    return replace(retry, failed_attempts=attempts, seconds=seconds)


def cells_of(cases: Iterable[Case]) -> list[Cell]:
    """One cell per (scenario, app, exec), in first-seen order, with the worst outcome of its tests."""
    groups: dict[tuple[str, str, str], list[Case]] = {}
    for case in cases:
        groups.setdefault((case.scenario, case.app, case.exec), []).append(case)
    cells = []
    for (scenario, app, exec_), group in groups.items():
        worst = min(group, key=lambda c: OUTCOMES.index(c.outcome))  # min keeps the first of equals
        seconds = round(sum(c.seconds for c in group), 3)
        cells.append(
            Cell(
                scenario,
                app,
                exec_,
                worst.outcome,
                worst.cause,
                worst.logs,
                worst.failed_attempts,
                len(group),
                seconds,
            )
        )
    return cells


def read_junit(path: Path, logs: Path) -> list[Cell]:
    """The cells of one JUnit file (see :func:`cells_of`)."""
    return cells_of(read_cases(path, logs))


def _rank(spec: str) -> tuple[int, str]:
    """Table order: current, pycodex releases, Codex releases, other paths."""
    kinds = ("current", "pycodex@", "codex@", "path:")
    return next((i for i, k in enumerate(kinds) if spec.startswith(k)), len(kinds)), spec


def _explain(c: Cell) -> str:
    line = f"{c.outcome.upper()} {c.scenario} app={c.app} exec={c.exec}: {c.cause}"
    if c.outcome == "flaky":
        n = len(c.failed_attempts)
        line = f"{line} (failed {n} time{'s' if n > 1 else ''}, then passed)"
        line += "".join(f"\n    attempt {i}: {cause}" for i, cause in enumerate(c.failed_attempts[1:], 2))
    if c.outcome == "flaky":
        return f"{line}\n    logs: {c.logs} (failed attempt 1: {attempt_dir(c.logs, 1)})"
    return f"{line}\n    logs: {c.logs}" if c.outcome == "fail" else line


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
    for c in sorted(problems, key=lambda c: (OUTCOMES.index(c.outcome), c.scenario, c.app, c.exec)):
        lines.append(_explain(c))
    counts = {o: sum(c.outcome == o for c in cells) for o in OUTCOMES}
    flaky = f", {counts['flaky']} flaky" if counts["flaky"] else ""
    lines.append(f"\n{counts['pass']} passed, {counts['fail']} failed{flaky}, {counts['skip']} skipped")
    return "\n".join(lines)
