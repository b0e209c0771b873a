"""``pycodex compat`` on deliberately broken builds (compat_tests/broken/, selected as ``path:`` specs):
the matrix fails, the table names the pair and a readable cause, and the pair's folder holds its logs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.compat
BROKEN = Path(__file__).resolve().parent / "broken"
REPO = Path(__file__).resolve().parents[1]
RUN_TIMEOUT = 100


def _compat(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    """Run ``pycodex compat ARGS`` serially; (exit status, stdout, logs folder)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYCODEX_COMPAT_", "PYCODEX_SLOW"))}
    env["PYCODEX_BROKEN_WRAPS"] = f"{sys.executable} -m pycodex"
    env["PYTHONPATH"] = str(REPO)
    logs = tmp_path / "logs"
    argv = [sys.executable, "-m", "pycodex", "compat", *args, "-n", "0", "--logs", str(logs)]
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False
    )
    return done.returncode, done.stdout + done.stderr, logs


RENAME = f"path:{BROKEN / 'rename_field'}"
EXIT_EARLY = f"path:{BROKEN / 'exit_early'}"
CORRUPT = f"path:{BROKEN / 'corrupt_frame'}"


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str, Path, Path]:
    """One matrix over both broken builds: stdio on the renaming app-server, Noise to the early exit."""
    tmp_path = tmp_path_factory.mktemp("broken")
    junit = tmp_path / "out.xml"
    args = (
        "--app",
        RENAME,
        "--exec",
        EXIT_EARLY,
        CORRUPT,
        "--scenario",
        "stdio",
        "noise",
        "--junit",
        str(junit),
    )
    rc, out, logs = _compat(tmp_path, *args)
    return rc, out, logs, junit


def test_an_app_server_that_renames_a_result_field_fails_its_pair_with_the_field_named(
    broken_run: tuple[int, str, Path, Path],
) -> None:
    rc, out, logs, junit = broken_run
    assert rc == 1, out
    assert f"FAIL stdio app={RENAME} exec={RENAME}: item/completed missing field aggregatedOutput" in out, out
    failures = [
        case for case in ET.parse(junit).getroot().iter("testcase") if case.find("failure") is not None
    ]
    assert len(failures) == 3, out
    folder = next(logs.glob("*/stdio"))
    transcript = (folder / "app-server.jsonrpc.jsonl").read_text()
    assert "aggregatedOutputRenamed" in transcript
    assert (folder / "cause.txt").read_text().strip() == "item/completed missing field aggregatedOutput"
    assert (folder / "app-server.stderr.log").is_file() and (folder / "model-requests.jsonl").is_file()


def test_an_exec_server_that_exits_before_registering_fails_the_noise_pair(
    broken_run: tuple[int, str, Path, Path],
) -> None:
    rc, out, logs, _ = broken_run
    assert rc == 1, out
    assert f"FAIL noise app={RENAME} exec={EXIT_EARLY}: exec-server exited rc=1 before registering" in out, (
        out
    )
    folder = next(logs.glob("*exit_early/noise"))
    assert "deliberately broken build" in (folder / "executor.stderr.log").read_text()
    assert "environment_connected" not in (folder / "relay-frames.txt").read_text()


def test_an_exec_server_that_corrupts_one_relay_frame_fails_the_noise_pair(
    broken_run: tuple[int, str, Path, Path],
) -> None:
    """The renaming app-server is the current build on the relay side: it drops the stream and says why."""
    rc, out, logs, _ = broken_run
    assert rc == 1, out
    line = next(
        line for line in out.splitlines() if line.startswith(f"FAIL noise app={RENAME} exec={CORRUPT}:")
    )
    assert "app-server opened 2 relay streams: the first was reset after" in line, out
    assert "; app-server: " in line, out  # the app-server said why it dropped the stream
    folder = next(logs.glob("*corrupt_frame/noise"))
    assert "flipped the last byte of a data frame" in (folder / "executor.stderr.log").read_text()
    assert " reset " in (folder / "relay-frames.txt").read_text()


def test_a_missing_build_fails_the_run_with_its_reason_never_skipped(tmp_path: Path) -> None:
    rc, out, _ = _compat(tmp_path, "--app", "pycodex@no-such-ref", "--scenario", "stdio")
    assert rc == 2, out
    assert "pycodex@no-such-ref: 'no-such-ref' is not a commit of this repository" in out, out
    assert "SKIP" not in out, out


def test_the_pairs_list_as_a_github_actions_matrix(tmp_path: Path) -> None:
    rc, out, _ = _compat(
        tmp_path, "--app", "current", "--exec", "codex@0.171.0", "--list", "--format", "github"
    )
    assert rc == 0, out
    rows = json.loads(out)["include"]
    assert {"scenario": "websocket", "app": "current", "exec": "codex@0.171.0"} in rows
    assert {"scenario": "stdio", "app": "current", "exec": "current"} in rows
    assert {"scenario": "storage", "app": "current", "exec": "codex@0.171.0"} in rows
    assert {"scenario": "turns-end", "app": "current", "exec": "current"} in rows
    assert {"scenario": "acp", "app": "current", "exec": "current"} in rows
    assert {"scenario": "clients", "app": "current", "exec": "current"} in rows
    assert len(rows) == 8  # noise, websocket, stdio, drift, storage, turns-end, acp, clients
