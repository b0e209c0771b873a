"""One run of the compat matrix: pytest over the chosen scenario modules, then reruns of what failed.

:func:`run_matrix` is shared by ``pycodex compat`` (runner.py) and ``pycodex compat bisect`` (bisect.py).
The builds come resolved (``PYCODEX_COMPAT_RESOLVED``); pytest runs in a subprocess with its output in
``LOGS/pytest.log``. With ``reruns`` > 0 the failed tests run again, by node id, in another pytest (its
log ``pytest.rerun-N.log``, its JUnit ``JUNIT.rerun-N.xml``), after the failed pair's folder is moved
to ``SCENARIO.attempt-N/`` so the failed attempt's artifacts are kept: a test that passes on a rerun is
``flaky``, with its failed attempts' causes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from compat_tests.report import Case, Cell, attempt_dir, cells_of, read_cases, with_retry
from compat_tests.support.builds import RESOLVED_ENV, Build, resolved_env
from compat_tests.support.matrix import SCENARIO_FILES

__all__ = ["RUN_TIMEOUT", "MatrixRun", "matrix_env", "missing_plugins", "run_matrix"]

HERE = Path(__file__).resolve().parent
RUN_TIMEOUT = 3600.0


@dataclass(frozen=True)
class MatrixRun:
    """What one matrix run gave: its cells, whether pytest itself went wrong, and where its log is."""

    cells: list[Cell]
    #: Empty when pytest ran normally; else why the run is broken (a timeout, no pairs ran, an error exit).
    problem: str
    pytest_log: Path
    reruns: int = 0


def matrix_env(apps: Sequence[str] = (), execs: Sequence[str] = (), *, full: bool = False) -> dict[str, str]:
    """This process's environment with the matrix variables set as ``--app``/``--exec``/``--all`` say."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYCODEX_COMPAT_") or k == "PYCODEX_COMPAT_CACHE"
    }
    env.pop("PYCODEX_SLOW", None)
    if apps:
        env["PYCODEX_COMPAT_APPS"] = " ".join(apps)
    if execs:
        env["PYCODEX_COMPAT_EXECS"] = " ".join(execs)
    if full:
        env["PYCODEX_COMPAT_ALL"] = "1"
    return env


def missing_plugins(workers: str) -> list[str]:
    """The pytest plugins ``pycodex compat`` needs (xdist only when ``workers`` is parallel) that are absent."""
    needed = ["pytest", "pytest_asyncio", "pytest_timeout"] + (["xdist"] if workers not in ("0", "1") else [])
    return [name for name in needed if importlib.util.find_spec(name) is None]


def _pytest(
    targets: Sequence[str], env: Mapping[str, str], junit: Path, log: Path, workers: str
) -> int | None:
    """pytest over ``targets`` (files or node ids); its exit status, or None if it ran out of time."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(HERE.parent)]
    argv += [*targets, "--junitxml", str(junit), "-o", "junit_logging=no"]
    if workers not in ("0", "1"):
        argv += ["-n", workers]
    with open(log, "w", encoding="utf-8") as out:
        try:
            return subprocess.run(
                argv,
                cwd=HERE.parent,
                env=dict(env),
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=RUN_TIMEOUT,
                check=False,
            ).returncode
        except subprocess.TimeoutExpired:
            return None


def _keep_failed_attempt(cases: Sequence[Case], attempt: int) -> None:
    """Move each failed pair's folder aside (``SCENARIO.attempt-N``) before the rerun writes it afresh."""
    for folder in dict.fromkeys(c.logs for c in cases):
        if folder.is_dir():
            kept = attempt_dir(folder, attempt)
            shutil.rmtree(kept, ignore_errors=True)  # a previous run's copy under the same --logs
            folder.rename(kept)


def run_matrix(
    scenarios: Sequence[str],
    env: Mapping[str, str],
    builds: Sequence[Build],
    logs: Path,
    junit: Path,
    *,
    workers: str,
    reruns: int = 0,
) -> MatrixRun:
    """Run ``scenarios`` over the matrix ``env`` names (support/matrix.py) with ``builds`` resolved."""
    env = {**env, RESOLVED_ENV: resolved_env(list(builds)), "PYCODEX_COMPAT_LOGS": str(logs)}
    log = logs / "pytest.log"
    rc = _pytest([str(HERE / SCENARIO_FILES[s]) for s in scenarios], env, junit, log, workers)
    if rc is None:
        return MatrixRun([], f"the matrix did not finish within {RUN_TIMEOUT:.0f}s (see {log})", log)
    cases = read_cases(junit, logs) if junit.is_file() else []
    if not cases:
        problem = "" if rc in (0, 5) else f"pytest ran no pairs (exit {rc}; log {log})"
        return MatrixRun([], problem, log)
    done = 0
    for attempt in range(1, reruns + 1):
        failed = [c for c in cases if c.outcome == "fail"]
        if not failed:
            break
        _keep_failed_attempt(failed, attempt)
        rerun_junit = junit.with_name(f"{junit.stem}.rerun-{attempt}.xml")
        rerun_log = logs / f"pytest.rerun-{attempt}.log"
        rerun_junit.unlink(missing_ok=True)
        if _pytest([c.node_id for c in failed], env, rerun_junit, rerun_log, workers) is None:
            break  # out of time: the failures stand as they are
        done = attempt
        retried = {c.node_id: c for c in read_cases(rerun_junit, logs)} if rerun_junit.is_file() else {}
        cases = [with_retry(c, retried.get(c.node_id)) if c.outcome == "fail" else c for c in cases]
    # Exit 1 is pytest's "some test failed", which the cells tell; anything else is pytest going wrong.
    problem = "" if rc in (0, 1, 5) else f"pytest exited {rc} (log {log})"
    return MatrixRun(cells_of(cases), problem, log, done)
