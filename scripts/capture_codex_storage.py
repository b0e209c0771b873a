"""Record what an app-server writes under CODEX_HOME, scenario by scenario: rollouts and SQLite state.

Each scenario gets a fresh CODEX_HOME and work folder, a fixtures/fake_responses_server.py model with its own
script, and one app-server over stdio (Codex's binary, or pycodex). It drives the scenario's requests, closes
stdin, waits for the server to exit, and keeps every rollout (path and lines), each SQLite file's rows, and
the thread/read answers; all of it through scripts/storage_normalize.py so reruns give the same text.
Writes tests/data/storage/<target>/<scenario>.json and <target>/sqlite_schema.json.

    python scripts/capture_codex_storage.py codex PATH/TO/codex   # -> tests/data/storage/codex_0169/
    python scripts/capture_codex_storage.py pycodex               # -> tests/data/storage/pycodex_current/
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.manifest import record_in_manifest
from scripts.storage_normalize import Normalizer, sqlite_files, sqlite_rows, sqlite_schema

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "storage"
OUT_DIRS = {"codex": DATA / "codex_0169", "pycodex": DATA / "pycodex_current"}
PYTHON = "/work/main/.venv/bin/python"
WAIT_S = 60.0  # every read from the server is bounded by this

PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+first line\n*** End Patch\n"
ESCALATED = {"cmd": "echo approved", "sandbox_permissions": "require_escalated", "justification": "needs it"}


class Client:
    """A JSON-RPC client on a server's stdio; server requests (approvals) are answered "accept"."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        #: The answer to a server request (an approval, a tool call): "accept" unless a scenario says otherwise.
        self.reply: Callable[[dict[str, Any]], dict[str, Any]] = lambda _request: {"decision": "accept"}
        self.next_id = 0
        self.kept: list[dict[str, Any]] = []  # the responses worth recording, with their request

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        await self.proc.stdin.drain()

    async def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), WAIT_S)
        if not line:
            raise RuntimeError("server closed stdout")
        message: dict[str, Any] = json.loads(line)
        if "method" in message and "id" in message:
            reply = self.reply(message)
            self.kept.append({"server_request": message["method"], "reply": reply})
            await self._send({"jsonrpc": "2.0", "id": message["id"], "result": reply})
        return message

    async def request(self, method: str, params: dict[str, Any], *, keep: bool = False) -> dict[str, Any]:
        """Send a request and return its result (raising on an error answer, which is kept first)."""
        self.next_id += 1
        await self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = await self._read()
            if message.get("id") == self.next_id and "method" not in message:
                if keep or "error" in message:
                    self.kept.append({"method": method, "params": params, "answer": message})
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message["result"]
                return result

    async def notify(self, method: str) -> None:
        """Send a notification (no answer)."""
        await self._send({"jsonrpc": "2.0", "method": method})

    async def until(self, method: str) -> dict[str, Any]:
        """Read until a notification named ``method`` arrives; return it."""
        while True:
            message = await self._read()
            if message.get("method") == method and "id" not in message:
                return message


@dataclass
class Scenario:
    """One recorded case: the model's responses, the config lines, and the steps driven on the thread."""

    name: str
    responses: list[Any]
    run: Callable[[Client, str], Awaitable[None]]
    config: list[str] = field(default_factory=list)


async def _turn(client: Client, thread_id: str, text: str) -> None:
    await client.request("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": text}]})
    await client.until("turn/completed")


async def _read_thread(client: Client, thread_id: str) -> None:
    await client.request("thread/read", {"threadId": thread_id, "includeTurns": True}, keep=True)


async def _plain(client: Client, thread_id: str) -> None:
    await _turn(client, thread_id, "say hello")
    await _read_thread(client, thread_id)


async def _compact(client: Client, thread_id: str) -> None:
    await _turn(client, thread_id, "say hello")
    await client.request("thread/compact/start", {"threadId": thread_id}, keep=True)
    await client.until("turn/completed")
    await _read_thread(client, thread_id)


async def _fork(client: Client, thread_id: str) -> None:
    await _turn(client, thread_id, "say hello")
    forked = await client.request("thread/fork", {"threadId": thread_id}, keep=True)
    await _turn(client, forked["thread"]["id"], "and again")
    await _read_thread(client, forked["thread"]["id"])


async def _archive(client: Client, thread_id: str) -> None:
    await _turn(client, thread_id, "say hello")
    await client.request("thread/archive", {"threadId": thread_id}, keep=True)
    await client.request("thread/list", {"archived": True}, keep=True)
    await _read_thread(client, thread_id)


async def _name(client: Client, thread_id: str) -> None:
    await _turn(client, thread_id, "say hello")
    await client.request("thread/name/set", {"threadId": thread_id, "name": "my thread"}, keep=True)
    await _read_thread(client, thread_id)


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": args, "call_id": call_id}


