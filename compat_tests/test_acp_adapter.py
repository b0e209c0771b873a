"""``acp``: the official codex-acp adapter (an Agent Client Protocol agent) drives each app-server build.

Pair = (app, app): one build alone. The adapter (``@agentclientprotocol/codex-acp``, pinned in
support/acp.py, installed into the compat cache) runs ``$CODEX_PATH app-server``; ``CODEX_PATH`` is a
wrapper script that runs the build and records each app-server's PID. This module is the ACP client
(newline-delimited JSON-RPC over the adapter's stdio, support/acp.py's :class:`AcpClient`):

1. adapter A: ``initialize``, ``session/new``, ``session/prompt``; the model asks for a command that
   needs approval, the adapter asks ``session/request_permission``, the client allows it once, the
   command runs (not before), the turn ends with ``end_turn``; then the adapter names the session from
   a turn of its own on an ephemeral thread (``outputSchema``) and stores the name (``thread/name/set``);
2. A stops (and its app-server with it); adapter B (a new app-server on the same CODEX_HOME):
   ``session/load`` must replay the first turn (user text, completed tool call, answer) and the stored
   title, then a second ``session/prompt`` whose model request carries the first turn's text, command
   output and answer.

Each adapter must have started exactly one app-server: the adapter restarts a crashed one by itself,
which would otherwise hide the crash. Artifacts: ``acp.jsonrpc.jsonl`` (client <-> adapter),
``app-server.jsonrpc.jsonl`` (adapter <-> app-server, from the adapter's log), ``NAME.app-server.stderr.log``,
``NAME.log`` (the adapter's whole log), ``model-requests.jsonl``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
from pathlib import Path
from typing import Any

import pytest

from compat_tests.support.acp import (
    ADAPTER_VERSION,
    AcpClient,
    install_adapter,
    read_adapter_log,
    started_pids,
    stop_app_servers,
    write_codex_wrapper,
)
from compat_tests.support.artifacts import PairLog
from compat_tests.support.builds import REPO_ROOT, RESOLVED_ENV, Build, BuildError, resolve_build
from compat_tests.support.processes import ProcessGroup, clean_env
from compat_tests.support.rpc import ScenarioError
from compat_tests.support.scenario import start_model, write_config
from compat_tests.support.storage import stderr_hint

pytestmark = pytest.mark.compat
SCENARIO = "acp"
CALL_ID = "acp-approval-call"
APPROVED = "acp-approved-command-ran"
#: Printed by the command; its literal text only ever travels as command output.
CANARY = "acp-canary-output-51c2"
FIRST_TEXT = "Write the approved file."
FIRST_ANSWER = "acp-first-answer"
SECOND_TEXT = "Say the second answer."
SECOND_ANSWER = "acp-second-answer"
#: After the first turn the adapter asks an ephemeral thread (``thread/start`` ephemeral, ``turn/start``
#: with an ``outputSchema``) for the session's title; its prompt contains this, and the model answers TITLE.
TITLE_PROMPT = "generate a very short title"
TITLE = "Compat approved file"
#: The adapter's preset with on-request approvals answered by the client (its default reviews them itself).
AGENT_MODE = "workspace-write"
#: Variables the adapter reads at startup: none may leak in from the calling environment.
_ADAPTER_VARS = ("MODEL_PROVIDER", "DEFAULT_AUTH_REQUEST", "INITIAL_AGENT_MODE", "APP_SERVER_LOGS")
#: build spec -> the observed cause: a strict xfail, so a change is noticed.
XFAIL: dict[str, str] = {
    # The adapter lists permission profiles before every thread/start; pycodex answers it since 0.2.0.
    "pycodex@0.1.0": "session/new fails: pycodex 0.1.0 has no permissionProfile/list, which codex-acp calls first",
}
CRASH_ON_RESUME = REPO_ROOT / "compat_tests" / "acp" / "crash_on_resume"
_INITIALIZE = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False},
    "clientInfo": {"name": "pycodex-compat", "version": "1"},
}


@pytest.fixture
def adapter() -> list[str]:
    """The adapter's argv; the pair skips with the reason when it cannot be installed (no node/npm/network)."""
    try:
        return install_adapter()
    except BuildError as exc:
        pytest.skip(f"codex-acp {ADAPTER_VERSION} cannot be had: {exc}")


