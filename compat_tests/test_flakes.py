"""``pycodex compat --reruns``: a test that fails and then passes is ``flaky`` (exit 0, or 1 with
``--strict-flakes``) with its failed attempt's cause kept; each run is a line of the history, and
``pycodex compat history`` flags a cell whose outcome flips between runs.

The flaky build is a ``path:`` wrapper around this checkout whose app-server refuses its first start
(state in a file of the test's temp dir) and runs normally after that; the scenario is stdio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compat_tests.history import flipping, read_history, render_history

pytestmark = pytest.mark.compat
REPO = Path(__file__).resolve().parents[1]
RUN_TIMEOUT = 120
REFUSAL = "flaky build: the first app-server start refuses"

WRAPPER = """\
#!{python}
import os, sys
state = {state!r}
if sys.argv[1:2] == ["app-server"] and not os.path.exists(state):
    open(state, "w").close()
    print({refusal!r}, file=sys.stderr)
    sys.exit(3)
os.execv({python!r}, [{python!r}, "-m", "pycodex", *sys.argv[1:]])
"""


def _compat(tmp_path: Path, *args: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYCODEX_COMPAT_", "PYCODEX_SLOW"))}
    env["PYTHONPATH"] = str(REPO)
    argv = [sys.executable, "-m", "pycodex", "compat", *args]
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
    )
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def flaky_build(tmp_path: Path) -> tuple[str, Path]:
    """The ``path:`` spec of the wrapper and its state file (absent: the next app-server start fails)."""
    state = tmp_path / "started-once"
    wrapper = tmp_path / "flaky-build"
    wrapper.write_text(WRAPPER.format(python=sys.executable, state=str(state), refusal=REFUSAL))
    wrapper.chmod(0o755)
    return f"path:{wrapper}", state


def test_a_pair_that_fails_then_passes_is_flaky_and_the_history_shows_it_flip(
    tmp_path: Path, flaky_build: tuple[str, Path]
) -> None:
    spec, state = flaky_build
    logs, junit = tmp_path / "logs", tmp_path / "out" / "junit.xml"
    common = ("--app", spec, "--scenario", "stdio", "-n", "0", "--logs", str(logs), "--junit", str(junit))

    rc, out = _compat(tmp_path, *common)  # no reruns: the refusal fails the pair
    assert rc == 1, out
    assert f"FAIL stdio app={spec} exec={spec}: " in out, out
    assert state.exists()

    state.unlink()
    rc, out = _compat(tmp_path, *common, "--reruns", "2")
    assert rc == 0, out
    line = next(line for line in out.splitlines() if line.startswith("FLAKY stdio"))
    assert line.endswith("(failed 1 time, then passed)"), out
    assert "0 passed, 0 failed, 1 flaky, 0 skipped" in out, out
    assert f"FLIPS stdio app={spec} exec={spec} over the last 2 runs: fail flaky" in out, out
    assert (logs / "pytest.rerun-1.log").is_file() and not (logs / "pytest.rerun-2.log").exists()
    first_attempt = next(logs.glob("*/stdio.attempt-1"))
    assert REFUSAL in (first_attempt / "app-server.stderr.log").read_text()  # the failed attempt's logs
    assert (first_attempt.with_name("stdio") / "app-server.jsonrpc.jsonl").is_file()  # the passing one's

    history = junit.parent / "compat-history.jsonl"
    first, second = read_history(history)
    [failed], [flaky] = first["cells"], second["cells"]
    assert (failed["outcome"], failed["attempts"], failed["failed_attempts"]) == ("fail", 1, [])
    assert flaky["outcome"] == "flaky" and flaky["attempts"] == 2
    assert flaky["failed_attempts"] == [failed["cause"]] and failed["cause"], flaky  # the same refusal
    assert flaky["cause"] == failed["cause"]
    assert len(first["commit"].split()[0]) == 40 and first["builds"] == {"current": "", spec: ""}
    assert flipping([first, second]) == [("stdio", spec, spec)]
    assert (
        render_history([first, second]).splitlines()[1] == f"stdio app={spec} exec={spec}: fail flaky  FLIPS"
    )

    rc, out = _compat(tmp_path, "history", "--history", str(history), "--strict")
    assert rc == 1, out
    assert "1 cell(s) flip between runs" in out, out

    state.unlink()
    rc, out = _compat(tmp_path, *common, "--reruns", "1", "--strict-flakes")
    assert rc == 1, out
    assert "FLAKY stdio" in out, out
    assert [c["outcome"] for r in read_history(history) for c in r["cells"]] == ["fail", "flaky", "flaky"]


def test_history_of_steady_cells_flags_nothing(tmp_path: Path) -> None:
    history = tmp_path / "h.jsonl"
    cell = {"scenario": "noise", "app": "current", "exec": "current", "outcome": "pass"}
    skipped = dict(cell, outcome="skip")
    lines = [json.dumps({"time": str(i), "cells": [c]}) for i, c in enumerate([cell, skipped, cell])]
    history.write_text("\n".join([*lines, '{"cut": ']) + "\n")  # a cut last line is ignored
    records = read_history(history)
    assert len(records) == 3 and flipping(records) == []
    rc, out = _compat(tmp_path, "history", "--history", str(history), "--strict", "--last", "2")
    assert rc == 0, out
    assert "noise app=current exec=current: skip pass\n0 cell(s) flip between runs" in out, out
    rc, out = _compat(tmp_path, "history", "--history", str(tmp_path / "absent.jsonl"))
    assert rc == 2 and "no history at" in out, out
