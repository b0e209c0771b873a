"""Real clients against each app-server build: the official Python and TypeScript SDKs and the Codex TUI.

Pairs are (app, app): one build alone, as in ``stdio``. Each client is the published package, pinned and
installed into the compat cache (support/clients.py), driven by a script of ``compat_tests/clients`` with the
harness's fake model:

* ``openai-codex`` 0.163.0 (PyPI): spawns ``BUILD app-server --listen stdio://``; one turn with the SDK's
  defaults that runs a command, and one with ``approvalPolicy: untrusted`` whose approval request the SDK's
  handler accepts.
* ``@openai/codex-sdk`` 0.163.0 (npm): an exec-mode client; it speaks no app-server JSON-RPC but spawns
  ``BUILD exec --experimental-json`` per turn and reads its JSONL events. One turn that runs a command.
* the Codex 0.169.0 TUI in tmux as ``codex --remote ws://127.0.0.1:PORT`` against ``BUILD app-server --listen
  ws://...``: a prompt is typed, the model's answer is rendered, ``/quit`` exits 0.
* (slow) ``../shared/clients/run_all.sh`` with the build, when that folder exists.

A failure's first line names the client and what diverged (``openai-codex 0.163.0 approval: final response
'None', expected 'done approval'``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from compat_tests.support.artifacts import PairLog
from compat_tests.support.builds import REPO_ROOT, Build, find_build
from compat_tests.support.clients import (
    CLIENT_SCRIPTS,
    PYTHON_SDK,
    TS_SDK,
    ClientUnavailable,
    Tui,
    free_port,
    launcher,
    python_sdk,
    run_to_end,
    run_verdict,
    shared_clients,
    ts_sdk,
    wait_listening,
)
from compat_tests.support.matrix import CODEX_REFERENCE, full_builds, is_slow, pairs
from compat_tests.support.processes import ProcessGroup, clean_env
from compat_tests.support.rpc import ScenarioError
from compat_tests.support.scenario import start_model, write_config

pytestmark = pytest.mark.compat
SCENARIO = "clients"
RUN_PROMPT = "compat sdk run: write run.txt"
APPROVAL_PROMPT = "compat sdk approval: write approval.txt"
TS_PROMPT = "compat ts sdk: write ts.txt"
TUI_PROMPT = "compat tui: say the answer"
#: The TUI also asks the model for a thread title (structured output) after the first prompt; both requests
#: get this same JSON answer, so whichever comes first the main turn renders it (braces and all) and the
#: title parses. The status line shows the bare title, so the braces prove the message was rendered.
TUI_ANSWER = '{"title":"Compat TUI answer"}'
COMPOSER = "Ask Codex to do anything"
STATUS_LINE = "mock-model default · "
ERROR_LINE = re.compile(r"Failed to|failed to|■|Connection failed|not supported|error", re.IGNORECASE)
SCRIPT_TIMEOUT = 150.0
#: Releases without an ``exec`` subcommand (pycodex 0.1.0 offers app-server, exec-server, relay and demo):
#: the exec-mode client cannot run against them. Strict: a pair that passes must be moved out of here.
NO_EXEC_RELEASES = frozenset({"pycodex@0.1.0"})
#: The shared run_all.sh clients, by its names; the exec-mode one is left out for NO_EXEC_RELEASES.
SHARED_CLIENTS = ("raw", "raw_approval", "openai_codex", "openai_codex_approval", "ts_codex_sdk")


def _call(name: str, workspace: Path) -> dict[str, Any]:
    arguments = {"cmd": f"printf hi > {name}", "workdir": str(workspace), "yield_time_ms": 10_000}
    return {"type": "function_call", "call_id": f"call-{name}", "name": "exec_command",
            "arguments": json.dumps(arguments)}


def _command_turn(when: str, file: str, answer: str, workspace: Path) -> list[dict[str, Any]]:
    # `when` routes by the turn's own prompt, so a request from another thread cannot take these answers.
    return [{"when": when, "output": [_call(file, workspace)]},
            {"when": when, "output": [{"type": "message", "text": answer}]}]


def _available(get: Any) -> Path:
    try:
        return Path(get())
    except ClientUnavailable as exc:
        pytest.skip(str(exc))


def _fail_on(problems: list[str]) -> None:
    if problems:
        raise ScenarioError(problems[0], "\n".join(problems[1:]))


def _file_problems(client: str, path: Path) -> list[str]:
    if not path.is_file():
        return [f"{client}: the command did not run ({path.name} was not written)"]
    content = path.read_text()
    return [] if content == "hi" else [f"{client}: {path.name} holds {content!r}, expected 'hi'"]


def _turn_problems(client: str, step: dict[str, Any] | None, answer: str) -> list[str]:
    if step is None:
        return [f"{client}: no result"]
    problems = []
    if "commandExecution" not in step.get("items", []):
        problems.append(f"{client}: the turn's items hold no commandExecution (items: {step.get('items')})")
    if step.get("status") != "completed":
        problems.append(f"{client}: turn status {step.get('status')!r} (error {step.get('error')!r})")
    if step.get("final") != answer:
        problems.append(f"{client}: final response {step.get('final')!r}, expected {answer!r}")
    return problems


class _Run:
    """One test's processes and artifacts: failures get every process's stderr tail and the log folder."""

    def __init__(self, group: ProcessGroup, tmp_path: Path, log: PairLog) -> None:
        self.group, self.tmp, self.log = group, tmp_path, log
        self.workspace = tmp_path / "workspace"
        self.workspace.mkdir()
        self.home = tmp_path / "app-home"

    async def _save(self) -> None:
        await self.group.stop_all()
        self.log.processes(self.group)
        self.log.model_requests(self.tmp / "model-requests.jsonl")

    @asynccontextmanager
    async def checked(self) -> AsyncIterator[None]:
        """Stop the processes and save the artifacts however the block ends; a ScenarioError gains every
        process's stderr tail and the log folder below its cause line."""
        try:
            yield
        except ScenarioError as exc:
            await self._save()
            raise ScenarioError(exc.cause, f"{exc}\n{self.group.diagnostics()}\nlogs: {self.log.folder}") from exc
        finally:
            await self._save()  # idempotent: the processes are stopped once, the files rewritten alike

    def model_requests(self) -> list[dict[str, Any]]:
        log = self.tmp / "model-requests.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def pair_log(request: pytest.FixtureRequest, pair_log: PairLog) -> PairLog:
    """One folder per client: ``LOGS/APP__APP/clients/TEST/`` (conftest's, one level down), so each test's
    processes, model requests and ``cause.txt`` stay apart."""
    return PairLog(pair_log.folder / request.function.__name__)


