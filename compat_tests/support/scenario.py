"""Seed 003's exec turn, run with any app-server build against any exec-server build, over either transport.

Processes (all real, all on 127.0.0.1): the fake Responses server (``fixtures/fake_responses_server.py``),
the executor build, and the app-server build. ``noise``: the current build's ``relay --capture FILE``
(registry and rendezvous), the executor as ``exec-server --remote REGISTRY --environment-id ID`` and the
app-server reaching it through the ``CODEX_EXEC_SERVER_NOISE_*`` variables. ``websocket``: the executor
as ``exec-server --listen ws://127.0.0.1:0`` and the app-server with ``CODEX_EXEC_SERVER_URL`` pointing
at a tap (support/ws_tap.py) that forwards to it and keeps the transcript. One turn: the model calls
``exec_command`` to write ``$MARKER`` (only the executor's environment holds it) into
``version-skew-output.txt`` and print a canary, then answers "done".
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat_tests.support.artifacts import PairLog
from compat_tests.support.builds import REPO_ROOT, Build, Pairing
from compat_tests.support.causes import Expected
from compat_tests.support.processes import ProcessGroup, ProcessHandle, ProcessResult, clean_env
from compat_tests.support.rpc import STEP, AppServerRpc, ScenarioError
from compat_tests.support.ws_tap import WsTap

__all__ = [
    "CANARY",
    "ENVIRONMENT_ID",
    "MARKER",
    "MARKER_VAR",
    "SELECTED_SKILL_BODY",
    "SKILL_BODY",
    "SkewOutcome",
    "run_version_skew",
    "start_model",
    "write_config",
]

ENVIRONMENT_ID = "env-noise-relay-test"
TOKEN = "registry-token"
MARKER_VAR = "CODEX_EXECUTOR_VERSION_SKEW_MARKER"
MARKER = "executor-version-skew-ok"
#: Printed by the command (not written to the file): it only ever travels as process output.
CANARY = "relay-canary-output-7f3a"
SKILL_BODY = "Repository instructions loaded across executor versions."
SELECTED_SKILL_BODY = "Selected instructions loaded across executor versions."
#: The environment id both transports give the executor on the app-server side.
REMOTE_ENVIRONMENT = "remote"
CALL_ID = "noise-version-skew-command"
#: What the turn's one command must do: exit 0 and print the canary (support/causes.py judges it).
EXPECTED = Expected(call_id=CALL_ID, command_marker=MARKER_VAR, exit_code=0, output=CANARY)
POLL = 0.05
FAKE_MODEL = REPO_ROOT / "fixtures" / "fake_responses_server.py"


@dataclass
class SkewOutcome:
    workspace: Path
    capture: Path
    model_requests: list[dict[str, Any]]
    notifications: list[dict[str, Any]]
    results: dict[str, ProcessResult]


def _write_skills(workspace: Path) -> tuple[Path, Path]:
    """The workspace skill and the selected root; returns (workspace SKILL.md, selected root)."""
    skill_dir = workspace / ".agents" / "skills" / "version-skew"
    skill_dir.mkdir(parents=True)
    skill = skill_dir / "SKILL.md"
    skill.write_text(
        f"---\nname: version-skew\ndescription: Check executor compatibility.\n---\n{SKILL_BODY}\n"
    )
    selected_root = workspace / "selected-skills"
    selected_dir = selected_root / "selected-version-skew"
    selected_dir.mkdir(parents=True)
    (selected_dir / "SKILL.md").write_text(
        "---\nname: selected-version-skew\ndescription: Check selected skill compatibility.\n---\n"
        f"{SELECTED_SKILL_BODY}\n"
    )
    return skill, selected_root


def _model_script(workspace: Path) -> list[dict[str, Any]]:
    # The canary's literal text appears only in the output: the command builds it from two halves.
    head, tail = CANARY[:10], CANARY[10:]
    command = f"printf '%s' \"${MARKER_VAR}\" > version-skew-output.txt; printf '%s%s' '{head}' '{tail}'"
    arguments = {"cmd": command, "workdir": str(workspace), "yield_time_ms": 5_000}
    call = {
        "type": "function_call",
        "call_id": CALL_ID,
        "name": "exec_command",
        "arguments": json.dumps(arguments),
    }
    return [
        {"id": "response-1", "output": [call]},
        {"id": "response-2", "output": [{"type": "message", "id": "message-1", "text": "done"}]},
    ]


def write_config(
    home: Path,
    model_url: str,
    approval_policy: str = "never",
    *,
    sandbox_mode: str = "workspace-write",
    request_retries: int = 0,
) -> None:
    """The scenario's config.toml: the fake model at ``model_url`` as the provider, no stream retries."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'model = "mock-model"\napproval_policy = "{approval_policy}"\nsandbox_mode = "{sandbox_mode}"\n'
        'model_provider = "mock_provider"\n\n[features]\nexecutor_capability_discovery = false\n'
        "executor_capability_discovery_v2 = false\n\n[model_providers.mock_provider]\n"
        f'name = "Mock provider"\nbase_url = "{model_url}/v1"\nwire_api = "responses"\n'
        f"request_max_retries = {request_retries}\nstream_max_retries = 0\n"
    )


