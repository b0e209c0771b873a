"""v2 items and turn notifications as ACP ``session/update`` payloads (sans-IO: dicts in, SDK models out).

The mapping follows codex-acp: an agent message streams as ``agent_message_chunk``, reasoning as
``agent_thought_chunk``; a tool item (command, file change, MCP call, web search) is one ``tool_call`` whose id
is the item id, then ``tool_call_update``s; a file change carries its changes as ``diff`` contents; a plan is a
``plan`` update. A stored turn's items give the same updates, so ``session/load`` replays what a live turn
showed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from acp import helpers
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    FileEditToolCallContent,
    PlanEntry,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from pycodex.json_types import JsonObj

__all__ = ["SessionUpdate", "TurnStream", "diff_contents", "history_updates", "item_completed", "item_started", "obj"]

SessionUpdate = (
    UserMessageChunk | AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress | AgentPlanUpdate
)
ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"]
Status = Literal["pending", "in_progress", "completed", "failed"]
#: The most command output one update carries (the client shows the tail of a long run).
OUTPUT_LIMIT = 64 * 1024
_TOOL_ITEMS = frozenset({"commandExecution", "fileChange", "mcpToolCall", "webSearch", "dynamicToolCall", "imageView"})
_ITEM_STATUS: dict[str, Status] = {"inProgress": "in_progress", "completed": "completed", "failed": "failed",
                                   "declined": "failed"}
_ACTION_KIND: dict[str, ToolKind] = {"read": "read", "listFiles": "search", "search": "search"}


def obj(value: object) -> JsonObj:
    """``value`` when it is a JSON object, else an empty one (v2 params are read defensively)."""
    return value if isinstance(value, dict) else {}


def _status(item: JsonObj, default: Status) -> Status:
    return _ITEM_STATUS.get(str(item.get("status")), default)


def _fenced(text: str) -> str:
    tail = text[-OUTPUT_LIMIT:]
    return f"```\n{tail}{'' if tail.endswith(chr(10)) or not tail else chr(10)}```"


def diff_contents(changes: Sequence[JsonObj]) -> list[FileEditToolCallContent]:
    """A ``fileChange``'s changes as ACP diffs: each hunk's old side (context and removed lines) and new side.

    The v2 item carries unified diffs only; the hunks' two sides are what an editor can locate and show.
    An added file has no old text; a deleted one has an empty new text.
    """
    out = []
    for change in changes:
        kind = obj(change.get("kind"))
        kind_type = str(kind.get("type", "update"))
        path = str(kind.get("move_path") or change.get("path", ""))
        diff = str(change.get("diff", ""))
        if kind_type == "add":  # Codex puts the whole contents there
            out.append(helpers.tool_diff_content(path, diff, None))
            continue
        if kind_type == "delete":  # ... and the old contents there
            out.append(helpers.tool_diff_content(path, "", diff))
            continue
        old: list[str] = []
        new: list[str] = []
        for line in diff.splitlines(keepends=True):
            if line.startswith(("---", "+++", "@@", "\\")):
                continue
            if line.startswith("-"):
                old.append(line[1:])
            elif line.startswith("+"):
                new.append(line[1:])
            else:
                old.append(line[1:])
                new.append(line[1:])
        out.append(helpers.tool_diff_content(path, "".join(new), "".join(old)))
    return out


def _command_kind(item: JsonObj) -> ToolKind:
    actions = [a for a in item.get("commandActions") or [] if isinstance(a, dict)]
    kinds = {_ACTION_KIND.get(str(a.get("type")), "execute") for a in actions}
    return kinds.pop() if len(kinds) == 1 else "execute"


def _shape(item: JsonObj) -> tuple[str, ToolKind, JsonObj, list[Any], list[ToolCallLocation]]:
    """(title, kind, raw input, content, locations) of a tool item."""
    kind = str(item.get("type"))
    if kind == "commandExecution":
        cwd = str(item.get("cwd") or "")
        raw: JsonObj = {"command": item.get("command"), "cwd": cwd}
        locations = [ToolCallLocation(path=cwd)] if cwd else []
        return str(item.get("command") or "command"), _command_kind(item), raw, [], locations
    if kind == "fileChange":
        changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
        paths = [str(c.get("path", "")) for c in changes]
        title = "Edit " + ", ".join(paths) if paths else "Edit files"
        return title, "edit", {"changes": changes}, list(diff_contents(changes)), [ToolCallLocation(path=p) for p in paths]
    if kind == "mcpToolCall":
        name = f"{item.get('server', '')}.{item.get('tool', '')}"
        return name, "other", {"arguments": item.get("arguments")}, [], []
    if kind == "webSearch":
        return f"Search the web: {item.get('query', '')}", "fetch", {"query": item.get("query")}, [], []
    if kind == "imageView":
        path = str(item.get("path", ""))
        return f"View {path}", "read", {"path": path}, [], [ToolCallLocation(path=path)] if path else []
    return str(item.get("tool") or kind), "other", {"arguments": item.get("arguments")}, [], []


def _result_content(item: JsonObj) -> list[Any]:
    kind = item.get("type")
    if kind == "commandExecution":
        output = str(item.get("aggregatedOutput") or "")
        return [helpers.tool_content(helpers.text_block(_fenced(output)))] if output else []
    if kind == "fileChange":
        return list(diff_contents([c for c in item.get("changes") or [] if isinstance(c, dict)]))
    if kind == "mcpToolCall":
        result = obj(item.get("result"))
        texts = [str(b.get("text")) for b in result.get("content") or [] if isinstance(b, dict) and "text" in b]
        error = item.get("error") if isinstance(item.get("error"), dict) else None
        if error:
            texts.append(str(error.get("message", "")))
        return [helpers.tool_content(helpers.text_block(t)) for t in texts if t]
    return []


def _raw_output(item: JsonObj) -> JsonObj | None:
    if item.get("type") == "commandExecution":
        return {"exitCode": item.get("exitCode"), "status": item.get("status")}
    if item.get("type") == "mcpToolCall":
        return {"result": item.get("result"), "error": item.get("error")}
    return {"status": item.get("status")}


def item_started(item: JsonObj, *, status: Status = "in_progress") -> ToolCallStart | None:
    """The ``tool_call`` that announces a tool item (None for any other item)."""
    if item.get("type") not in _TOOL_ITEMS:
        return None
    title, kind, raw, content, locations = _shape(item)
    return helpers.start_tool_call(str(item.get("id")), title, kind=kind, status=status, content=content or None,
                                   locations=locations or None, raw_input=raw)


def item_completed(item: JsonObj) -> ToolCallProgress | None:
    """The ``tool_call_update`` that ends a tool item: its status, output and (for a change) its diffs."""
    if item.get("type") not in _TOOL_ITEMS:
        return None
    return helpers.update_tool_call(str(item.get("id")), status=_status(item, "completed"),
                                    content=_result_content(item) or None, raw_output=_raw_output(item))


def plan_update(plan: Sequence[JsonObj]) -> AgentPlanUpdate:
    """``turn/plan/updated``'s steps as an ACP plan."""
    states: dict[str, Literal["pending", "in_progress", "completed"]] = {
        "pending": "pending", "inProgress": "in_progress", "in_progress": "in_progress", "completed": "completed"}
    return helpers.update_plan(
        PlanEntry(content=str(step.get("step", "")), priority="medium", status=states.get(str(step.get("status")), "pending"))
        for step in plan
    )