def _script(workspace: Path) -> list[dict[str, Any]]:
    head, tail = CANARY[:8], CANARY[8:]
    arguments = {
        "cmd": f"printf '%s' {APPROVED} > approved.txt; printf '%s%s' '{head}' '{tail}'",
        "workdir": str(workspace),
        "sandbox_permissions": "require_escalated",
        "justification": "compat: write a file after approval",
    }
    call = {
        "type": "function_call",
        "call_id": CALL_ID,
        "name": "exec_command",
        "arguments": json.dumps(arguments),
    }
    return [
        {"output": [call]},
        {"output": [{"type": "message", "text": FIRST_ANSWER}]},
        {"when": TITLE_PROMPT, "output": [{"type": "message", "text": json.dumps({"title": TITLE})}]},
        {"when": SECOND_TEXT, "output": [{"type": "message", "text": SECOND_ANSWER}]},
    ]


class AcpRun:
    """The adapters of one pair: start each with its own wrapper, PID file and log; stop each fully."""

    def __init__(self, adapter: list[str], build: Build, group: ProcessGroup, tmp_path: Path) -> None:
        self.adapter, self.build, self.group, self.tmp_path = adapter, build, group, tmp_path
        self.home, self.workspace = tmp_path / "app-home", tmp_path / "workspace"
        self.clients: dict[str, AcpClient] = {}
        self.leftovers: dict[str, list[int]] = {}

    def pids(self, name: str) -> Path:
        """The file ``name``'s wrapper appends each app-server's PID to."""
        return self.tmp_path / f"{name}.pids"

    def log_file(self, name: str) -> Path:
        """Where adapter ``name`` logs (``APP_SERVER_LOGS``): its own events and the app-server's traffic."""
        return self.tmp_path / f"{name}-logs" / "app-server.log"

    async def start(self, name: str) -> AcpClient:
        wrapper = write_codex_wrapper(self.build, self.tmp_path / f"{name}-codex", self.pids(name))
        env = {k: v for k, v in clean_env().items() if k not in _ADAPTER_VARS}
        env |= {
            "CODEX_HOME": str(self.home),
            "CODEX_PATH": str(wrapper),
            "INITIAL_AGENT_MODE": AGENT_MODE,
            "APP_SERVER_LOGS": str(self.log_file(name).parent),
        }
        handle = await self.group.start(
            name, self.adapter, env=env, cwd=self.workspace, protocol_stdout=True, stdin=True
        )
        client = AcpClient(handle, AllowOnce(self.workspace))
        self.clients[name] = client
        return client

    async def stop(self, name: str) -> None:
        """Stop the adapter and every app-server it started (by PID); it must have started exactly one."""
        handle = self.clients[name].handle
        if handle.proc.stdin is not None:
            handle.proc.stdin.close()  # the adapter's cue to stop its app-server
        self.leftovers[name] = await stop_app_servers(self.pids(name))
        if handle.proc.returncode is None:
            # With its app-server gone the adapter has nothing left to do or write, yet it lingers ~2 s on
            # a timer of its own before it exits; twice per pair that would be most of the scenario's time.
            with contextlib.suppress(ProcessLookupError):
                handle.proc.send_signal(signal.SIGTERM)
        await handle.stop()
        pids = started_pids(self.pids(name))
        if len(pids) != 1:
            hint = stderr_hint(read_adapter_log(self.log_file(name)).stderr_lines)
            raise ScenarioError(
                f"{name} started {len(pids)} app-servers (a restart hides a crash)"
                + (f"; app-server stderr: {hint}" if hint else "")
            )

    def hint(self) -> str:
        """The last exception line any app-server printed (for a bare "Internal error" answer)."""
        for name in reversed(self.clients):
            hint = stderr_hint(read_adapter_log(self.log_file(name)).stderr_lines)
            if hint:
                return hint
        return ""

    def write_artifacts(self, log: PairLog) -> None:
        acp, traffic = [], []
        for name, client in self.clients.items():
            acp += client.transcript_lines(name)
            parsed = read_adapter_log(self.log_file(name))
            traffic += parsed.transcript_lines(name)
            log.write_lines(f"{name}.app-server.stderr.log", parsed.stderr_lines)
            if self.log_file(name).is_file():
                log.write_lines(f"{name}.log", self.log_file(name).read_text().splitlines())
        log.write_lines("acp.jsonrpc.jsonl", acp)
        log.write_lines("app-server.jsonrpc.jsonl", traffic)
        pids = {name: started_pids(self.pids(name)) for name in self.clients}
        log.write_lines("app-server-pids.json", [json.dumps({"started": pids, "killed": self.leftovers})])