async def start_model(group: ProcessGroup, tmp_path: Path, script: list[dict[str, Any]]) -> str:
    """Start the fake Responses server on ``script``; its base URL (requests go to model-requests.jsonl)."""
    (tmp_path / "model-script.json").write_text(json.dumps(script))
    argv = [sys.executable, str(FAKE_MODEL), str(tmp_path / "model-script.json")]
    model = await group.start(
        "fake-model",
        [*argv, "--log", str(tmp_path / "model-requests.jsonl")],
        env=clean_env(),
        cwd=tmp_path,
        protocol_stdout=True,
        stdin=True,
    )
    return f"http://127.0.0.1:{int(await model.readline(STEP))}"


async def _wait_for_registration(capture: Path, executor: ProcessHandle) -> None:
    for _ in range(int(STEP / POLL)):
        if capture.exists() and '"event":"environment_connected"' in capture.read_text(encoding="utf-8"):
            return
        if executor.proc.returncode is not None:
            raise ScenarioError(f"exec-server exited rc={executor.proc.returncode} before registering")
        await asyncio.sleep(POLL)
    raise ScenarioError(f"timed out after {STEP:.0f}s awaiting the exec-server's registration with the relay")


async def _first_line(handle: ProcessHandle, what: str) -> str:
    try:
        return await handle.readline(STEP)
    except TimeoutError:
        raise ScenarioError(f"timed out after {STEP:.0f}s awaiting the {handle.name}'s {what}") from None
    except AssertionError:
        await asyncio.wait_for(handle.proc.wait(), STEP)
        raise ScenarioError(
            f"{handle.name} exited rc={handle.proc.returncode} before printing its {what}"
        ) from None


async def run_version_skew(
    group: ProcessGroup, pairing: Pairing, tmp_path: Path, log: PairLog, transport: str = "noise"
) -> SkewOutcome:
    """Run the seed's turn with processes in ``group`` (stopped here once the turn is over).

    Raises :class:`ScenarioError` (cause first, then every process's stderr tail) if the turn cannot
    finish or a process dies during it. Artifacts land in ``log`` either way.
    """
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    capture = tmp_path / "relay-frames.jsonl"
    model_log = tmp_path / "model-requests.jsonl"
    rpc: list[AppServerRpc] = []
    tap = WsTap()
    log.expect(EXPECTED)
    try:
        await _drive(group, pairing, tmp_path, workspace, transport, rpc, tap)
        died = group.exited()
        if died:
            raise ScenarioError(f"{', '.join(died)} exited during the turn")
    except ScenarioError as exc:
        await group.stop_all()
        raise ScenarioError(exc.cause, f"{exc}\n{group.diagnostics()}\nlogs: {log.folder}") from exc
    finally:
        await group.stop_all()
        await tap.close()
        log.processes(group)
        log.model_requests(model_log)
        log.relay(capture)
        if rpc:
            log.write_lines("app-server.jsonrpc.jsonl", rpc[0].transcript_lines())
        if transport == "websocket":
            log.write_lines("exec-server.jsonrpc.jsonl", tap.transcript_lines())
    requests = [json.loads(line) for line in model_log.read_text().splitlines()] if model_log.exists() else []
    return SkewOutcome(workspace, capture, requests, rpc[0].messages, group.results)


