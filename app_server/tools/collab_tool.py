"""The ``multi_agent_v1`` tools: spawn_agent, send_input, wait_agent, close_agent and resume_agent.

They drive the server's sub-agents (``ThreadServices.agents``, ``threads.agent_contracts.SubAgents``) and
tell the model what Codex 0.169 tells it: compact JSON (``{"agent_id", "nickname"}``,
``{"submission_id"}``, ``{"status": {id: status}, "timed_out"}``, ``{"previous_status"}``,
``{"status"}``), or a plain refusal text. Each call the agents see is shown on the calling thread as a
``collabAgentToolCall`` item (item/started, then item/completed), mapped as Codex's app-server maps its
collab events: ``failed`` when the reported agent errored or is unknown, the agents' states by thread id.

wait_agent's ``timeout_ms`` defaults to 30 s and is clamped to [10 s, 1 h], as in Codex; a non-positive
one is refused. A thread at the ``[agents] max_depth`` limit is not offered these tools, and a call of one
is answered as Codex answers a tool it does not know.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Literal

from app_server.model.catalog import catalog
from app_server.protocol import notices
from app_server.protocol.base import to_wire
from app_server.protocol.items import CollabAgentToolCallItem
from app_server.threads import items as it
from app_server.threads.agent_contracts import AgentStatus, CollabError, SpawnRequest
from app_server.threads.model_metadata import catalog_entry
from app_server.tools.call_output import call_output
from app_server.tools.contracts import ToolOutcome
from pycodex.json_types import JsonObj, JsonValue

if TYPE_CHECKING:
    from app_server.threads.agent_contracts import SubAgents
    from app_server.threads.sampling import ToolCall
    from app_server.tools.contracts import ToolContext

__all__ = ["handle_collab_call"]

UNAVAILABLE = "collab manager unavailable"
MIN_WAIT_TIMEOUT_MS = 10_000
DEFAULT_WAIT_TIMEOUT_MS = 30_000
MAX_WAIT_TIMEOUT_MS = 3_600_000
#: ReasoningEffort's default in Codex, reported for a spawn that asked for none.
DEFAULT_EFFORT = "medium"


CollabTool = Literal["spawnAgent", "sendInput", "resumeAgent", "wait", "closeAgent"]


class _BadArgs(Exception):
    """Arguments the model got wrong; ``str(exc)`` is what it is told."""


def _compact(value: JsonValue) -> str:
    return json.dumps(value, separators=(",", ":"))


def _args(call: ToolCall) -> JsonObj:
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as exc:
        raise _BadArgs(f"failed to parse function arguments: {exc}") from None
    if not isinstance(args, dict):
        raise _BadArgs("failed to parse function arguments: expected an object")
    return args


def _required_str(args: JsonObj, name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise _BadArgs(f"failed to parse function arguments: missing field `{name}`")
    return value


def _agent_id(target: str) -> str:
    """The thread id ``target`` names; anything else is refused with the parse error as Codex words it
    (the Rust uuid error's debug form)."""
    try:
        return str(uuid.UUID(target))
    except ValueError:
        raise _BadArgs(f"invalid agent id {target}: Error({_uuid_error(target)})") from None


def _uuid_error(text: str) -> str:
    for index, char in enumerate(text):
        if char not in _UUID_CHARS:
            return f"ParseChar {{ character: {char!r}, index: {index + 1} }}"
    groups = text.split("-")
    if len(groups) == 1:
        return f"SimpleLength {{ len: {len(text)} }}"
    if len(groups) != len(_GROUP_LENGTHS):
        return f"GroupCount {{ count: {len(groups)} }}"
    index = 0
    for group, (part, want) in enumerate(zip(groups, _GROUP_LENGTHS, strict=True)):
        if len(part) != want:
            return f"GroupLength {{ group: {group}, len: {len(part)}, index: {index + 1} }}"
        index += len(part) + 1
    return "InvalidLength"


_UUID_CHARS = frozenset("0123456789abcdefABCDEF-")
_GROUP_LENGTHS = (8, 4, 4, 4, 12)


def _input_item(item: object) -> JsonObj:
    """One collab input item (Codex's core UserInput form) as a v2 UserInput for the child's turn."""
    if not isinstance(item, dict):
        raise _BadArgs("failed to parse function arguments: an item must be an object")
    kind = item.get("type")
    if kind == "text" and isinstance(item.get("text"), str):
        return {"type": "text", "text": item["text"], "text_elements": []}
    if kind == "image" and isinstance(item.get("image_url"), str):
        return {"type": "image", "url": item["image_url"]}
    if kind == "local_image" and isinstance(item.get("path"), str):
        return {"type": "localImage", "path": item["path"]}
    if kind in ("skill", "mention") and isinstance(item.get("name"), str) and isinstance(item.get("path"), str):
        return {"type": kind, "name": item["name"], "path": item["path"]}
    raise _BadArgs(f"failed to parse function arguments: unsupported item type `{kind}`")


def _collab_input(args: JsonObj) -> list[JsonObj]:
    """``message`` or ``items`` (exactly one of them), with Codex's refusals."""
    message, items = args.get("message"), args.get("items")
    if message is not None and items is not None:
        raise _BadArgs("Provide either message or items, but not both")
    if message is None and items is None:
        raise _BadArgs("Provide one of: message or items")
    if message is not None:
        if not isinstance(message, str):
            raise _BadArgs("failed to parse function arguments: `message` must be a string")
        if not message.strip():
            raise _BadArgs("Empty message can't be sent to an agent")
        return [{"type": "text", "text": message, "text_elements": []}]
    if not isinstance(items, list):
        raise _BadArgs("failed to parse function arguments: `items` must be an array")
    if not items:
        raise _BadArgs("Items can't be empty")
    return [_input_item(item) for item in items]


def _preview(inputs: list[JsonObj]) -> str:
    """The prompt a collab item shows: the texts, with a placeholder for each other part."""
    parts = [str(p["text"]) if p["type"] == "text" else f"[{p['type']}]" for p in inputs]
    return "\n".join(parts)


class _Call:
    """One collab call on the calling thread: announces its item, then completes it once."""

    def __init__(self, ctx: ToolContext, call: ToolCall, tool: CollabTool, receivers: list[str], *,
                 prompt: str | None = None, model: str | None = None, effort: str | None = None) -> None:
        self.ctx, self.call = ctx, call
        self.item = CollabAgentToolCallItem(
            id=call.call_id, tool=tool, status="inProgress",
            sender_thread_id=ctx.thread.id, receiver_thread_ids=receivers, prompt=prompt, model=model,
            reasoning_effort=effort, started_at_ms=it.now_ms())

    async def begin(self) -> None:
        """Send ``item/started``."""
        thread = self.ctx.thread
        await thread.emit(notices.item_started(to_wire(self.item), thread.id, self.ctx.turn.id))

    async def end(self, states: dict[str, AgentStatus], *, failed: bool | None = None,
                  receivers: list[str] | None = None, model: str | None = None, effort: str | None = None) -> None:
        """Complete the item with the agents' ``states`` (failed when one of them failed, or as told);
        ``receivers``, ``model`` and ``effort`` replace what the item started with."""
        failed = any(s.failed for s in states.values()) if failed is None else failed
        wire = dict(to_wire(self.item), status="failed" if failed else "completed",
                    agentsStates={k: s.state_wire() for k, s in states.items()}, completedAtMs=it.now_ms())
        if receivers is not None:
            wire["receiverThreadIds"] = receivers
        if model is not None:
            wire.update(model=model, reasoningEffort=effort)
        await self.ctx.complete_item(wire)


async def _spawn(ctx: ToolContext, call: ToolCall, agents: SubAgents, args: JsonObj) -> str:
    inputs = _collab_input(args)
    model, effort = args.get("model"), args.get("reasoning_effort")
    model = model if isinstance(model, str) and model.strip() else None
    effort = effort if isinstance(effort, str) and effort.strip() else None
    item = _Call(ctx, call, "spawnAgent", [], prompt=_preview(inputs), model=model or "",
                 effort=effort or DEFAULT_EFFORT)
    await item.begin()
    try:
        effort = _child_effort(ctx.thread.settings.model, model, effort)
    except _BadArgs as exc:  # Codex refuses after announcing the call and never completes its item
        return str(exc)
    fork = call.call_id if args.get("fork_context") is True else None
    try:
        spawned = await agents.spawn(SpawnRequest(ctx.thread.id, inputs, model, effort, fork_call_id=fork))
    except CollabError as exc:
        await item.end({}, failed=True)
        return str(exc)
    await item.end({spawned.thread_id: spawned.status}, receivers=[spawned.thread_id], model=spawned.model,
                   effort=spawned.reasoning_effort or effort or DEFAULT_EFFORT)
    return _compact({"agent_id": spawned.thread_id, "nickname": spawned.nickname})


def _child_effort(parent_model: str, model: str | None, effort: str | None) -> str | None:
    """The child's reasoning effort, checked as Codex checks it: a requested model must be a catalog model
    (it then runs at its default effort unless one is asked for), a requested effort one its model
    supports (a slug without metadata supports none). None: the parent's effort."""
    entries = {str(e["model"]): e for e in catalog().models}
    if model is not None and model not in entries:
        available = ", ".join(list(entries)[:5])  # Codex names the catalog's first five
        raise _BadArgs(f"Unknown model `{model}` for spawn_agent. Available models: {available}")
    slug = model or parent_model
    entry = entries.get(model) if model is not None else catalog_entry(parent_model)
    if effort is None:
        default = entry.get("defaultReasoningEffort") if entry is not None and model is not None else None
        return str(default) if isinstance(default, str) else None
    levels = entry.get("supportedReasoningEfforts") if entry is not None else None
    supported = [str(level.get("reasoningEffort")) for level in levels if isinstance(level, dict)] \
        if isinstance(levels, list) else []
    if effort not in supported:
        raise _BadArgs(f"Reasoning effort `{effort}` is not supported for model `{slug}`. "
                       f"Supported reasoning efforts: {', '.join(supported)}")
    return effort


async def _send_input(ctx: ToolContext, call: ToolCall, agents: SubAgents, args: JsonObj) -> str:
    target = _agent_id(_required_str(args, "target"))
    inputs = _collab_input(args)
    interrupt = args.get("interrupt") is True
    if interrupt and agents.status(target).kind == "not_found":  # Codex: its interrupt fails before any item
        return f"agent with id {target} not found"
    item = _Call(ctx, call, "sendInput", [target], prompt=_preview(inputs))
    await item.begin()
    before = agents.status(target)  # what Codex reports: the agent before the input reaches it
    try:
        submission = await agents.send_input(target, inputs, interrupt=interrupt)
    except CollabError as exc:
        await item.end({target: agents.status(target)}, failed=True)
        return str(exc)
    await item.end({target: before})
    return _compact({"submission_id": submission})


def _timeout_ms(args: JsonObj) -> int:
    raw = args.get("timeout_ms", DEFAULT_WAIT_TIMEOUT_MS)
    if raw is None:
        raw = DEFAULT_WAIT_TIMEOUT_MS
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw != int(raw):
        raise _BadArgs("failed to parse function arguments: `timeout_ms` must be an integer")
    if raw <= 0:
        raise _BadArgs("timeout_ms must be greater than zero")
    return min(max(int(raw), MIN_WAIT_TIMEOUT_MS), MAX_WAIT_TIMEOUT_MS)


async def _wait(ctx: ToolContext, call: ToolCall, agents: SubAgents, args: JsonObj) -> str:
    raw = args.get("targets")
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        raise _BadArgs("failed to parse function arguments: missing field `targets`")
    if not raw:
        raise _BadArgs("agent ids must be non-empty")
    targets = [_agent_id(str(t)) for t in raw]
    timeout_ms = _timeout_ms(args)
    item = _Call(ctx, call, "wait", targets)
    await item.begin()
    statuses = await agents.wait(targets, timeout_ms / 1000)
    await item.end(statuses, receivers=list(statuses))
    return _compact({"status": {k: s.model_json() for k, s in statuses.items()}, "timed_out": not statuses})


async def _close(ctx: ToolContext, call: ToolCall, agents: SubAgents, args: JsonObj) -> str:
    target = _agent_id(_required_str(args, "target"))
    item = _Call(ctx, call, "closeAgent", [target])
    await item.begin()
    try:
        previous = await agents.close(target)
    except CollabError as exc:
        await item.end({target: agents.status(target)}, failed=True)
        return str(exc)
    await item.end({target: previous})
    return _compact({"previous_status": previous.model_json()})


async def _resume(ctx: ToolContext, call: ToolCall, agents: SubAgents, args: JsonObj) -> str:
    target = _agent_id(_required_str(args, "id"))
    item = _Call(ctx, call, "resumeAgent", [target])
    await item.begin()
    try:
        status = await agents.resume(target)
    except CollabError as exc:
        await item.end({target: agents.status(target)}, failed=True)
        return str(exc)
    await item.end({target: status})
    return _compact({"status": status.model_json()})


_HANDLERS = {"spawn_agent": _spawn, "send_input": _send_input, "wait_agent": _wait, "close_agent": _close,
             "resume_agent": _resume}


async def handle_collab_call(ctx: ToolContext, call: ToolCall) -> ToolOutcome:
    """Run one ``multi_agent_v1`` call; a refusal or a bad argument is told to the model as the output."""
    agents = ctx.thread.services.agents
    handler = _HANDLERS.get(call.name)
    if handler is None:
        return ToolOutcome(call_output(call, f"unsupported collab tool {call.name}"))
    if agents is None:
        return ToolOutcome(call_output(call, UNAVAILABLE))
    if not agents.limits().allows_spawn_from(agents.depth(ctx.thread.id)):
        # Beyond [agents] max_depth Codex registers none of these tools: the call is an unknown one.
        return ToolOutcome(call_output(call, f"unsupported call: {call.namespace}{call.name}"))
    try:
        text = await handler(ctx, call, agents, _args(call))
    except _BadArgs as exc:
        text = str(exc)
    return ToolOutcome(call_output(call, text))