@pytest.fixture
async def run(process_group: ProcessGroup, tmp_path: Path, pair_log: PairLog) -> _Run:
    return _Run(process_group, tmp_path, pair_log)


SHARED_RUN_ALL = Path(os.environ.get("PYCODEX_SHARED_DIR") or REPO_ROOT.parent / "shared") / "clients" / "run_all.sh"


def _matrix_asked_for() -> bool:
    """Whether this run is the full or an explicit matrix (the default slice stays seconds long)."""
    env = os.environ
    return "1" in (env.get("PYCODEX_SLOW"), env.get("PYCODEX_COMPAT_ALL")) or bool(env.get("PYCODEX_COMPAT_APPS"))


# First in the module: `pycodex compat` shows one outcome per pair and scenario, that of the pair's last test,
# and this one is a skip in the default slice.
@pytest.mark.slow
async def test_shared_client_scripts_pass(app_spec: str, app_build: Build, run: _Run) -> None:
    # Five client runs of up to 150 s each: never in the default slice, which `pycodex compat` runs unfiltered.
    if not _matrix_asked_for():
        pytest.skip("the shared client scripts run in the full or an explicit matrix (--all, --app, PYCODEX_SLOW=1)")
    if not SHARED_RUN_ALL.is_file():
        pytest.skip(f"no shared client scripts at {SHARED_RUN_ALL} (set PYCODEX_SHARED_DIR)")
    clients_dir = _available(lambda: shared_clients(SHARED_RUN_ALL.parent / "setup_clients.sh"))
    # The exec-mode client of a release without `exec` is test_ts_sdk_runs_an_exec_turn's strict xfail.
    only = [c for c in SHARED_CLIENTS if not (c == "ts_codex_sdk" and app_spec in NO_EXEC_RELEASES)]
    env = clean_env(CLIENTS_DIR=str(clients_dir), TMPDIR=str(run.tmp), HOME=str(run.tmp), ONLY=" ".join(only))
    async with run.checked():
        argv = ["bash", str(SHARED_RUN_ALL), str(launcher(app_build, run.tmp / "bin"))]
        result = await run_to_end(run.group, "shared-run-all", argv, env, run.tmp, 900.0)
        run.log.write_lines("shared-run-all.txt", result.stdout_lines)
        failed = [line.strip() for line in result.stdout_lines if re.match(r"\S+\s+FAIL", line)]
        if result.returncode != 0 or failed or f"{len(only)} passed, 0 failed" not in result.stdout_lines:
            last = (failed or result.stdout_lines[-1:] or ["no output"])[0]
            raise ScenarioError(f"shared run_all.sh: {last[:200]}", "\n".join(result.stdout_lines))


