"""Record the core TurnItems Codex 0.169 writes to its rollouts, beside its thread/read answer for them.

Each scenario runs through scripts/capture_codex_storage.py's run_scenario (fresh CODEX_HOME, the fake
Responses server, Codex's app-server over stdio, the same Normalizer), and keeps only what
app_server/store/codex_items.py is tested against: the `item_completed` payloads of every rollout (`core`)
and the items of the last thread/read answer (`v2`), in the same order. Writes
tests/data/storage/codex_items/<scenario>.json.

Facts these recordings show beyond the items themselves: a command the user declines leaves no
`item_completed` line (declined.json has none), and an apply_patch whose file is missing never becomes a
FileChange item (commands.json's second patch). An MCP tool is there for a turn only once its server
reports ready (the mcp scenario waits for that). An `image_generation_call` output item
from the model, without the image generation tool enabled, leaves no ImageGeneration item (not kept).

    python scripts/capture_codex_items.py PATH/TO/codex
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.capture_codex_storage import Client, Scenario, run_scenario, server_argv
from scripts.manifest import write_recording

ROOT = Path(__file__).resolve().parent.parent
MCP_SERVER = ROOT / "tests" / "support" / "mcp_calc_server.py"
OUT = ROOT / "tests" / "data" / "storage" / "codex_items"
# A 1x1 PNG, for the image inputs and view_image (Codex reads the file).
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
# The work folder as the Normalizer leaves it in map keys (keys are not normalized): tempfile's name + /work.
TMP_WORK_RE = re.compile(r"^/tmp/[^/]+/work")
UPDATE_DELETE = (
    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: moved.txt\n@@\n-one\n+uno\n"
    "*** Delete File: b.txt\n*** Update File: c.txt\n@@\n-three\n+tres\n*** End Patch\n"
)


def _call(name: str, args: dict[str, Any], call_id: str, namespace: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function_call", "name": name, "arguments": args, "call_id": call_id}
    if namespace is not None:
        call["namespace"] = namespace
    return call


def _exec(cmd: str, call_id: str) -> list[Any]:
    return [_call("exec_command", {"cmd": cmd}, call_id)]


def _raw(*items: dict[str, Any]) -> dict[str, Any]:
    """A response of raw events carrying output items as given (fields the script format has no key for)."""
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    return {
        "events": [
            {"type": "response.created", "response": {"id": "resp_raw"}},
            *(
                {"type": f"response.output_item.{stage}", "output_index": index, "item": item}
                for index, item in enumerate(items)
                for stage in ("added", "done")
            ),
            {"type": "response.completed", "response": {"id": "resp_raw", "usage": usage}},
        ]
    }


def _cwd(client: Client) -> Path:
    started = next(k for k in client.kept if k.get("method") == "thread/start")
    return Path(started["answer"]["result"]["cwd"])


async def _turn(client: Client, thread_id: str, content: list[dict[str, Any]]) -> None:
    await client.request("turn/start", {"threadId": thread_id, "input": content})
    await client.until("turn/completed")


async def _read(client: Client, thread_id: str) -> None:
    await client.request("thread/read", {"threadId": thread_id, "includeTurns": True}, keep=True)


async def _say(client: Client, thread_id: str) -> None:
    await _turn(client, thread_id, [{"type": "text", "text": "go"}])
    await _read(client, thread_id)


async def _inputs(client: Client, thread_id: str) -> None:
    """One user message with every input kind (the files exist: Codex reads images and skills)."""
    cwd = _cwd(client)
    (cwd / "pic.png").write_bytes(PNG)
    skill = cwd / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: demo\ndescription: a demo skill\n---\nSay hi.\n")
    text = "look at $demo and @notes"
    elements = [
        {"byteRange": {"start": 8, "end": 13}, "placeholder": "$demo"},
        {"byteRange": {"start": 18, "end": 24}, "placeholder": None},
    ]
    await _turn(
        client,
        thread_id,
        [
            {"type": "text", "text": text, "text_elements": elements},
            {"type": "image", "url": "data:image/png;base64," + base64.b64encode(PNG).decode()},
            {"type": "localImage", "path": str(cwd / "pic.png"), "detail": "high"},
            {"type": "skill", "name": "demo", "path": str(skill)},
            {"type": "mention", "name": "notes", "path": "app://notes"},
        ],
    )
    await _read(client, thread_id)


def _answer_with(client: Client, reply: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Make this one client answer server requests with ``reply(request)`` instead of "accept"."""
    client.reply = reply


