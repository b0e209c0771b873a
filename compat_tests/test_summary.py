"""compat_tests/summary.py: the CI jobs' matrix from the real listing, and the job summary from JUnit files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat_tests import runner, summary
from compat_tests.support.matrix import log_dir


def _listing(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, str]]:
    assert runner.main([*argv, "--list", "--format", "github"]) == 0
    rows: list[dict[str, str]] = json.loads(capsys.readouterr().out)["include"]
    return rows


def test_the_ci_matrix_runs_every_full_matrix_row_but_the_codex_only_ones(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = _listing(capsys, "--all")
    wanted = {
        (r["scenario"], r["app"], r["exec"]) for r in rows if not summary.is_codex_only(r["app"], r["exec"])
    }
    assert len(wanted) < len(rows), "the full matrix has Codex-only pairs to leave out"
    jobs = summary.ci_matrix(rows)["include"]
    assert len({job["name"] for job in jobs}) == len(jobs)
    ran = set()
    for job in jobs:
        assert not summary.is_codex_only(job["app"], job["exec"])
        # What the job's command line runs, from the runner itself.
        argv = ["--app", job["app"], "--exec", job["exec"], "--scenario", *job["scenarios"].split()]
        ran |= {(r["scenario"], r["app"], r["exec"]) for r in _listing(capsys, *argv)}
    assert ran == wanted


def test_codex_only_means_neither_side_is_pycodex() -> None:
    assert summary.is_codex_only("codex@0.169.0", "codex@latest")
    assert not summary.is_codex_only("codex@0.169.0", "current")
    assert not summary.is_codex_only("pycodex@last", "codex@0.171.0")


_JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">{cases}</testsuite></testsuites>
"""


def _case(module: str, app: str, exec_: str, inner: str = "") -> str:
    name = f"test_x[app={app},exec={exec_}]"
    return f'<testcase classname="compat_tests.{module}" name="{name}" time="1">{inner}</testcase>'


@pytest.fixture
def results(tmp_path: Path) -> tuple[Path, Path]:
    """Two pair jobs' JUnit files and log folders, merged as the summary job downloads them."""
    junit, logs = tmp_path / "junit", tmp_path / "logs"
    junit.mkdir()
    (junit / "current__codex@latest.xml").write_text(
        _JUNIT.format(
            cases=_case(
                "test_noise_version_skew", "current", "codex@latest", '<failure message="boom">x</failure>'
            )
            + _case("test_protocol_drift", "current", "codex@latest")
        )
    )
    (junit / "codex@latest__current.xml").write_text(
        _JUNIT.format(
            cases=_case(
                "test_storage_skew", "codex@latest", "current", '<skipped message="Skipped: no npm"/>'
            )
        )
    )
    noise = log_dir(logs, "noise", "current", "codex@latest")
    noise.mkdir(parents=True)
    (noise / "cause.txt").write_text("exec-server exited rc=1 before registering | early\n")
    drift = log_dir(logs, "drift", "current", "codex@latest")
    drift.mkdir(parents=True)
    (drift / "drift.txt").write_text(
        "# current -> codex@latest → 0.172.0\n0 breaking, 2 risky, 1 additive\n"
        "RISKY [output-value-added] added variant notification item/completed params.item[plan]\n"
        "RISKY [deprecated] deprecated method thread/start params.personality\n"
        "additive [added-method] added method thread/x\n"
    )
    return junit, logs


def test_the_summary_opens_with_the_first_failure_and_shows_risky_drift(results: tuple[Path, Path]) -> None:
    junit, logs = results
    cells = summary.read_cells(junit, logs)
    text = summary.render_markdown(cells, {"codex@latest": "codex@latest → 0.172.0", "current": "current"})
    lines = text.splitlines()
    assert lines[0] == (
        "compat: 1 of 3 failed; first: noise app=current exec=codex@latest: "
        "exec-server exited rc=1 before registering | early"
    )
    assert "Builds: `codex@latest → 0.172.0`" in lines
    assert "| app | exec | noise | drift | storage |" in lines
    rows = [line for line in lines if line.startswith("| `")]
    assert rows == [  # current first, though its file sorts last
        "| `current` | `codex@latest` | **FAIL** | pass (⚠ 2 risky) | - |",
        "| `codex@latest` | `current` | - | - | skip |",
    ]
    assert (
        "- **FAIL** noise `current` -> `codex@latest`: exec-server exited rc=1 before registering \\| early"
        in lines
    )
    assert "- **SKIP** storage `codex@latest` -> `current`: no npm" in lines
    assert "- `[deprecated] deprecated method thread/start params.personality`" in lines
    assert lines[-1] == "1 passed, 1 failed, 1 skipped"


def test_check_fails_with_the_verdict_and_passes_when_all_pass(
    results: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    junit, logs = results
    assert summary.main(["render", "--junit", str(junit), "--logs", str(logs), "--check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("::error title=compat::compat: 1 of 3 failed; first: noise app=current")
    (junit / "current__codex@latest.xml").unlink()
    assert summary.main(["render", "--junit", str(junit), "--logs", str(logs), "--check"]) == 0
    assert capsys.readouterr().out.startswith("compat: all 0 passed (1 skipped, 0 risky drift changes)")
    (junit / "codex@latest__current.xml").unlink()
    assert summary.main(["render", "--junit", str(junit), "--logs", str(logs), "--check"]) == 1, "no results"
