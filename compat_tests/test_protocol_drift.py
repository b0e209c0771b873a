"""Protocol drift from one build's app-server schema (the app spec: what a client was written against) to
another's (the exec spec: what it meets).

Both builds write ``app-server generate-json-schema --experimental`` bundles; support/schema_diff.py
compares them and classifies every difference (support/drift_rules.py). The pair's ``drift.txt`` lists
each one with its severity and rule. A breaking change fails the pair (the first one is the cause)
unless acknowledged_drift.txt lists it; a listed one that no longer occurs fails too. Risky changes are
reported (drift.txt, the CI summary, and the cause of a failing pair) and pass.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from compat_tests.support.artifacts import PairLog
from compat_tests.support.builds import Build, last_release
from compat_tests.support.drift_rules import Change
from compat_tests.support.matrix import pairs
from compat_tests.support.processes import ProcessGroup, clean_env
from compat_tests.support.rpc import STEP, ScenarioError
from compat_tests.support.schema_diff import DriftReport, FieldInfo, diff_surfaces, merge_bundles, surface

pytestmark = pytest.mark.compat
SCENARIO = "drift"
ACKNOWLEDGED = Path(__file__).with_name("acknowledged_drift.txt")


def names(build: Build) -> list[str]:
    """The spec and what it resolved to, so ``codex@latest`` -> 0.171.0 finds the lines written for
    ``codex@0.171.0`` and ``pycodex@last`` those for the release it is (``pycodex@0.2.0``)."""
    out = [build.name]
    kind = build.name.split("@", 1)[0]
    if build.resolved and kind in ("codex", "pycodex"):
        out.append(f"{kind}@{build.resolved.split()[0]}")
    return list(dict.fromkeys(out))


def acknowledged(app: Build, exec_: Build, text: str | None = None) -> list[str]:
    """The reviewed breaking changes from ``app`` to ``exec_`` (acknowledged_drift.txt, or ``text``)."""
    lines = (ACKNOWLEDGED.read_text(encoding="utf-8") if text is None else text).splitlines()
    prefixes = [f"{a} -> {e}: " for a in names(app) for e in names(exec_)]
    return list(dict.fromkeys(line.removeprefix(p) for line in lines for p in prefixes if line.startswith(p)))


def drift_lines(report: DriftReport, accepted: list[str]) -> list[str]:
    """drift.txt: the report, each acknowledged breaking line marked so (one not occurring is listed)."""
    lines = report.summary().splitlines()
    marked = {c.line(): c.text for c in report.changes if c.severity == "breaking" and c.text in accepted}
    lines = [f"{line}  (acknowledged)" if line in marked else line for line in lines]
    return lines + [
        f"acknowledged, no longer occurs: {text}" for text in accepted if text not in report.breaking
    ]


def verdict(report: DriftReport, accepted: list[str]) -> str | None:
    """The cause the pair fails with, or None: the first unacknowledged breaking change (with how many
    more and how many risky ones), else the first acknowledged one that no longer occurs."""
    unexpected = [line for line in report.breaking if line not in accepted]
    if unexpected:
        more = [f"+{len(unexpected) - 1} more breaking"] if len(unexpected) > 1 else []
        more += [f"{len(report.risky)} risky"] if report.risky else []
        return unexpected[0] + (f" ({', '.join(more)})" if more else "")
    stale = [line for line in accepted if line not in report.breaking]
    if stale:
        return f"acknowledged drift no longer occurs (remove it from {ACKNOWLEDGED.name}): {stale[0]}"
    return None


async def _surface(group: ProcessGroup, build: Build, out: Path, role: str) -> dict[str, FieldInfo]:
    home = out.parent / f"{out.name}-home"
    home.mkdir(parents=True)
    argv = build.command("app-server", "generate-json-schema", "--experimental", "--out", str(out))
    handle = await group.start(f"{role}-schema", argv, env=clean_env(CODEX_HOME=str(home)), cwd=home)
    try:
        await asyncio.wait_for(handle.proc.wait(), STEP * 2)
    except TimeoutError:
        raise ScenarioError(
            f"{build.name} app-server generate-json-schema did not finish in {STEP * 2:.0f}s"
        ) from None
    result = await handle.stop()
    if result.returncode != 0:
        raise ScenarioError(f"{build.name} app-server generate-json-schema exited rc={result.returncode}")
    files = sorted(out.glob("*.schemas.json"), key=lambda p: (".v2." not in p.name, p.name))
    if not files:
        raise ScenarioError(f"{build.name} app-server generate-json-schema wrote no *.schemas.json bundle")
    bundles: list[dict[str, Any]] = [json.loads(p.read_text(encoding="utf-8")) for p in files]
    return surface(merge_bundles(bundles))


async def test_protocol_drift_between_builds_has_no_breaking_change(
    app_build: Build, exec_build: Build, process_group: ProcessGroup, tmp_path: Path, pair_log: PairLog
) -> None:
    try:
        old = await _surface(process_group, app_build, tmp_path / "old", "from")
        new = await _surface(process_group, exec_build, tmp_path / "new", "to")
    finally:
        await process_group.stop_all()
        pair_log.processes(process_group)
    report = diff_surfaces(old, new)
    accepted = acknowledged(app_build, exec_build)
    pair_log.write_lines(
        "drift.txt", [f"# {app_build.label} -> {exec_build.label}", *drift_lines(report, accepted)]
    )
    cause = verdict(report, accepted)
    if cause:
        raise ScenarioError(cause, f"{report.summary()}\nlogs: {pair_log.folder}")


# The scenario's rules, checked without running anything (the policy's pairs: test_skew_policy.py).


def test_a_moving_spec_finds_the_lines_of_what_it_resolved_to() -> None:
    latest = Build("codex@latest", ("codex",), "0.171.0")
    last = Build("pycodex@last", ("pycodex",), "0.2.0 (6339238)")
    text = "\n".join(
        [
            "codex@0.169.0 -> codex@0.171.0: removed method a",
            "pycodex@0.2.0 -> current: removed method b",
            "pycodex@last -> current: removed method c",
            "current -> codex@0.169.0: removed method d",
        ]
    )
    assert acknowledged(Build("codex@0.169.0", ("codex",)), latest, text) == ["removed method a"]
    assert acknowledged(last, Build("current", ("pycodex",)), text) == [
        "removed method b",
        "removed method c",
    ]


def test_drift_txt_marks_the_acknowledged_lines() -> None:
    report = DriftReport(
        [Change("removed-method", "removed method a"), Change("added-method", "added method b")]
    )
    assert drift_lines(report, ["removed method a", "removed method z"]) == [
        "1 breaking, 0 risky, 1 additive",
        "BREAKING [removed-method] removed method a  (acknowledged)",
        "additive [added-method] added method b",
        "acknowledged, no longer occurs: removed method z",
    ]


def test_unacknowledged_breaking_fails_risky_passes_and_stale_entries_fail() -> None:
    report = DriftReport(
        [
            Change("removed-method", "removed method a"),
            Change("removed-method", "removed method b"),
            Change("output-became-nullable", "x may be null: string -> null|string"),
        ]
    )
    assert verdict(report, []) == "removed method a (+1 more breaking, 1 risky)"
    assert verdict(report, ["removed method a"]) == "removed method b (1 risky)"
    assert verdict(report, ["removed method a", "removed method b"]) is None
    assert verdict(DriftReport(report.changes[2:]), []) is None  # risky alone passes
    stale = verdict(DriftReport(), ["removed method a"])
    assert (
        stale == f"acknowledged drift no longer occurs (remove it from {ACKNOWLEDGED.name}): removed method a"
    )


def test_every_acknowledged_line_names_a_pair_the_full_matrix_runs_and_a_breaking_change() -> None:
    """An entry for a pair nothing runs could never go stale; a non-breaking one never fails anything."""
    full = set(pairs(SCENARIO, {"PYCODEX_COMPAT_ALL": "1"}))
    alias = {last_release(): "pycodex@last"}
    breaking = ("removed ", "narrowed type ", "changed type ", "added required ")
    for line in ACKNOWLEDGED.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        head, _, text = line.partition(": ")
        app, _, exec_ = head.partition(" -> ")
        assert (app, exec_) in full or (alias.get(app, app), exec_) in full, line
        assert text.startswith(breaking) or text.endswith(" became required"), line
