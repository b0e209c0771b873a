"""Record how Codex 0.169 defers MCP tools behind `tool_search` and answers a `tool_search_call`.

Runs `codex exec --json` with model gpt-5.5 (a catalog model, so it gets tool_search) against
fixtures/fake_responses_server.py, with tests/support/mcp_calc_server.py as `[mcp_servers.calc]`. Per case
the fake model's first reply is one `tool_search_call` with the case's arguments; the second reply calls
`mcp__calc.add` (the "found" case only); then "done". Kept per case: the tool names of the first request,
the `tool_search_output` (or whatever answers the call) of the next request, and the `exec --json` item
types. Also kept: the namespaces that the first request's `<tools>` developer part lists as deferred (its
prose dropped), and the item notifications of an app-server turn that searches and calls `add` (Codex shows
no item for the search itself). Codex's own prose is not kept; the calc server's tool texts are.
Writes tests/data/tools/codex_0169_tool_search.json.

    python scripts/capture_tool_search.py PATH/TO/codex
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.manifest import write_recording

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "tools" / "codex_0169_tool_search.json"
SERVER = ROOT / "tests" / "support" / "mcp_calc_server.py"

#: (case name, the tool_search_call's arguments, whether the model then calls mcp__calc.add)
CASES: list[tuple[str, Any, bool]] = [
    ("found", {"query": "add integers", "limit": 3}, True),
    ("default limit", {"query": "calc"}, False),
    ("limit 2", {"query": "calc", "limit": 2}, False),
    ("no match", {"query": "zebra quantum"}, False),
    ("empty query", {"query": "   "}, False),
    ("limit 0", {"query": "calc", "limit": 0}, False),
    ("limit 2.0", {"query": "calc", "limit": 2.0}, False),
    ("limit -1", {"query": "calc", "limit": -1}, False),
    ("limit null", {"query": "calc", "limit": None}, False),
    ("no query", {"limit": 3}, False),
    ("query not a string", {"query": 5}, False),
    ("arguments a string", "add integers", False),
    ("sub-agents", {"query": "spawn agent"}, False),
]


def raw_reply(resp_id: str, item: dict[str, Any]) -> dict[str, Any]:
    """A raw Responses stream of one output item (the fake model sends it as given)."""
    usage = {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}
    return {"events": [
        {"type": "response.created", "response": {"id": resp_id}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": resp_id, "usage": usage}},
    ]}


def search_reply(arguments: Any) -> dict[str, Any]:
    """The model's client-executed tool_search call with ``arguments``."""
    return raw_reply("resp_search", {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_search",
                                  "execution": "client", "status": "completed", "arguments": arguments})


ADD = raw_reply("resp_add", {"type": "function_call", "id": "fc_add", "call_id": "call_add", "namespace": "mcp__calc",
                          "name": "add", "arguments": json.dumps({"a": 2, "b": 3}), "status": "completed"})
DONE = {"output": [{"type": "message", "text": "done"}]}


def _config(port: int) -> str:
    return ('model = "gpt-5.5"\napproval_policy = "never"\nsandbox_mode = "read-only"\n'
            'model_provider = "mock"\n[model_providers.mock]\nname = "mock"\n'
            f'base_url = "http://127.0.0.1:{port}/v1"\nwire_api = "responses"\n'
            'request_max_retries = 0\nstream_max_retries = 0\n'
            f'[mcp_servers.calc]\ncommand = {json.dumps(sys.executable)}\n'
            f'args = [{json.dumps(str(SERVER))}, "stdio"]\n'
            'required = true\n'  # the turn waits for it
            '[mcp_servers.calc.tools.add]\napproval_mode = "approve"\n')


class _Fake:
    """fixtures/fake_responses_server.py serving ``script`` in ``tmp``, logging requests."""

    def __init__(self, tmp: Path, script: list[Any]) -> None:
        path, self.log = tmp / "script.json", tmp / "requests.jsonl"
        path.write_text(json.dumps(script))
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(path),
                                      "--log", str(self.log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline())

    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(line)["body"] for line in self.log.read_text().splitlines()]

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()  # the fixture serves until its stdin closes
        self.proc.wait(10)
        self.proc.stdout.close()


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX"))}
    env["CODEX_HOME"] = str(home)
    return env


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [t.get("name") or t["type"] for t in body.get("tools", [])]