class AllowOnce:
    """The client's permission policy: allow once; notes whether the command had already run when asked."""

    def __init__(self, workspace: Path) -> None:
        self.written = workspace / "approved.txt"
        self.ran_before_answer: list[bool] = []

    def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.ran_before_answer.append(self.written.exists())
        options = [o for o in params.get("options") or [] if isinstance(o, dict)]
        chosen = next((o.get("optionId") for o in options if o.get("kind") == "allow_once"), None)
        return {"outcome": "selected", "optionId": chosen} if chosen else {"outcome": "cancelled"}


def _expect(condition: bool, cause: str) -> None:
    if not condition:
        raise ScenarioError(cause)


def _tool_status(updates: list[dict[str, Any]], call_id: str) -> str | None:
    """The last status ``tool_call``/``tool_call_update`` updates gave tool call ``call_id``."""
    status = None
    for update in updates:
        if (
            update.get("sessionUpdate") in ("tool_call", "tool_call_update")
            and update.get("toolCallId") == call_id
        ):
            status = update.get("status", status)
    return status


def _texts(client: AcpClient, kind: str, since: int = 0) -> str:
    chunks = [u.get("update") or {} for u in client.updates[since:]]
    contents = [c.get("content") or {} for c in chunks if c.get("sessionUpdate") == kind]
    return "".join(str(c.get("text", "")) for c in contents if isinstance(c, dict))


async def _first_turn(client: AcpClient, workspace: Path) -> str:
    await client.call("initialize", _INITIALIZE)
    session = await client.call("session/new", {"cwd": str(workspace), "mcpServers": []})
    session_id = session.get("sessionId")
    _expect(isinstance(session_id, str) and bool(session_id), f"session/new gave no sessionId: {session}")
    assert isinstance(session_id, str)
    prompt = [{"type": "text", "text": FIRST_TEXT}]
    done = await client.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
    asked = client.permission_requests
    _expect(len(asked) == 1, f"the first turn asked session/request_permission {len(asked)} times, not once")
    tool = asked[0].get("toolCall") or {}
    _expect(tool.get("toolCallId") == CALL_ID, f"session/request_permission for {tool.get('toolCallId')!r}")
    kinds = [o.get("kind") for o in asked[0].get("options") or []]
    _expect("allow_once" in kinds, f"session/request_permission offered no allow_once option: {kinds}")
    policy = client.permission
    _expect(
        isinstance(policy, AllowOnce) and not any(policy.ran_before_answer),
        "the command ran before its approval was answered",
    )
    _expect(done.get("stopReason") == "end_turn", f"the first turn stopped with {done.get('stopReason')!r}")
    written = workspace / "approved.txt"
    _expect(written.is_file() and written.read_text() == APPROVED, "the approved command did not run")
    updates = [u.get("update") or {} for u in client.updates]
    status = _tool_status(updates, CALL_ID)
    _expect(status == "completed", f"tool call {CALL_ID} ended as {status!r}, not completed")
    _expect(
        FIRST_ANSWER in client.agent_text(), f"the first turn's answer {FIRST_ANSWER!r} never reached ACP"
    )
    # The title thread runs after the turn: waiting for it keeps the model's requests in a known order.
    await client.wait_for_update(
        f"session_info_update with the generated title {TITLE!r}",
        lambda u: u.get("sessionUpdate") == "session_info_update" and u.get("title") == TITLE,
    )
    return session_id


