"""Record how Codex's app-server answers the MCP requests (mcpServerStatus/list, mcpServer/tool/call,
mcpServer/resource/read, config/mcpServer/reload, mcpServer/oauth/login) and which
`mcpServer/startupStatus/updated` notifications it sends, with tests/support/mcp_calc_server.py as
`[mcp_servers.calc]` and no tool pre-approved. One turn
against fixtures/fake_responses_server.py has the model call `add` (readOnlyHint) and `echo` (no hints)
under approval_policy = "never": the `mcpToolCall` items and the function outputs are recorded too. A second
turn, on a thread started with approvalPolicy "on-request", calls `echo`: the approval request Codex sends
the client is recorded and accepted.
Writes tests/data/mcp/codex_0169_app_server.json (thread ids and the home path replaced by placeholders).

    python scripts/capture_mcp_app_server.py PATH/TO/codex
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pycodex.json_types import JsonObj

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.manifest import record_in_manifest

ROOT = Path(__file__).resolve().parent.parent
SERVER = str(ROOT / "tests" / "support" / "mcp_calc_server.py")
OUT = ROOT / "tests" / "data" / "mcp" / "codex_0169_app_server.json"


def _call(call_id: str, name: str, args: JsonObj) -> JsonObj:
    item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "namespace": "mcp__calc",
            "name": name, "arguments": json.dumps(args), "status": "completed"}
    usage = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}
    return {"events": [
        {"type": "response.created", "response": {"id": f"resp_{call_id}"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": f"resp_{call_id}", "usage": usage}},
    ]}


def _server(name: str) -> str:
    return f"[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(SERVER)}]\n"


class Probe:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.log: list[JsonObj] = []
        self.next_id = 0
        self.settled: set[tuple[str, str]] = set()  # (thread id, server) that reported ready or failed

    async def _read(self) -> JsonObj:
        assert self.proc.stdout is not None
        message: JsonObj = json.loads(await asyncio.wait_for(self.proc.stdout.readline(), 30))
        if str(message.get("method", "")).startswith("mcpServer/") and "id" not in message:
            message.pop("emittedAtMs", None)
            self.log.append({"notification": message})
            params = message.get("params") or {}
            if params.get("status") in ("ready", "failed"):
                self.settled.add((str(params.get("threadId")), str(params.get("name"))))
        return message

    async def request(self, method: str, params: JsonObj | None = None) -> JsonObj:
        self.next_id += 1
        msg: JsonObj = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        await self.proc.stdin.drain()
        while True:
            message = await self._read()
            if message.get("id") == self.next_id and "method" not in message:
                self.log.append({"request": msg, "response": message})
                return message

    async def until_turn_done(self) -> None:
        """Read until turn/completed, logging the mcpToolCall item notifications; a server request (the
        approval prompt) is logged and accepted."""
        while True:
            message = await self._read()
            method = message.get("method")
            if method is not None and "id" in message:
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"action": "accept", "content": None}}
                self.log.append({"server_request": message, "reply": reply})
                assert self.proc.stdin is not None
                self.proc.stdin.write((json.dumps(reply) + "\n").encode())
                await self.proc.stdin.drain()
            item = (message.get("params") or {}).get("item") or {}
            if method in ("item/started", "item/completed") and item.get("type") == "mcpToolCall":
                self.log.append({"notification": message})
            if method == "turn/completed":
                return

    async def until_ready(self, thread_id: str, names: set[str]) -> None:
        """Read until every named server reported "ready" (or "failed") for the thread."""
        while not {(thread_id, name) for name in names} <= self.settled:
            await self._read()


async def main(codex: str) -> None:
    home = Path(tempfile.mkdtemp())
    script = home / "script.json"
    script.write_text(json.dumps([_call("call_add", "add", {"a": 2, "b": 3}), _call("call_echo", "echo", {"text": "hi"}),
                                  {"output": [{"type": "message", "text": "done"}]},
                                  _call("call_echo2", "echo", {"text": "asked"}),
                                  {"output": [{"type": "message", "text": "done again"}]}]))
    requests_log = home / "requests.jsonl"
    fake = subprocess.Popen([sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script),
                             "--log", str(requests_log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert fake.stdout is not None
        port = int(fake.stdout.readline())
        await _probe(codex, home, port, requests_log)
    finally:
        fake.terminate()
        fake.wait(10)


async def _probe(codex: str, home: Path, port: int, requests_log: Path) -> None:
    config = ('model = "m"\napproval_policy = "never"\nmodel_provider = "mock"\n[model_providers.mock]\n'
              f'name = "mock"\nbase_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
              'request_max_retries = 0\nstream_max_retries = 0\n' + _server("calc"))
    (home / "config.toml").write_text(config)
    proc = await asyncio.create_subprocess_exec(
        codex, "app-server", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env={**os.environ, "CODEX_HOME": str(home)}, cwd=str(home))
    probe = Probe(proc)
    await probe.request("initialize", {"clientInfo": {"name": "probe", "version": "1"},
                                       "capabilities": {"experimentalApi": True}})
    assert proc.stdin is not None
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"initialized"}\n')
    add = {"server": "calc", "tool": "add", "arguments": {"a": 1, "b": 2}}
    await probe.request("mcpServerStatus/list", {"detail": "toolsAndAuthOnly"})
    await probe.request("mcpServer/tool/call", add)
    await probe.request("mcpServer/tool/call", {"threadId": "nope", **add})
    first = (await probe.request("thread/start", {"cwd": str(home)}))["result"]["thread"]["id"]
    await probe.until_ready(first, {"calc"})
    await probe.request("mcpServer/tool/call", {"threadId": first, **add})
    await probe.request("mcpServer/tool/call", {"threadId": first, "server": "calc", "tool": "echo",
                                                "arguments": {"text": "x"}})
    await probe.request("mcpServer/tool/call", {"threadId": first, **add, "server": "calc2"})
    await probe.request("mcpServer/tool/call", {"threadId": first, **add, "tool": "nosuch"})
    await probe.request("mcpServer/resource/read", {"threadId": first, "server": "calc", "uri": "calc://greeting"})
    await probe.request("mcpServer/resource/read", {"server": "calc", "uri": "calc://greeting"})
    await probe.request("turn/start", {"threadId": first, "input": [{"type": "text", "text": "add"}]})
    await probe.until_turn_done()
    bodies = [json.loads(line)["body"] for line in requests_log.read_text().splitlines()]
    outputs = [item for item in bodies[-1]["input"] if item.get("type") == "function_call_output"]
    probe.log.append({"function_call_outputs": [{**out, "id": "ID"} for out in outputs]})
    asking = (await probe.request("thread/start", {"cwd": str(home), "approvalPolicy": "on-request"}))
    asking_id = asking["result"]["thread"]["id"]
    await probe.until_ready(asking_id, {"calc"})
    await probe.request("turn/start", {"threadId": asking_id, "input": [{"type": "text", "text": "echo"}]})
    await probe.until_turn_done()
    (home / "config.toml").write_text(config + _server("calc2"))
    await probe.request("config/mcpServer/reload")
    await probe.until_ready(first, {"calc2"})
    await probe.request("mcpServer/tool/call", {"threadId": first, **add, "server": "calc2"})
    second = (await probe.request("thread/start", {"cwd": str(home)}))["result"]["thread"]["id"]
    await probe.until_ready(second, {"calc", "calc2"})
    await probe.request("mcpServerStatus/list", {"threadId": first})
    await probe.request("mcpServerStatus/list", {"limit": 1})
    await probe.request("mcpServer/oauth/login", {"name": "calc"})
    await probe.request("mcpServer/oauth/login", {"name": "nope"})
    proc.stdin.close()
    await asyncio.wait_for(proc.wait(), 20)
    text = json.dumps(probe.log, indent=1)
    for value, label in ((first, "THREAD_1"), (second, "THREAD_2"), (asking_id, "THREAD_ASK"), (str(home), "HOME")):
        text = text.replace(value, label)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text + "\n")
    record_in_manifest(OUT)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
