"""The recorded session of the trace tests: a turn with an approval whose command runs on an executor reached
through the relay, then a plain second turn, by a real ``pycodex app-server --trace`` subprocess against the
fake Responses server."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.appserver_process import write_codex_config
from tests.support.fake_model import exec_call, message
from tests.support.remote import (
    ENV_ID,
    ROOT,
    STEP,
    TOKEN,
    AppServerLines,
    RunningRelay,
    codex_env,
    process,
    running_executor,
    running_relay,
)

__all__ = ["API_KEY", "Recorded", "recorded_session", "remote_env"]

#: Canaries: they reach the server (environment, headers) and must never reach the trace.
API_KEY = "sk-trace-canary-api-key-0123456789"
OUTPUT = "approved-and-ran"


@dataclass(frozen=True)
class Recorded:
    trace: Path
    workspace: Path
    relay: RunningRelay
    env: dict[str, str]  # what the recorded server ran with (a replay reuses its executor route)


def remote_env(relay: RunningRelay, home: Path) -> dict[str, str]:
    return codex_env(home) | {
        "CODEX_API_KEY": API_KEY,
        "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": relay.registry_url,
        "CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID": ENV_ID,
        "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN": TOKEN,
    }


class _Client(AppServerLines):
    async def respond(self, request_id: Any, result: Any) -> None:
        self.proc.stdin.write(json.dumps({"id": request_id, "result": result}).encode() + b"\n")
        await self.proc.stdin.drain()

    async def server_request(self, method: str) -> dict[str, Any]:
        for _ in range(10_000):
            found = [n for n in self.notifications if n.get("method") == method and "id" in n]
            if found:
                return found[0]
            self.notifications.append(await self._next())
        raise AssertionError(f"no {method}")


@asynccontextmanager
async def recorded_session(tmp_path: Path, *, via_env: bool = False) -> AsyncIterator[Recorded]:
    """Record the session into ``tmp_path/session.trace``; the relay and executor stay up for the block."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    trace = tmp_path / "session.trace"
    script = tmp_path / "model.json"
    call = exec_call("call_approve", f"printf {OUTPUT}", sandbox_permissions="require_escalated",
                     justification="needs approval", workdir=str(workspace))
    script.write_text(json.dumps([{"output": [call]}, {"output": [message("all done")]},
                                  {"output": [message("second turn", deltas=["second ", "turn"])]}]))
    model_argv = [sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script)]
    async with (
        running_relay() as relay,
        running_executor(relay),
        process(model_argv, codex_env(tmp_path), tmp_path, pipes=True) as model,
    ):
        port = int(await asyncio.wait_for(model.stdout.readline(), STEP))
        home = tmp_path / "app_home"
        config = write_codex_config(home, base_url=f"http://127.0.0.1:{port}/v1", approval_policy="on-request")
        with config.open("a") as toml:  # the provider table is last: the key goes out as a bearer header
            toml.write('env_key = "CODEX_API_KEY"\n')
        env = remote_env(relay, home)
        argv = [sys.executable, "-m", "pycodex", "app-server"]
        if via_env:
            env["PYCODEX_TRACE"] = str(trace)
        else:
            argv += ["--trace", str(trace)]
        async with process(argv, env, tmp_path, pipes=True) as app:
            rpc = _Client(app)
            await rpc.call(1, "initialize", {"clientInfo": {"name": "trace-test", "version": "0"}})
            await rpc.notify("initialized")
            thread = await rpc.call(2, "thread/start", {"cwd": str(workspace)})
            turn = {"threadId": thread["thread"]["id"], "input": [{"type": "text", "text": "run it"}]}
            await rpc.call(3, "turn/start", turn)
            approval = await rpc.server_request("item/commandExecution/requestApproval")
            await rpc.respond(approval["id"], {"decision": "accept"})
            await rpc.wait_for_notification("turn/completed")
            rpc.notifications.clear()
            await rpc.call(4, "turn/start", turn | {"input": [{"type": "text", "text": "again"}]})
            await rpc.wait_for_notification("turn/completed")
            app.stdin.close()
            await asyncio.wait_for(app.wait(), STEP)
        yield Recorded(trace, workspace, relay, env)