async def _declined(client: Client, thread_id: str) -> None:
    _answer_with(client, lambda _request: {"decision": "decline"})
    await _say(client, thread_id)


LOOKUP = {
    "type": "function",
    "name": "lookup",
    "description": "Look a word up.",
    "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
}


async def _dynamic(client: Client, thread_id: str) -> None:
    # Dynamic tools are given at thread/start: a second thread has them (the first never runs a turn).
    _answer_with(
        client, lambda _request: {"contentItems": [{"type": "inputText", "text": "found"}], "success": True}
    )
    started = await client.request("thread/start", {"cwd": str(_cwd(client)), "dynamicTools": [LOOKUP]})
    await _say(client, started["thread"]["id"])


async def _plan(client: Client, thread_id: str) -> None:
    mode = {
        "mode": "plan",
        "settings": {"model": "mock-model", "reasoning_effort": None, "developer_instructions": None},
    }
    await client.request(
        "turn/start",
        {"threadId": thread_id, "input": [{"type": "text", "text": "plan it"}], "collaborationMode": mode},
    )
    await client.until("turn/completed")
    await _read(client, thread_id)


async def _view_image(client: Client, thread_id: str) -> None:
    (_cwd(client) / "pic.png").write_bytes(PNG)
    await _say(client, thread_id)


async def _mcp(client: Client, thread_id: str) -> None:
    # The server's tools exist for a turn only once it reports ready: wait for that before the turn.
    while True:
        update = await client.until("mcpServer/startupStatus/updated")
        if update["params"].get("status") in ("ready", "failed"):
            break
    await _say(client, thread_id)


PARENT, CHILD = "PARENT-TASK", "CHILD-TASK"
AGENT_ID = (
    r"agent_id\W+([0-9a-f-]{36})"  # the child's id, in the spawn_agent output the parent's next request has
)


def _collab_call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "namespace": "multi_agent_v1",
        "name": name,
        "call_id": call_id,
        "arguments": json.dumps(args),
    }


async def _parent(client: Client, thread_id: str) -> None:
    await _turn(client, thread_id, [{"type": "text", "text": PARENT}])
    await _read(client, thread_id)