async def test_python_sdk_runs_turns_and_answers_an_approval(app_build: Build, run: _Run) -> None:
    python = _available(python_sdk)
    client = f"{PYTHON_SDK[0]} {PYTHON_SDK[1]}"
    script = [*_command_turn(RUN_PROMPT, "run.txt", "done run", run.workspace),
              *_command_turn(APPROVAL_PROMPT, "approval.txt", "done approval", run.workspace)]
    async with run.checked():
        write_config(run.home, await start_model(run.group, run.tmp, script), approval_policy="on-request")
        argv = [str(python), "-I", str(CLIENT_SCRIPTS / "python_sdk_scenario.py"),
                "--codex-bin", str(launcher(app_build, run.tmp / "bin")), "--workspace", str(run.workspace),
                "--home", str(run.home), "--run-prompt", RUN_PROMPT, "--approval-prompt", APPROVAL_PROMPT]
        env = clean_env(HOME=str(run.tmp))
        verdict = await run_verdict(run.group, "python-sdk", argv, env, run.tmp, SCRIPT_TIMEOUT)
        run.log.write_lines("python-sdk.verdict.json", [json.dumps(verdict, indent=1)])
        problems = [f"{client} {p}" for p in verdict.get("problems", [])]
        steps = verdict.get("steps", {})
        problems += _turn_problems(f"{client} run", steps.get("run"), "done run")
        problems += _file_problems(f"{client} run", run.workspace / "run.txt")
        approval = steps.get("approval")
        if approval is not None and "item/commandExecution/requestApproval" not in approval.get("approvals", []):
            problems.append(f"{client} approval: the SDK's handler got no item/commandExecution/requestApproval "
                            f"(got {approval.get('approvals')})")
        problems += _turn_problems(f"{client} approval", approval, "done approval")
        problems += _file_problems(f"{client} approval", run.workspace / "approval.txt")
        _fail_on(problems)


async def test_ts_sdk_runs_an_exec_turn(
    app_spec: str, app_build: Build, run: _Run, request: pytest.FixtureRequest
) -> None:
    if app_spec in NO_EXEC_RELEASES:
        reason = f"{app_spec} has no exec subcommand, which @openai/codex-sdk runs"
        request.applymarker(pytest.mark.xfail(strict=True, raises=ScenarioError, reason=reason))
    prefix = _available(ts_sdk)
    client = f"{TS_SDK[0]} {TS_SDK[1]} (exec --experimental-json)"
    async with run.checked():
        model_url = await start_model(run.group, run.tmp, _command_turn(TS_PROMPT, "ts.txt", "done ts", run.workspace))
        write_config(run.home, model_url)
        argv = ["node", str(CLIENT_SCRIPTS / "ts_sdk_scenario.mjs"), str(prefix),
                str(launcher(app_build, run.tmp / "bin")), str(run.workspace), str(run.home), TS_PROMPT]
        verdict = await run_verdict(run.group, "ts-sdk", argv, clean_env(HOME=str(run.tmp)), run.tmp, SCRIPT_TIMEOUT)
        run.log.write_lines("ts-sdk.verdict.json", [json.dumps(verdict, indent=1)])
        problems = [f"{client}: {verdict[k]}" for k in ("error", "failed") if verdict.get(k)]
        events = verdict.get("events", [])
        if events[:1] != ["thread.started"] or events[-1:] != ["turn.completed"]:
            problems.append(f"{client}: events are not thread.started .. turn.completed: {', '.join(events) or 'none'}")
        if "command_execution" not in verdict.get("items", []):
            problems.append(f"{client}: no completed command_execution item (items: {verdict.get('items')})")
        if not verdict.get("threadId"):
            problems.append(f"{client}: the SDK's thread has no id (thread.started gave none)")
        if verdict.get("final") != "done ts":
            problems.append(f"{client}: final agent_message {verdict.get('final')!r}, expected 'done ts'")
        problems += _file_problems(client, run.workspace / "ts.txt")
        _fail_on(problems)


