"""Seed 003's version-skew scenario, run with any app-server build against any exec-server build.

Processes (all real, all on 127.0.0.1): the current build's ``relay --capture FILE`` (registry and
rendezvous), the fake Responses server (``fixtures/fake_responses_server.py``), the executor build as
``exec-server --remote REGISTRY --environment-id ID`` holding the marker variable, and the app-server
build reaching that executor through the ``CODEX_EXEC_SERVER_NOISE_*`` variables. One turn: the model
calls ``exec_command`` to write ``$MARKER`` into ``version-skew-output.txt``, then answers "done".
:func:`run_version_skew` returns a :class:`SkewOutcome` with everything the assertions need.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compat_tests.support.builds import REPO_ROOT, Build
from compat_tests.support.processes import ProcessGroup, ProcessHandle, ProcessResult, clean_env

__all__ = [
    "CANARY",
    "ENVIRONMENT_ID",
    "MARKER",
    "MARKER_VAR",
    "SELECTED_SKILL_BODY",
    "SKILL_BODY",
    "SkewOutcome",
    "run_version_skew",
]

ENVIRONMENT_ID = "env-noise-relay-test"
TOKEN = "registry-token"
MARKER_VAR = "CODEX_EXECUTOR_VERSION_SKEW_MARKER"
MARKER = "executor-version-skew-ok"
#: Printed by the command (not written to the file): it only ever travels as process output.
CANARY = "relay-canary-output-7f3a"
SKILL_BODY = "Repository instructions loaded across executor versions."
SELECTED_SKILL_BODY = "Selected instructions loaded across executor versions."
#: The harness's name for the environment the Noise variables configure.
REMOTE_ENVIRONMENT = "remote"
STEP = 30.0  # bound of every single wait
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
        "call_id": "noise-version-skew-command",
        "name": "exec_command",
        "arguments": json.dumps(arguments),
    }
    return [
        {"id": "response-1", "output": [call]},
        {"id": "response-2", "output": [{"type": "message", "id": "message-1", "text": "done"}]},
    ]


def _write_config(home: Path, model_url: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'model = "mock-model"\napproval_policy = "never"\nsandbox_mode = "workspace-write"\n'
        'model_provider = "mock_provider"\n\n[features]\nexecutor_capability_discovery = false\n'
        "executor_capability_discovery_v2 = false\n\n[model_providers.mock_provider]\n"
        f'name = "Mock provider"\nbase_url = "{model_url}/v1"\nwire_api = "responses"\n'
        "request_max_retries = 0\nstream_max_retries = 0\n"
    )


async def _wait_for_capture_event(capture: Path, event: str, executor: ProcessHandle) -> None:
    for _ in range(int(STEP / POLL)):
        if capture.exists() and f'"event":"{event}"' in capture.read_text(encoding="utf-8"):
            return
        if executor.proc.returncode is not None:
            break
        await asyncio.sleep(POLL)
    raise AssertionError(f"the executor never reached the rendezvous ({event})")


class _AppServerRpc:
    """Line-delimited JSON-RPC over the app-server's stdio; notifications are kept in order."""

    def __init__(self, handle: ProcessHandle) -> None:
        self.handle = handle
        self.notifications: list[dict[str, Any]] = []

    async def call(self, request_id: int, method: str, params: dict[str, Any]) -> Any:
        await self.handle.write_line(json.dumps({"id": request_id, "method": method, "params": params}))
        for _ in range(100_000):
            message = json.loads(await self.handle.readline(STEP))
            if message.get("id") == request_id and "method" not in message:
                assert "error" not in message, f"{method} failed: {message['error']}"
                return message["result"]
            self.notifications.append(message)
        raise AssertionError(f"no answer to {method}")

    async def notify(self, method: str) -> None:
        await self.handle.write_line(json.dumps({"method": method}))

    async def wait_for(self, method: str) -> dict[str, Any]:
        for _ in range(100_000):
            for message in self.notifications:
                if message.get("method") == method:
                    return message
            self.notifications.append(json.loads(await self.handle.readline(STEP)))
        raise AssertionError(f"no {method} notification")