def _own_tools_only(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Found tools with the texts of Codex's own namespaces (not the calc server's) reduced to names."""
    return [spec if spec.get("name") == "mcp__calc" else
            {"type": spec.get("type"), "name": spec.get("name"),
             "tools": [{"type": t.get("type"), "name": t.get("name")} for t in spec.get("tools", [])]}
            for spec in tools]


def _after_search(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The input items from the tool_search_call on, server-made ids replaced by their prefix."""
    items = body["input"]
    start = next(i for i, item in enumerate(items) if item.get("type") == "tool_search_call")
    out = []
    for item in items[start:]:
        item = dict(item)
        if isinstance(item.get("id"), str) and item["id"].startswith(("tso_", "fco_")):
            item["id"] = item["id"][:4] + "ID"
        if item.get("type") == "tool_search_output":
            item["tools"] = _own_tools_only(item.get("tools", []))
        out.append(item)
    return out


def _deferred_namespaces(body: dict[str, Any]) -> list[list[str]]:
    """Per `<tools>` developer part, the namespace names it lists as deferred (its prose dropped)."""
    texts = [part["text"] for item in body["input"] if item.get("role") == "developer"
             for part in item.get("content", []) if part.get("text", "").startswith("<tools>")]
    return [[line[2:].split(":")[0] for line in text.splitlines() if line.startswith("- ")] for text in texts]


def _exec_case(codex: str, arguments: Any, then_add: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        home = tmp / "home"
        home.mkdir()
        fake = _Fake(tmp, [search_reply(arguments), *([ADD] if then_add else []), DONE])
        try:
            (home / "config.toml").write_text(_config(fake.port))
            run = subprocess.run([codex, "exec", "--skip-git-repo-check", "--json", "find a tool"], env=_env(home),
                                 cwd=tmp, timeout=120, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                 check=False)
        finally:
            fake.close()
        bodies = fake.bodies()
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    return {
        "first_tools": _tool_names(bodies[0]),
        "deferred_namespaces": _deferred_namespaces(bodies[0]),
        "requests": len(bodies),
        "later_tools": [_tool_names(body) for body in bodies[1:]],
        "input_after_search": _after_search(bodies[-1]),
        "exec_items": [[e["type"], e["item"]["type"]] for e in events if "item" in e],
    }


async def _app_server_items(codex: str) -> list[list[str]]:
    """The (method, item type) of every item notification of a turn that searches, then calls add."""
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        fake = _Fake(tmp, [search_reply({"query": "add integers", "limit": 3}), ADD, DONE])
        try:
            (tmp / "config.toml").write_text(_config(fake.port))
            proc = await asyncio.create_subprocess_exec(
                codex, "app-server", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, env=_env(tmp), cwd=str(tmp))
            assert proc.stdin is not None and proc.stdout is not None
            seen: list[list[str]] = []

            async def send(msg: dict[str, Any]) -> None:
                assert proc.stdin is not None
                proc.stdin.write((json.dumps({"jsonrpc": "2.0", **msg}) + "\n").encode())
                await proc.stdin.drain()

            async def until(pred: Any) -> dict[str, Any]:
                assert proc.stdout is not None
                while True:
                    message: dict[str, Any] = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))
                    method = str(message.get("method", ""))
                    if method.startswith("item/") and "item" in (message.get("params") or {}):
                        seen.append([method, message["params"]["item"]["type"]])
                    if pred(message):
                        return message

            await send({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "probe", "version": "1"}}})
            await until(lambda m: m.get("id") == 1)
            await send({"method": "initialized"})
            await send({"id": 2, "method": "thread/start", "params": {"cwd": str(tmp)}})
            thread = (await until(lambda m: m.get("id") == 2))["result"]["thread"]["id"]
            await send({"id": 3, "method": "turn/start",
                        "params": {"threadId": thread, "input": [{"type": "text", "text": "find a tool"}]}})
            await until(lambda m: m.get("method") == "turn/completed")
            proc.stdin.close()
            await asyncio.wait_for(proc.wait(), 20)
        finally:
            fake.close()
    return seen


def main(codex: str) -> None:
    cases = [{"name": name, "arguments": arguments, **_exec_case(codex, arguments, then_add)}
             for name, arguments, then_add in CASES]
    data = {"codex": "0.169.0", "model": "gpt-5.5", "cases": cases,
            "app_server_items": asyncio.run(_app_server_items(codex))}
    write_recording(OUT, data)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