def _tui_binary() -> str:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not on PATH (.ci/run installs Debian's tmux when apt-get can)")
    build, reason = find_build(CODEX_REFERENCE)
    if build is None:
        pytest.skip(f"the Codex TUI ({CODEX_REFERENCE}) cannot be had: {reason}")
    return build.argv[0]


async def _start_ws_server(run: _Run, app_build: Build, model_url: str) -> str:
    write_config(run.home, model_url)
    port = free_port()
    argv = app_build.command("app-server", "--listen", f"ws://127.0.0.1:{port}")
    env = clean_env(CODEX_HOME=str(run.home), CODEX_API_KEY="compat-dummy-key", HOME=str(run.tmp))
    server = await run.group.start("app-server", argv, env=env, cwd=run.workspace)
    await wait_listening(port, lambda: server.proc.returncode, "tui: app-server")
    return f"ws://127.0.0.1:{port}"


async def _drive_tui(tui: Tui, codex: str, url: str, client_home: Path, cwd: Path, log: PairLog) -> None:
    env = {"CODEX_HOME": str(client_home), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""),
           "HOME": str(cwd)}
    tui.start([codex, "--remote", url], env, cwd)
    await tui.wait_until("the composer with its status line", lambda s: COMPOSER in s and STATUS_LINE in s)
    await tui.submit(TUI_PROMPT)
    screen = await tui.wait_for(TUI_ANSWER)
    log.write_lines("tui-screen-answer.txt", [screen])
    errors = [line.strip() for line in screen.splitlines() if ERROR_LINE.search(line)]
    if errors:
        raise ScenarioError(f"tui: the screen shows an error line: {errors[0][:160]}", screen)
    await tui.submit("/quit")
    status = await tui.exit_status()
    if status != "0":
        raise ScenarioError(f"tui: /quit exited with status {status}, expected 0", tui.screen())


async def test_tui_renders_the_answer_and_quits(app_build: Build, run: _Run) -> None:
    codex = _tui_binary()
    tui = Tui(shutil.which("tmux") or "tmux", f"compat-clients-{os.getpid()}-{id(run)}", run.tmp)
    answer = {"output": [{"type": "message", "text": TUI_ANSWER}]}
    async with run.checked():
        model_url = await start_model(run.group, run.tmp, [answer, answer])
        url = await _start_ws_server(run, app_build, model_url)
        client_home = run.tmp / "tui-home"
        write_config(client_home, model_url)
        try:
            await _drive_tui(tui, codex, url, client_home, run.workspace, run.log)
        finally:
            run.log.write_lines("tui-screen-last.txt", [tui.screen()])
            tui.close()
        prompts = [r for r in run.model_requests() if TUI_PROMPT in json.dumps(r.get("body"))]
        if not prompts:
            raise ScenarioError(f"tui: no model request carries the typed prompt {TUI_PROMPT!r}")


def test_the_clients_matrix_is_each_build_alone_and_only_current_is_quick() -> None:
    assert pairs(SCENARIO, {}) == [("current", "current")]
    explicit = {"PYCODEX_COMPAT_APPS": "current codex@0.169.0", "PYCODEX_COMPAT_EXECS": "codex@0.171.0"}
    assert pairs(SCENARIO, explicit) == [("current", "current"), (CODEX_REFERENCE, CODEX_REFERENCE)]
    assert pairs(SCENARIO, {"PYCODEX_SLOW": "1"}) == [(b, b) for b in full_builds()]
    assert not is_slow(SCENARIO, "current", "current")
    assert is_slow(SCENARIO, CODEX_REFERENCE, CODEX_REFERENCE)


def test_a_diverging_turn_is_named_by_client_and_field(tmp_path: Path) -> None:
    good = {"status": "completed", "final": "done run", "items": ["userMessage", "commandExecution"]}
    assert _turn_problems("sdk run", good, "done run") == []
    assert _turn_problems("sdk run", {**good, "final": None}, "done run") == [
        "sdk run: final response None, expected 'done run'"
    ]
    assert _turn_problems("sdk run", {**good, "items": ["agentMessage"]}, "done run")[0].startswith(
        "sdk run: the turn's items hold no commandExecution"
    )
    assert _turn_problems("sdk run", None, "done run") == ["sdk run: no result"]
    written = tmp_path / "run.txt"
    assert _file_problems("sdk run", written) == ["sdk run: the command did not run (run.txt was not written)"]
    written.write_text("hi")
    assert _file_problems("sdk run", written) == []