SCENARIOS = [
    Scenario(
        "reasoning",
        [
            _raw(
                {
                    "type": "reasoning",
                    "id": "rs_1",
                    "summary": [
                        {"type": "summary_text", "text": "first part"},
                        {"type": "summary_text", "text": "second part"},
                    ],
                    "content": [{"type": "reasoning_text", "text": "raw thinking"}],
                },
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "phase": "final_answer",
                    "content": [{"type": "output_text", "text": "thought", "annotations": []}],
                },
            )
        ],
        _say,
        ["show_raw_agent_reasoning = true"],
    ),
    Scenario(
        "commands",
        [
            _exec(
                "printf 'one\\n' > a.txt && printf 'two\\n' > b.txt && printf 'three\\n' > c.txt",
                "call_write",
            ),
            _exec("cat a.txt", "call_read"),
            _exec("ls", "call_list"),
            _exec("rg two", "call_search"),
            _exec("echo oops >&2; exit 3", "call_fail"),
            [
                {
                    "type": "custom_tool_call",
                    "name": "apply_patch",
                    "input": UPDATE_DELETE,
                    "call_id": "call_patch",
                }
            ],
            [
                {
                    "type": "custom_tool_call",
                    "name": "apply_patch",
                    "call_id": "call_bad_patch",
                    "input": "*** Begin Patch\n*** Update File: missing.txt\n@@\n-x\n+y\n*** End Patch\n",
                }
            ],
            ["done"],
        ],
        _say,
        ['model = "gpt-5.5"'],
    ),  # a model Codex gives apply_patch
    Scenario(
        "declined",
        [
            [
                _call(
                    "exec_command",
                    {
                        "cmd": "echo nope",
                        "sandbox_permissions": "require_escalated",
                        "justification": "needs it",
                    },
                    "call_declined",
                )
            ],
            ["declined"],
        ],
        _declined,
        ['approval_policy = "on-request"', 'sandbox_mode = "workspace-write"'],
    ),
    Scenario("inputs", [["seen"]], _inputs),
    Scenario(
        "web_search",
        [
            [
                {
                    "type": "web_search_call",
                    "id": "ws_1",
                    "status": "completed",
                    "action": {"type": "search", "query": "codex rollouts"},
                },
                "searched",
            ]
        ],
        _say,
        ['web_search = "live"'],
    ),
    Scenario(
        "view_image", [[_call("view_image", {"path": "pic.png"}, "call_view")], ["viewed"]], _view_image
    ),
    Scenario(
        "mcp",
        [
            [_call("add", {"a": 2, "b": 3}, "call_add", "mcp__calc")],
            [_call("fail", {}, "call_mcp_fail", "mcp__calc")],
            ["added"],
        ],
        _mcp,
        [
            f"mcp_servers.calc.command = {json.dumps(sys.executable)}",
            f"mcp_servers.calc.args = [{json.dumps(str(MCP_SERVER))}]",
        ],
    ),
    Scenario("dynamic_tool", [[_call("lookup", {"q": "word"}, "call_dyn")], ["looked"]], _dynamic),
    Scenario("plan", [["Here is the plan.\n<proposed_plan>\n1. Do it.\n</proposed_plan>\n"]], _plan),
    Scenario(
        "collab",
        [
            {"when": PARENT, "output": [_collab_call("spawn", "spawn_agent", message=f"{CHILD}: answer")]},
            {
                "when": PARENT,
                "output": [_collab_call("wait", "wait_agent", targets=["{{ID}}"], timeout_ms=30000)],
                "fill": {"ID": AGENT_ID},
            },
            {"when": PARENT, "output": ["parent done"]},
            {"when": CHILD, "output": ["child answer"]},
        ],
        _parent,
    ),
]


def normalize_keys(value: Any) -> Any:
    """The Normalizer keeps map keys as they are: FileChange's path keys get the <CWD> placeholder here."""
    if isinstance(value, dict):
        return {TMP_WORK_RE.sub("<CWD>", k): normalize_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize_keys(v) for v in value]
    return value


def _thread_of(rollout: dict[str, Any]) -> str | None:
    meta = next((line for line in rollout["lines"] if line.get("type") == "session_meta"), None)
    return None if meta is None else str(meta["payload"]["id"])


def reduce(recording: dict[str, Any]) -> dict[str, Any]:
    """The part of a storage recording the item tests need: core items (with their record) and v2 items."""
    core = [
        line["payload"]
        for rollout in recording["rollouts"]
        for line in rollout["lines"]
        if line.get("type") == "event_msg" and line["payload"].get("type") == "item_completed"
    ]
    reads = [k["answer"]["result"] for k in recording["rpc"] if k.get("method") == "thread/read"]
    thread = reads[-1]["thread"]
    v2 = [item for turn in thread["turns"] for item in turn["items"]]
    # Only the read thread's own rollouts (a sub-agent's thread has one of its own).
    core = [
        line["payload"]
        for rollout in recording["rollouts"]
        if _thread_of(rollout) == thread["id"]
        for line in rollout["lines"]
        if line.get("type") == "event_msg" and line["payload"].get("type") == "item_completed"
    ]
    return {"core": normalize_keys(core), "v2": v2}


def main(codex: str, only: list[str]) -> None:
    """Record the scenarios (all, or those named in ``only``) and write one file each."""
    for scenario in SCENARIOS:
        if only and scenario.name not in only:
            continue
        recording = asyncio.run(run_scenario(scenario, server_argv("codex", codex)))
        path = OUT / f"{scenario.name}.json"
        write_recording(path, reduce(recording))
        print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