async def run_version_skew(
    group: ProcessGroup, relay_build: Build, app: Build, executor: Build, tmp_path: Path
) -> SkewOutcome:
    """Run the seed's turn with processes in ``group`` (stopped here once the turn is over).

    Raises AssertionError, with every process's stderr tail, if the turn cannot finish or a
    process dies during it.
    """
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    skill_path, selected_root = _write_skills(workspace)
    capture = tmp_path / "relay-frames.jsonl"
    model_log = tmp_path / "model-requests.jsonl"
    (tmp_path / "model-script.json").write_text(json.dumps(_model_script(workspace)))
    (tmp_path / "executor-home").mkdir()
    try:
        notifications = await _drive(
            group, relay_build, app, executor, tmp_path, workspace, skill_path, selected_root
        )
        died = group.exited()
        assert not died, f"{died} exited during the turn"
    except (AssertionError, TimeoutError) as exc:
        await group.stop_all()
        raise AssertionError(f"{exc!r}\n{group.diagnostics()}") from exc
    await group.stop_all()
    requests = [json.loads(line) for line in model_log.read_text().splitlines()] if model_log.exists() else []
    return SkewOutcome(workspace, capture, requests, notifications, group.results)


async def _drive(
    group: ProcessGroup,
    relay_build: Build,
    app: Build,
    executor: Build,
    tmp_path: Path,
    workspace: Path,
    skill_path: Path,
    selected_root: Path,
) -> list[dict[str, Any]]:
    capture = tmp_path / "relay-frames.jsonl"
    relay = await group.start(
        "relay",
        relay_build.command("relay", "--capture", str(capture)),
        env=clean_env(PYCODEX_RELAY_TOKEN=TOKEN),
        cwd=tmp_path,
        protocol_stdout=True,
    )
    registry_url = await relay.readline(STEP)
    assert registry_url.startswith("http://127.0.0.1:"), registry_url
    model_argv = [sys.executable, str(FAKE_MODEL), str(tmp_path / "model-script.json")]
    model = await group.start(
        "fake-model",
        [*model_argv, "--log", str(tmp_path / "model-requests.jsonl")],
        env=clean_env(),
        cwd=tmp_path,
        protocol_stdout=True,
        stdin=True,
    )
    port = int(await model.readline(STEP))
    executor_home = tmp_path / "executor-home"
    exec_argv = executor.command("exec-server", "--remote", registry_url, "--environment-id", ENVIRONMENT_ID)
    exec_env = clean_env(CODEX_HOME=str(executor_home), CODEX_API_KEY=TOKEN, **{MARKER_VAR: MARKER})
    executor_proc = await group.start("executor", exec_argv, env=exec_env, cwd=executor_home)
    await _wait_for_capture_event(capture, "environment_connected", executor_proc)

    app_home = tmp_path / "app-home"
    _write_config(app_home, f"http://127.0.0.1:{port}")
    app_env = clean_env(
        CODEX_HOME=str(app_home),
        CODEX_API_KEY=TOKEN,
        CODEX_APP_SERVER_MANAGED_CONFIG_PATH=str(app_home / "managed_config.toml"),
        CODEX_EXEC_SERVER_NOISE_REGISTRY_URL=registry_url,
        CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID=ENVIRONMENT_ID,
        CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN=TOKEN,
    )
    app_proc = await group.start(
        "app-server", app.command("app-server"), env=app_env, cwd=app_home, protocol_stdout=True, stdin=True
    )
    rpc = _AppServerRpc(app_proc)
    client_info = {"name": "noise-version-skew", "version": "0.1.0"}
    await rpc.call(1, "initialize", {"clientInfo": client_info, "capabilities": {"experimentalApi": True}})
    await rpc.notify("initialized")
    root = {
        "id": "version-skew-selected",
        "location": {"type": "environment", "environmentId": REMOTE_ENVIRONMENT, "path": str(selected_root)},
    }
    thread = await rpc.call(2, "thread/start", {"cwd": str(workspace), "selectedCapabilityRoots": [root]})
    turn_input = [
        {
            "type": "text",
            "text": "Use $selected-version-skew and run the Noise compatibility command.",
            "textElements": [],
        },
        {"type": "skill", "name": "version-skew", "path": str(skill_path)},
    ]
    await rpc.call(3, "turn/start", {"threadId": thread["thread"]["id"], "input": turn_input})
    await rpc.wait_for("turn/completed")
    return rpc.notifications
