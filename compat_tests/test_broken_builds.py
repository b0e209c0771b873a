"""``pycodex compat`` on deliberately broken builds (compat_tests/broken/, selected as ``path:`` specs):
the matrix fails, the table names the pair and a cause that names the change (support/causes.py), and
the pair's folder holds its logs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.compat
BROKEN = Path(__file__).resolve().parent / "broken"
REPO = Path(__file__).resolve().parents[1]
RUN_TIMEOUT = 150

RENAME = f"path:{BROKEN / 'rename_field'}"
EXIT_EARLY = f"path:{BROKEN / 'exit_early'}"
CORRUPT = f"path:{BROKEN / 'corrupt_frame'}"
RENAME_EXIT = f"path:{BROKEN / 'rename_exit_code'}"
WRONG_EXIT = f"path:{BROKEN / 'wrong_exit_code'}"
PROLOGUE = f"path:{BROKEN / 'change_prologue'}"
Run = tuple[int, str, Path]


def _start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    """Start ``pycodex compat ARGS`` (its pairs serially) in a session of its own; logs in tmp_path/logs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYCODEX_COMPAT_", "PYCODEX_SLOW"))}
    env["PYCODEX_BROKEN_WRAPS"] = f"{sys.executable} -m pycodex"
    env["PYTHONPATH"] = str(REPO)
    argv = [sys.executable, "-m", "pycodex", "compat", *args, "-n", "0", "--logs", str(tmp_path / "logs")]
    return subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def _finish(proc: subprocess.Popen[str], tmp_path: Path) -> Run:
    """(exit status, output, logs folder); a run past RUN_TIMEOUT is killed (its whole session, by id)."""
    try:
        out, _ = proc.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        pytest.fail(f"pycodex compat {proc.args!r} did not finish within {RUN_TIMEOUT}s:\n{out}")
    return proc.returncode, out, tmp_path / "logs"


def _compat(tmp_path: Path, *args: str) -> Run:
    return _finish(_start(tmp_path, *args), tmp_path)


#: The matrices of the module, run at once (each serially): most of a pair's time is its processes'
#: waits, so together they take about as long as the longest.
MATRICES = {
    # stdio on the renaming app-server, Noise to the early exit and to the frame corrupter.
    "app-defects": ("--app", RENAME, "--exec", EXIT_EARLY, CORRUPT, "--scenario", "stdio", "noise"),
    # The current app-server against exec-servers with one defect each (the changed prologue over
    # WebSocket, which has none, is the control that passes).
    "exec-noise": ("--app", "current", "--exec", RENAME_EXIT, WRONG_EXIT, PROLOGUE, "--scenario", "noise"),
    "exec-websocket": (
        "--app",
        "current",
        "--exec",
        RENAME_EXIT,
        WRONG_EXIT,
        PROLOGUE,
        "--scenario",
        "websocket",
    ),
    # The prologue binds both sides: the app-server's changed one must fail the same handshake.
    "app-prologue": ("--app", PROLOGUE, "--exec", "current", "--scenario", "noise"),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Run]]:
    """Every matrix of :data:`MATRICES`, by name; app-defects also writes ``junit.xml`` beside its logs."""
    started = {}
    for name, args in MATRICES.items():
        tmp_path = tmp_path_factory.mktemp(name)
        extra = ("--junit", str(tmp_path / "junit.xml")) if name == "app-defects" else ()
        started[name] = (_start(tmp_path, *args, *extra), tmp_path)
    try:
        yield {name: _finish(proc, tmp_path) for name, (proc, tmp_path) in started.items()}
    finally:
        for proc, _ in started.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


def _cause(out: str, scenario: str, app: str, exec_: str) -> str:
    """The cause the table gives the pair, or "" when it did not fail."""
    prefix = f"FAIL {scenario} app={app} exec={exec_}: "
    return next((line.removeprefix(prefix) for line in out.splitlines() if line.startswith(prefix)), "")


def test_an_app_server_that_renames_a_result_field_fails_its_pair_with_the_field_named(
    runs: dict[str, Run],
) -> None:
    rc, out, logs = runs["app-defects"]
    junit = logs.parent / "junit.xml"
    assert rc == 1, out
    cause = "item/completed params.item.aggregatedOutput missing (got aggregatedOutputRenamed?)"
    assert f"FAIL stdio app={RENAME} exec={RENAME}: {cause}" in out, out
    failures = [
        case for case in ET.parse(junit).getroot().iter("testcase") if case.find("failure") is not None
    ]
    assert len(failures) == 3, out
    folder = next(logs.glob("*/stdio"))
    transcript = (folder / "app-server.jsonrpc.jsonl").read_text()
    assert "aggregatedOutputRenamed" in transcript
    assert (folder / "cause.txt").read_text() == f"{cause}\n"
    assert (folder / "app-server.stderr.log").is_file() and (folder / "model-requests.jsonl").is_file()