SCENARIOS = [
    Scenario("a_plain", [["hello there"]], _plain),
    Scenario("b_exec", [[_call("exec_command", {"cmd": "echo hi"}, "call_exec")], ["ran it"]], _plain),
    Scenario("c_approval", [[_call("exec_command", ESCALATED, "call_esc")], ["approved and ran"]], _plain,
             ['approval_policy = "on-request"', 'sandbox_mode = "workspace-write"']),
    Scenario("d_apply_patch", [[{"type": "custom_tool_call", "name": "apply_patch", "input": PATCH,
                                 "call_id": "call_patch"}], ["patched"]], _plain, ['model = "gpt-5.5"']),
    Scenario("e_compact", [["hello there"], ["SUMMARY: the user said hello"]], _compact),
    Scenario("f_fork", [["hello there"], ["hello from the fork"]], _fork),
    Scenario("g_archive", [["hello there"]], _archive),
    Scenario("h_name", [["hello there"]], _name),
]


def _config(port: int, extra: list[str]) -> str:
    top = {line.split("=")[0].strip(): line for line in
           ['model = "mock-model"', 'approval_policy = "never"', 'sandbox_mode = "danger-full-access"', *extra]}
    return "\n".join([*top.values(), 'model_provider = "mock"', "", "[model_providers.mock]", 'name = "mock"',
                      f'base_url = "http://127.0.0.1:{port}/v1"', 'wire_api = "responses"',
                      "request_max_retries = 0", "stream_max_retries = 0", ""])


def server_argv(target: str, codex: str | None) -> list[str]:
    """The app-server command line for ``target`` ("codex" needs the binary's path)."""
    if target == "codex":
        assert codex is not None, "codex needs the binary's path"
        return [codex, "app-server"]
    return [PYTHON, "-m", "pycodex", "app-server"]


async def run_scenario(scenario: Scenario, argv: list[str]) -> dict[str, Any]:
    """Run one scenario in a fresh CODEX_HOME; return its normalized recording (schemas under "_schemas")."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        home, work = base / "home", base / "work"
        home.mkdir()
        work.mkdir()
        script = base / "script.json"
        script.write_text(json.dumps(scenario.responses))
        fake = subprocess.Popen([sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert fake.stdout is not None
            port = int(fake.stdout.readline())
            (home / "config.toml").write_text(_config(port, scenario.config))
            kept = await _drive(scenario, argv, home, work)
        finally:
            assert fake.stdin is not None and fake.stdout is not None
            fake.stdin.close()  # the fixture serves until its stdin closes
            fake.wait(10)
            fake.stdout.close()
        return _snapshot(home, Normalizer({str(home): "<HOME>", str(work): "<CWD>", tmp: "<TMP>"}), kept)


async def _drive(scenario: Scenario, argv: list[str], home: Path, work: Path) -> list[dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX", "PYCODEX"))}
    env.update(CODEX_HOME=str(home), PYTHONPATH=str(ROOT), RUST_LOG="error")
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
        env=env, cwd=str(work), limit=1 << 24)
    client = Client(proc)
    try:
        await client.request("initialize", {"clientInfo": {"name": "storage-probe", "version": "1"},
                                            "capabilities": {"experimentalApi": True}})
        await client.notify("initialized")
        started = await client.request("thread/start", {"cwd": str(work)}, keep=True)
        await scenario.run(client, started["thread"]["id"])
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 30)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    return client.kept


def _snapshot(home: Path, norm: Normalizer, kept: list[dict[str, Any]]) -> dict[str, Any]:
    rpc = norm.value(kept)  # first, so ids are numbered in the order the client saw them
    rollouts = []
    for path in sorted(p for p in home.rglob("*.jsonl") if p.name.startswith("rollout-")):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        rollouts.append({"path": norm.text(path.relative_to(home).as_posix()), "lines": norm.value(lines)})
    # Other JSONL files (session_index.jsonl: thread names) are kept whole too.
    journals = {norm.text(p.relative_to(home).as_posix()): norm.value(
        [json.loads(line) for line in p.read_text().splitlines() if line.strip()])
        for p in sorted(home.rglob("*.jsonl")) if not p.name.startswith("rollout-")}
    # Codex unpacks its bundled skills on start: those files say nothing about threads.
    others = sorted(p.relative_to(home).as_posix() for p in home.rglob("*")
                    if p.is_file() and not p.relative_to(home).as_posix().startswith("skills/")
                    and not p.name.endswith(("-wal", "-shm")))  # SQLite's companions come and go
    dbs = sqlite_files(home)
    return {
        "rollouts": rollouts,
        "files": [norm.text(p) for p in others],
        "journals": journals,
        "sqlite": {p.relative_to(home).as_posix(): sqlite_rows(p, norm) for p in dbs},
        "rpc": rpc,
        "_schemas": {p.relative_to(home).as_posix(): sqlite_schema(p) for p in dbs},
    }


def main(target: str, codex: str | None = None) -> None:
    """Record every scenario for ``target`` and write its folder (and the manifest entries)."""
    out = OUT_DIRS[target]
    out.mkdir(parents=True, exist_ok=True)
    schemas: dict[str, Any] = {}
    written = []
    for scenario in SCENARIOS:
        recording = asyncio.run(run_scenario(scenario, server_argv(target, codex)))
        schemas.update(recording.pop("_schemas"))
        path = out / f"{scenario.name}.json"
        path.write_text(json.dumps(recording, indent=1) + "\n")
        written.append(path)
        print(f"wrote {path}")
    schema_path = out / "sqlite_schema.json"
    schema_path.write_text(json.dumps(schemas, indent=1, sort_keys=True) + "\n")
    record_in_manifest(*written, schema_path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