async def _resumed_turn(client: AcpClient, workspace: Path, session_id: str) -> None:
    await client.call("initialize", _INITIALIZE)
    await client.call("session/load", {"sessionId": session_id, "cwd": str(workspace), "mcpServers": []})
    replay = [u.get("update") or {} for u in client.updates]
    _expect(FIRST_TEXT in _texts(client, "user_message_chunk"), "session/load did not replay the user text")
    status = _tool_status(replay, CALL_ID)
    _expect(status == "completed", f"session/load replayed tool call {CALL_ID} as {status!r}, not completed")
    _expect(FIRST_ANSWER in _texts(client, "agent_message_chunk"), "session/load did not replay the answer")
    titles = [
        u.get("title") for u in replay if u.get("sessionUpdate") == "session_info_update" and "title" in u
    ]
    _expect(
        TITLE in titles,
        f"session/load gave the session the titles {titles}, not the one the first app-server stored "
        f"with thread/name/set ({TITLE!r})",
    )
    since = len(client.updates)
    prompt = [{"type": "text", "text": SECOND_TEXT}]
    done = await client.call("session/prompt", {"sessionId": session_id, "prompt": prompt})
    _expect(done.get("stopReason") == "end_turn", f"the resumed turn stopped with {done.get('stopReason')!r}")
    _expect(
        SECOND_ANSWER in _texts(client, "agent_message_chunk", since), "the resumed turn's answer is missing"
    )
    _expect(not client.permission_requests, "the resumed turn asked for a permission")


def _check_model_requests(model_log: Path) -> None:
    """The title request asks for the adapter's output schema; the resumed turn's request carries the
    first turn: its text, command output and answer."""
    requests = [json.loads(line) for line in model_log.read_text().splitlines()] if model_log.exists() else []
    titles = [r for r in requests if TITLE_PROMPT in json.dumps(r.get("body"))]
    _expect(len(titles) == 1, f"{len(titles)} model requests ask for the session title, not 1")
    form = ((titles[0]["body"].get("text") or {}).get("format")) or {}
    schema = form.get("schema") or {}
    _expect(
        form.get("type") == "json_schema" and "title" in (schema.get("properties") or {}),
        f"the title request's text.format is not the turn's outputSchema: {json.dumps(form)[:200]}",
    )
    resumed = [r for r in requests if SECOND_TEXT in json.dumps(r.get("body"))]
    _expect(len(resumed) == 1, f"{len(resumed)} model requests carry the resumed turn's text, not 1")
    items = resumed[0]["body"].get("input") or []
    outputs = [i for i in items if i.get("type") == "function_call_output" and i.get("call_id") == CALL_ID]
    _expect(
        any(CANARY in json.dumps(i) for i in outputs),
        "the resumed turn's model request lacks the command output",
    )
    for role, text in (("user", FIRST_TEXT), ("assistant", FIRST_ANSWER)):
        said = [i for i in items if i.get("type") == "message" and i.get("role") == role]
        _expect(
            any(text in json.dumps(i) for i in said),
            f"the resumed turn's model request lacks the {role} {text!r}",
        )