def test_an_exec_server_that_exits_before_registering_fails_the_noise_pair(
    runs: dict[str, Run],
) -> None:
    rc, out, logs = runs["app-defects"]
    assert rc == 1, out
    assert f"FAIL noise app={RENAME} exec={EXIT_EARLY}: exec-server exited rc=1 before registering" in out, (
        out
    )
    folder = next(logs.glob("*exit_early/noise"))
    assert "deliberately broken build" in (folder / "executor.stderr.log").read_text()
    assert "environment_connected" not in (folder / "relay-frames.txt").read_text()


def test_an_exec_server_that_corrupts_one_relay_frame_fails_the_noise_pair(
    runs: dict[str, Run],
) -> None:
    """The renaming app-server is the current build on the relay side: it drops the stream and says why.
    The reset comes before the renamed field, so it is the pair's first divergence."""
    rc, out, logs = runs["app-defects"]
    assert rc == 1, out
    line = next(
        line for line in out.splitlines() if line.startswith(f"FAIL noise app={RENAME} exec={CORRUPT}:")
    )
    assert "app-server opened 2 relay streams: the first was reset after" in line, out
    assert "; app-server: " in line, out  # the app-server said why it dropped the stream
    folder = next(logs.glob("*corrupt_frame/noise"))
    assert "flipped the last byte of a data frame" in (folder / "executor.stderr.log").read_text()
    assert " reset " in (folder / "relay-frames.txt").read_text()


def test_an_exec_server_that_renames_exit_code_fails_with_the_field_path_and_the_likely_rename(
    runs: dict[str, Run],
) -> None:
    rc, out, logs = runs["exec-websocket"]
    assert rc == 1, out
    cause = "exec-server process/exited params.exitCode missing (got exitCodeRenamed?)"
    assert _cause(out, "websocket", "current", RENAME_EXIT) == cause, out
    folder = next(logs.glob("current__*rename_exit_code/websocket"))
    assert (folder / "cause.txt").read_text() == f"{cause}\n"
    # Over Noise the exec-server's wire is ciphertext: the cause is the command on the app-server's side
    # (today pycodex leaves the item open; Codex fails it with exitCode -1), never the relay stream.
    noise = _cause(runs["exec-noise"][1], "noise", "current", RENAME_EXIT)
    assert noise.startswith("commandExecution "), runs["exec-noise"][1]


def test_an_exec_server_that_reports_a_wrong_exit_code_fails_with_expected_against_got(
    runs: dict[str, Run],
) -> None:
    rc, out, _ = runs["exec-noise"]
    assert rc == 1, out
    assert _cause(out, "noise", "current", WRONG_EXIT) == "commandExecution exitCode: expected 0, got 3", out
    out = runs["exec-websocket"][1]
    expected = "exec-server process/exited params.exitCode: expected 0, got 3"
    assert _cause(out, "websocket", "current", WRONG_EXIT) == expected, out


def _assert_handshake_named(cause: str, out: str) -> None:
    assert cause.startswith("Noise handshake failed at message 1 (app-server -> exec-server): "), out
    assert "instead of sending message 2 (prologue or keys differ?)" in cause, out


def test_an_exec_server_with_a_changed_noise_prologue_fails_the_handshake(
    runs: dict[str, Run],
) -> None:
    rc, out, logs = runs["exec-noise"]
    assert rc == 1, out
    _assert_handshake_named(_cause(out, "noise", "current", PROLOGUE), out)
    ws_out = runs["exec-websocket"][1]
    assert f"FAIL websocket app=current exec={PROLOGUE}" not in ws_out, ws_out  # no Noise, no prologue
    folder = next(logs.glob("current__*change_prologue/noise"))
    assert " handshake " in (folder / "relay-frames.txt").read_text()
    assert "environment->harness" in (folder / "relay-frames.txt").read_text()


def test_an_app_server_with_a_changed_noise_prologue_fails_the_handshake_too(runs: dict[str, Run]) -> None:
    """The prologue binds both sides: the app-server's changed one fails the same handshake message."""
    rc, out, _ = runs["app-prologue"]
    assert rc == 1, out
    _assert_handshake_named(_cause(out, "noise", PROLOGUE, "current"), out)


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