async def _start_executor(
    group: ProcessGroup, pairing: Pairing, tmp_path: Path, transport: str, tap: WsTap
) -> dict[str, str]:
    """Start the relay (Noise) or tap (WebSocket) and the executor; the app-server's transport variables."""
    executor_home = tmp_path / "executor-home"
    executor_home.mkdir()
    exec_env = clean_env(CODEX_HOME=str(executor_home), CODEX_API_KEY=TOKEN, **{MARKER_VAR: MARKER})
    if transport == "websocket":
        argv = pairing.executor.command("exec-server", "--listen", "ws://127.0.0.1:0")
        executor = await group.start("executor", argv, env=exec_env, cwd=executor_home, protocol_stdout=True)
        url = await _first_line(executor, "listen URL")
        if not url.startswith("ws://"):
            raise ScenarioError(f"exec-server printed {url[:80]!r} where its ws:// URL belongs")
        return {"CODEX_EXEC_SERVER_URL": await tap.start(url)}
    capture = tmp_path / "relay-frames.jsonl"
    relay = await group.start(
        "relay",
        pairing.relay.command("relay", "--capture", str(capture)),
        env=clean_env(PYCODEX_RELAY_TOKEN=TOKEN),
        cwd=tmp_path,
        protocol_stdout=True,
    )
    registry_url = await _first_line(relay, "registry URL")
    argv = pairing.executor.command(
        "exec-server", "--remote", registry_url, "--environment-id", ENVIRONMENT_ID
    )
    executor = await group.start("executor", argv, env=exec_env, cwd=executor_home)
    await _wait_for_registration(capture, executor)
    return {
        "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": registry_url,
        "CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID": ENVIRONMENT_ID,
        "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN": TOKEN,
    }


async def start_app_server(group: ProcessGroup, app: Build, home: Path, **env: str) -> AppServerRpc:
    """Start ``app`` as a stdio app-server and initialize it."""
    app_env = clean_env(
        CODEX_HOME=str(home),
        CODEX_API_KEY=TOKEN,
        CODEX_APP_SERVER_MANAGED_CONFIG_PATH=str(home / "managed_config.toml"),
        **env,
    )
    proc = await group.start(
        "app-server", app.command("app-server"), env=app_env, cwd=home, protocol_stdout=True, stdin=True
    )
    rpc = AppServerRpc(proc)
    client_info = {"name": "pycodex-compat", "version": "0.1.0"}
    await rpc.call(1, "initialize", {"clientInfo": client_info, "capabilities": {"experimentalApi": True}})
    await rpc.notify("initialized")
    return rpc


async def _drive(
    group: ProcessGroup,
    pairing: Pairing,
    tmp_path: Path,
    workspace: Path,
    transport: str,
    out: list[AppServerRpc],
    tap: WsTap,
) -> None:
    skill_path, selected_root = _write_skills(workspace)
    model_url = await start_model(group, tmp_path, _model_script(workspace))
    transport_env = await _start_executor(group, pairing, tmp_path, transport, tap)
    app_home = tmp_path / "app-home"
    write_config(app_home, model_url)
    rpc = await start_app_server(group, pairing.app, app_home, **transport_env)
    out.append(rpc)
    root = {
        "id": "version-skew-selected",
        "location": {"type": "environment", "environmentId": REMOTE_ENVIRONMENT, "path": str(selected_root)},
    }
    thread = await rpc.call(2, "thread/start", {"cwd": str(workspace), "selectedCapabilityRoots": [root]})
    turn_input = [
        {
            "type": "text",
            "text": "Use $selected-version-skew and run the compatibility command.",
            "textElements": [],
        },
        {"type": "skill", "name": "version-skew", "path": str(skill_path)},
    ]
    await rpc.call(3, "turn/start", {"threadId": thread["thread"]["id"], "input": turn_input})
    await rpc.wait_for("turn/completed")