async def _run_scenario(
    adapter: list[str], build: Build, group: ProcessGroup, tmp_path: Path, log: PairLog
) -> None:
    """Both adapters' turns and every check; ScenarioError (cause first) on the first failure."""
    run = AcpRun(adapter, build, group, tmp_path)
    run.workspace.mkdir()
    try:
        model_url = await start_model(group, tmp_path, _script(run.workspace))
        write_config(run.home, model_url, approval_policy="on-request")
        session_id = await _first_turn(await run.start("codex-acp-first"), run.workspace)
        await run.stop("codex-acp-first")
        await _resumed_turn(await run.start("codex-acp-resumed"), run.workspace, session_id)
        await run.stop("codex-acp-resumed")
        _check_model_requests(tmp_path / "model-requests.jsonl")
    except ScenarioError as exc:
        await group.stop_all()
        hint = run.hint()
        cause = f"{exc.cause} (app-server stderr: {hint})" if hint and hint not in exc.cause else exc.cause
        raise ScenarioError(cause, f"{exc}\n{group.diagnostics()}\nlogs: {log.folder}") from exc
    finally:
        await group.stop_all()
        for name in run.clients:
            run.leftovers[name] = run.leftovers.get(name, []) + await stop_app_servers(run.pids(name))
        run.write_artifacts(log)
        log.processes(group)
        log.model_requests(tmp_path / "model-requests.jsonl")


async def test_codex_acp_drives_a_turn_an_approval_and_a_resume(
    request: pytest.FixtureRequest,
    app_spec: str,
    app_build: Build,
    adapter: list[str],
    process_group: ProcessGroup,
    tmp_path: Path,
    pair_log: PairLog,
) -> None:
    if app_spec in XFAIL:
        request.applymarker(pytest.mark.xfail(strict=True, reason=XFAIL[app_spec]))
    await _run_scenario(adapter, app_build, process_group, tmp_path, pair_log)


async def test_an_app_server_that_dies_on_resume_is_the_cause(
    adapter: list[str], process_group: ProcessGroup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scenario fails on a broken build, naming the method, the exit and the app-server's last words."""
    if os.environ.get(RESOLVED_ENV):
        pytest.skip("a self-test of the scenario: `pycodex compat` runs only the pairs")
    monkeypatch.setenv("PYCODEX_BROKEN_WRAPS", shlex.join(resolve_build("current").command()))
    broken = Build("path:crash_on_resume", (str(CRASH_ON_RESUME),))
    with pytest.raises(ScenarioError) as failed:
        await _run_scenario(adapter, broken, process_group, tmp_path, PairLog(tmp_path / "logs"))
    cause = failed.value.cause
    assert cause.startswith("session/load failed: "), cause
    assert "exited with code 3" in cause and "crash_on_resume: exiting on thread/resume" in cause, cause
    assert "\n" not in cause, cause
    # The first adapter's half ran through: the failure is the resume's, not an earlier one.
    assert (tmp_path / "workspace" / "approved.txt").read_text() == APPROVED


def test_the_adapter_log_splits_into_app_server_traffic_and_stderr(tmp_path: Path) -> None:
    """Chunks of one direction join into lines whatever the pipe reads were; other entries are skipped."""
    log = tmp_path / "app-server.log"
    log.write_text(
        '2026-12-03 07:27:16,488 [IN] {"id":0,"method":"initialize"}\n {"pid":1}\n'
        '2026-12-03 07:27:16,500 [OUT] {"id":0,"res {"pid":1}\n'
        "2026-12-03 07:27:16,501 [ERR] Traceback (most recent call last):\nKeyError: 'x'\n {\"pid\":1}\n"
        '2026-12-03 07:27:16,502 [OUT] ult":{}}\n{"method":"warning"}\n {"pid":1}\n'
        '2026-12-03 07:27:16,503 [APP-SERVER SHUTDOWN]{"id":9} {"pid":1,"generation":1}\n'
        '2026-12-03 07:27:16,504 [ERR] half a line {"pid":1}\n'
    )
    parsed = read_adapter_log(log)
    assert [(d, m) for d, _, m in parsed.traffic] == [
        (">", {"id": 0, "method": "initialize"}),
        ("<", {"id": 0, "result": {}}),
        ("<", {"method": "warning"}),
    ]
    assert parsed.stderr_lines == ["Traceback (most recent call last):", "KeyError: 'x'", "half a line"]
    assert stderr_hint(parsed.stderr_lines) == "KeyError: 'x'"