def _user_text(item: JsonObj) -> str:
    parts = [str(c.get("text", "")) for c in item.get("content") or [] if isinstance(c, dict) and c.get("type") == "text"]
    return "\n".join(p for p in parts if p)


def _reasoning_text(item: JsonObj) -> str:
    summary = [str(s) for s in item.get("summary") or []]
    return "\n\n".join(summary or [str(s) for s in item.get("content") or []])


def history_updates(turns: Sequence[JsonObj]) -> list[SessionUpdate]:
    """What ``session/load`` replays: every stored turn's items, in order, as the live turn showed them."""
    out: list[SessionUpdate] = []
    for turn in turns:
        for item in turn.get("items") or []:
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "userMessage" and (text := _user_text(item)):
                out.append(helpers.update_user_message_text(text))
            elif kind == "agentMessage" and item.get("text"):
                out.append(helpers.update_agent_message_text(str(item["text"])))
            elif kind == "reasoning" and (text := _reasoning_text(item)):
                out.append(helpers.update_agent_thought_text(text))
            elif (start := item_started(item, status=_status(item, "completed"))) is not None:
                out.append(start)
                done = item_completed(item)
                if done is not None:
                    out.append(done)
    return out


@dataclass
class TurnStream:
    """One live turn's notifications in, ACP updates out; remembers what was streamed so nothing shows twice."""

    turn_id: str
    _streamed: set[str] = field(default_factory=set)
    _output: dict[str, str] = field(default_factory=dict)

    def feed(self, method: str, params: JsonObj) -> list[SessionUpdate]:
        """The updates for one notification of this turn (others give none)."""
        if params.get("turnId", self.turn_id) != self.turn_id:
            return []
        item = obj(params.get("item"))
        item_id = str(params.get("itemId") or item.get("id") or "")
        delta = str(params.get("delta") or "")
        if method == "item/agentMessage/delta" and delta:
            self._streamed.add(item_id)
            return [helpers.update_agent_message_text(delta)]
        if method in ("item/reasoning/summaryTextDelta", "item/reasoning/textDelta") and delta:
            self._streamed.add(item_id)
            return [helpers.update_agent_thought_text(delta)]
        if method == "item/commandExecution/outputDelta" and delta:
            text = self._output[item_id] = self._output.get(item_id, "") + delta
            content = [helpers.tool_content(helpers.text_block(_fenced(text)))]
            return [helpers.update_tool_call(item_id, status="in_progress", content=content)]
        if method == "turn/plan/updated":
            return [plan_update([s for s in params.get("plan") or [] if isinstance(s, dict)])]
        if method == "item/started":
            start = item_started(item)
            return [start] if start is not None else []
        if method == "item/completed":
            return self._completed(item, item_id)
        return []

    def _completed(self, item: JsonObj, item_id: str) -> list[SessionUpdate]:
        kind = item.get("type")
        if item_id in self._streamed:  # its text came as deltas already
            return []
        if kind == "agentMessage" and item.get("text"):
            return [helpers.update_agent_message_text(str(item["text"]))]
        if kind == "reasoning" and (text := _reasoning_text(item)):
            return [helpers.update_agent_thought_text(text)]
        done = item_completed(item)
        return [done] if done is not None else []
