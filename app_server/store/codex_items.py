"""Codex 0.169's core TurnItem (what its rollouts hold) <-> the app-server v2 ThreadItem pycodex uses.

A rollout's `item_completed` record carries a core item: PascalCase `type`, mostly snake_case fields,
durations as `{secs, nanos}`, paths as `file://` URIs, commands as argv lists. :func:`v2_from_core` gives
the v2 item Codex's own thread/read answers for it (without startedAtMs/completedAtMs: the caller takes
those from the record); :func:`core_from_v2` gives the core item Codex would have written for a v2 item.
Pure functions.

Checked against the binary (tests/data/storage/codex_0169, tests/data/storage/codex_items): UserMessage
(text with elements, image, local_image, skill, mention), AgentMessage (with phase), Reasoning (summary
and raw content), Plan, CommandExecution (read/list_files/search/unknown actions, completed and failed),
DynamicToolCall, CollabAgentToolCall (spawn, wait), FileChange (add, delete, update, update with move),
WebSearch, ImageView, McpToolCall (completed, failed), ContextCompaction. The other variants (HookPrompt,
SubAgentActivity, Sleep, ImageGeneration) follow Codex's source. Casing is per struct and not always the
source's: 0.169 writes CommandExecution, DynamicToolCall and CollabAgentToolCall in snake_case (the source
says camelCase) but McpToolCall in camelCase (`readOnlyHint`); the unrecorded SubAgentActivity is taken as
snake_case.

v2 -> core -> v2 is the identity except for these (the caller keeps the v2 item as an extra to keep them):

=====================  ========================================================================
v2 type                lost on the way through the core item (:data:`LOST_FIELDS`)
=====================  ========================================================================
userMessage            `audio` inputs and an image's `file_id` (no core form); 0.169 drops them
agentMessage           moderation, delivery, questions
commandExecution       pluginId, scriptPath; aggregatedOutput "" comes back null; `command` comes
                       back quoted the way Codex quotes argv (shlex crate), not as it was written
fileChange             the order of `changes` (Codex lists them sorted by path)
mcpToolCall            mcpAppUi
webSearch              results; a null action comes back as {"type": "other"}
subAgentActivity       model, reasoningEffort
imageGeneration        failure, generationId, inputImages, transparentBackground
=====================  ========================================================================

Lossless: hookPrompt, plan, reasoning, dynamicToolCall, collabAgentToolCall, imageView, sleep,
contextCompaction. No core variant (core_from_v2 gives None): enteredReviewMode, exitedReviewMode,
functionCallOutput.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, unquote

from app_server.shell_words import join_argv, split_command
from pycodex.json_types import JsonObj, JsonValue

__all__ = [
    "CORE_TYPES",
    "LOST_FIELDS",
    "MAPPED_V2_TYPES",
    "core_from_v2",
    "v2_from_core",
]

#: The v2 fields a core item cannot carry, by v2 type (the docstring's table; the tests hold us to it).
LOST_FIELDS: dict[str, tuple[str, ...]] = {
    "agentMessage": ("moderation", "delivery", "questions"),
    "commandExecution": ("pluginId", "scriptPath"),
    "mcpToolCall": ("mcpAppUi",),
    "webSearch": ("results",),
    "subAgentActivity": ("model", "reasoningEffort"),
    "imageGeneration": ("failure", "generationId", "inputImages", "transparentBackground"),
}

_NANOS_PER_MS = 1_000_000
_MOVED_TO = "\n\nMoved to: "


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _some(**fields: JsonValue) -> JsonObj:
    """The fields that are set: Codex's core structs skip their None options when they serialize."""
    return {key: value for key, value in fields.items() if value is not None}


# ---- paths, durations, commands -----------------------------------------------------------------


def _uri(path: str) -> str:
    # Codex's PathUri: a file URL, with what a URL path cannot hold percent-encoded.
    return "file://" + quote(path, safe="/!$&'()*+,-.:;=@_~")


def _path(uri: str) -> str:
    return unquote(uri.removeprefix("file://"))


def _duration(ms: int | None) -> JsonObj | None:
    return None if ms is None else {"secs": ms // 1000, "nanos": ms % 1000 * _NANOS_PER_MS}


def _millis(duration: JsonObj | None) -> int | None:
    # Rust's Duration::as_millis: whole milliseconds, truncated.
    return None if duration is None else duration["secs"] * 1000 + duration["nanos"] // _NANOS_PER_MS


# ---- user input, command actions, file changes, statuses ---------------------------------------


def _input_from_core(entry: JsonObj) -> JsonObj:
    kind = entry.get("type")
    if kind == "text":
        elements = [
            {"byteRange": e["byte_range"], "placeholder": e.get("placeholder")}
            for e in entry.get("text_elements", [])
        ]
        return {"type": "text", "text": entry["text"], "text_elements": elements}
    if kind == "image":
        return {"type": "image", "url": entry["image_url"], "detail": entry.get("detail")}
    if kind == "local_image":
        return {"type": "localImage", "path": entry["path"], "detail": entry.get("detail")}
    if kind == "local_audio":
        return {"type": "localAudio", "path": entry["path"]}
    return dict(entry)  # skill, mention: the same on both sides; anything newer passes through


def _input_to_core(entry: JsonObj) -> JsonObj | None:
    kind = entry.get("type")
    if kind == "text":
        elements = [
            {"byte_range": e["byteRange"], "placeholder": e.get("placeholder")}
            for e in entry.get("text_elements", [])
        ]
        return {"type": "text", "text": entry["text"], "text_elements": elements}
    if kind == "image":
        return (
            None
            if entry.get("url") is None
            else _some(type="image", image_url=entry["url"], detail=entry.get("detail"))
        )
    if kind == "localImage":
        return _some(type="local_image", path=entry["path"], detail=entry.get("detail"))
    if kind == "localAudio":
        return {"type": "local_audio", "path": entry["path"]}
    if kind == "audio":
        return None
    return dict(entry)


def _action_from_core(parsed: JsonObj, cwd: str) -> JsonObj:
    kind = _camel(str(parsed.get("type")))
    action = {"type": kind, "command": parsed["cmd"]}
    action.update({k: v for k, v in parsed.items() if k not in ("type", "cmd")})
    if kind == "read":  # core keeps the path as written; v2 resolves it against the cwd
        action["path"] = (
            parsed["path"] if parsed["path"].startswith("/") else f"{cwd.rstrip('/')}/{parsed['path']}"
        )
    return action


def _action_to_core(action: JsonObj, cwd: str) -> JsonObj:
    parsed = {"type": _snake(str(action.get("type"))), "cmd": action["command"]}
    parsed.update({k: v for k, v in action.items() if k not in ("type", "command")})
    prefix = cwd.rstrip("/") + "/"
    if parsed["type"] == "read" and parsed["path"].startswith(prefix):
        parsed["path"] = parsed["path"][len(prefix) :]
    return parsed


def _changes_from_core(changes: JsonObj) -> list[JsonObj]:
    out = []
    for path in sorted(changes):  # Codex's HashMap, listed in path order
        change = changes[path]
        kind = change.get("type")
        if kind == "update":
            moved = change.get("move_path")
            diff = change.get("unified_diff", "") + (f"{_MOVED_TO}{moved}" if moved else "")
            out.append({"path": path, "kind": {"type": "update", "move_path": moved}, "diff": diff})
        else:
            out.append({"path": path, "kind": {"type": kind}, "diff": change.get("content", "")})
    return out


def _changes_to_core(changes: list[JsonObj]) -> JsonObj:
    out: JsonObj = {}
    for change in changes:
        kind = change["kind"]
        if kind["type"] == "update":
            moved = kind.get("move_path")
            diff = change["diff"]
            if moved and diff.endswith(f"{_MOVED_TO}{moved}"):
                diff = diff[: -len(f"{_MOVED_TO}{moved}")]
            out[change["path"]] = {"type": "update", "unified_diff": diff, "move_path": moved}
        else:
            out[change["path"]] = {"type": kind["type"], "content": change["diff"]}
    return out


def _agent_state_from_core(status: JsonValue) -> JsonObj:
    # Core AgentStatus: a bare name, or {"completed": message} / {"errored": message}.
    if isinstance(status, dict):
        ((name, message),) = status.items()
        return {"status": _camel(name), "message": message}
    return {"status": _camel(str(status)), "message": None}


def _agent_state_to_core(state: JsonObj) -> JsonValue:
    name = _snake(state["status"])
    return {name: state.get("message")} if name in ("completed", "errored") else name


def _search_action_from_core(action: JsonObj) -> JsonObj:
    kind = _camel(str(action.get("type")))
    # v2 lists every field of its variant, null when unset (core skips them).
    fields = {"search": ("query", "queries"), "openPage": ("url",), "findInPage": ("url", "pattern")}
    return {"type": kind, **{k: action.get(k) for k in fields.get(kind, ())}}


def _search_action_to_core(action: JsonObj | None) -> JsonObj:
    if action is None:
        return {"type": "other"}
    return {"type": _snake(str(action["type"])), **_some(**{k: v for k, v in action.items() if k != "type"})}


# ---- the variants ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Variant:
    """One core variant and its v2 type: fields mapped one to one (`spec`), plus what needs code (`extra_*`).

    `spec` lists fields as `v2key[=core_key][:how]` (core key: the v2 key when not given); how is nothing
    (the same value), "enum" (camelCase in v2, snake_case in core), "ms" (durationMs <-> duration), "uri"
    (path <-> file URI), "list" (a list core may omit), "req" (written to core even when null) or "v2" (v2
    only: null from core, lost towards it). Core skips its unset options: a null v2 value is not written."""

    v2: str
    core: str
    spec: str
    extra_from_core: Callable[[JsonObj], JsonObj] = lambda _core: {}
    extra_to_core: Callable[[JsonObj], JsonObj] = lambda _item: {}

    @property
    def fields(self) -> list[tuple[str, str, str]]:
        """The spec's fields as (v2 key, core key, how)."""
        out = []
        for token in self.spec.split():
            keys, _, how = token.partition(":")
            v2, _, core = keys.partition("=")
            out.append((v2, core or v2, how))
        return out


_FROM_CORE_HOW: dict[str, Callable[[JsonValue], JsonValue]] = {"enum": _camel, "ms": _millis, "uri": _path}
_TO_CORE_HOW: dict[str, Callable[[JsonValue], JsonValue]] = {"enum": _snake, "ms": _duration, "uri": _uri}


def _from_core_value(value: JsonValue, how: str) -> JsonValue:
    if how == "list":
        return [] if value is None else value
    if value is None or how == "v2":
        return None
    convert = _FROM_CORE_HOW.get(how)
    return value if convert is None else convert(value)


def _to_core_value(value: JsonValue, how: str) -> JsonValue:
    convert = _TO_CORE_HOW.get(how)
    return value if convert is None else convert(value)


def _user_extra_to_core(v: JsonObj) -> JsonObj:
    return {"content": [e for e in (_input_to_core(entry) for entry in v["content"]) if e is not None]}


def _citation_from_core(cited: JsonObj | None) -> JsonObj | None:
    if cited is None:
        return None
    entries = [
        {"path": e["path"], "lineStart": e["line_start"], "lineEnd": e["line_end"], "note": e["note"]}
        for e in cited["entries"]
    ]
    return {"entries": entries, "threadIds": cited["rollout_ids"]}


def _citation_to_core(cited: JsonObj | None) -> JsonObj:
    if cited is None:
        return {}
    entries = [
        {"path": e["path"], "line_start": e["lineStart"], "line_end": e["lineEnd"], "note": e["note"]}
        for e in cited["entries"]
    ]
    return {"memory_citation": {"entries": entries, "rollout_ids": cited["threadIds"]}}


def _command_extra_from_core(c: JsonObj) -> JsonObj:
    cwd = _path(c["cwd"])
    return {
        "command": join_argv(c["command"]),
        "cwd": cwd,
        "commandActions": [_action_from_core(p, cwd) for p in c["parsed_cmd"]],
        "aggregatedOutput": c.get("aggregated_output") or None,  # Codex shows an empty output as null
    }


def _command_extra_to_core(v: JsonObj) -> JsonObj:
    return {
        "command": split_command(v["command"]),
        "cwd": _uri(v["cwd"]),
        "parsed_cmd": [_action_to_core(a, v["cwd"]) for a in v["commandActions"]],
        **_some(aggregated_output=v.get("aggregatedOutput")),
    }


def _mcp_extra_from_core(c: JsonObj) -> JsonObj:
    context = (
        None
        if c.get("connectorId") is None
        else {
            "connectorId": c["connectorId"],
            "linkId": c.get("linkId"),
            "resourceUri": c.get("mcpAppResourceUri"),
            "appName": c.get("appName"),
            "actionName": c.get("actionName"),
        }
    )
    result = c.get("result")
    extra: JsonObj = {
        "appContext": context,
        "result": None
        if result is None
        else {
            "content": result["content"],
            "structuredContent": result.get("structuredContent"),
            "_meta": result.get("_meta"),
        },
    }
    if c.get("mcpAppResourceUri") is not None:  # v2 skips this deprecated field when unset
        extra["mcpAppResourceUri"] = c["mcpAppResourceUri"]
    return extra


def _mcp_extra_to_core(v: JsonObj) -> JsonObj:
    context = v.get("appContext") or {}
    result = v.get("result")
    extra = _some(
        connectorId=context.get("connectorId"),
        linkId=context.get("linkId"),
        mcpAppResourceUri=v.get("mcpAppResourceUri", context.get("resourceUri")),
        appName=context.get("appName"),
        actionName=context.get("actionName"),
    )
    if result is not None:
        # v2 drops the MCP result's isError; Codex marks the call failed exactly when it is set.
        extra["result"] = {"content": result["content"], "isError": v["status"] == "failed"} | _some(
            structuredContent=result.get("structuredContent"), _meta=result.get("_meta")
        )
    return extra


def _saved_path(c: JsonObj) -> JsonObj:
    return _some(savedPath=c.get("saved_path"))  # v2 skips savedPath when unset


_VARIANTS = (
    _Variant(
        "userMessage",
        "UserMessage",
        "id clientId=client_id",
        lambda c: {"content": [_input_from_core(e) for e in c["content"]]},
        _user_extra_to_core,
    ),
    _Variant("hookPrompt", "HookPrompt", "id fragments:list"),
    _Variant(
        "agentMessage",
        "AgentMessage",
        "moderation:v2 id phase delivery:v2 questions:v2",
        lambda c: {
            "text": "".join(part.get("text", "") for part in c["content"]),
            "memoryCitation": _citation_from_core(c.get("memory_citation")),
        },
        lambda v: {
            "content": [{"type": "Text", "text": v["text"]}],
            **_citation_to_core(v.get("memoryCitation")),
        },
    ),
    _Variant("plan", "Plan", "id text"),
    _Variant(
        "reasoning",
        "Reasoning",
        "id summary=summary_text:list content=raw_content:list",
    ),
    _Variant(
        "commandExecution",
        "CommandExecution",
        "id pluginId:v2 scriptPath:v2 processId=process_id source:enum status:enum exitCode=exit_code"
        " durationMs=duration:ms",
        _command_extra_from_core,
        _command_extra_to_core,
    ),
    # 0.169 writes DynamicToolCall and CollabAgentToolCall in snake_case, enum values too (`spawn_agent`,
    # `pending_init`), but McpToolCall in camelCase (all recorded). SubAgentActivity is taken as snake_case.
    _Variant(
        "dynamicToolCall",
        "DynamicToolCall",
        "id namespace tool arguments:req status:enum contentItems=content_items success"
        " durationMs=duration:ms",
    ),
    _Variant(
        "collabAgentToolCall",
        "CollabAgentToolCall",
        "id tool:enum status:enum senderThreadId=sender_thread_id receiverThreadIds=receiver_thread_ids:list"
        " prompt model reasoningEffort=reasoning_effort",
        lambda c: {
            "agentsStates": {t: _agent_state_from_core(s) for t, s in c.get("agents_states", {}).items()}
        },
        # The sub-agents' nicknames (receiver_agents) are not in v2.
        lambda v: {
            "receiver_agents": [],
            "agents_states": {t: _agent_state_to_core(s) for t, s in v["agentsStates"].items()},
        },
    ),
    _Variant(
        "subAgentActivity",
        "SubAgentActivity",
        "id kind:enum agentThreadId=agent_thread_id agentPath=agent_path model:v2 reasoningEffort:v2",
    ),
    _Variant(
        "webSearch",
        "WebSearch",
        "id query results:v2",
        lambda c: {"action": _search_action_from_core(c["action"])},
        lambda v: {"action": _search_action_to_core(v.get("action"))},
    ),
    _Variant("imageView", "ImageView", "id path:uri"),
    _Variant("sleep", "Sleep", "id durationMs=duration_ms"),
    _Variant(
        "imageGeneration",
        "ImageGeneration",
        "id status revisedPrompt=revised_prompt transparentBackground:v2 failure:v2 generationId:v2",
        # v2 does not carry the image itself (core `result`, base64): the saved file is where it lives.
        _saved_path,
        lambda v: {"result": "", **_some(saved_path=v.get("savedPath"))},
    ),
    _Variant(
        "fileChange",
        "FileChange",
        "id",
        lambda c: {"changes": _changes_from_core(c["changes"]), "status": c.get("status") or "inProgress"},
        # Core PatchApplyStatus has no in-progress value: an unfinished change has none.
        lambda v: {
            "changes": _changes_to_core(v["changes"]),
            **_some(status=None if v["status"] == "inProgress" else v["status"]),
        },
    ),
    _Variant(
        "mcpToolCall",
        "McpToolCall",
        "id server tool status arguments:req mcpAppUi:v2 pluginId readOnlyHint error durationMs=duration:ms",
        _mcp_extra_from_core,
        _mcp_extra_to_core,
    ),
    _Variant("contextCompaction", "ContextCompaction", "id"),
)
_BY_CORE = {variant.core: variant for variant in _VARIANTS}
_BY_V2 = {variant.v2: variant for variant in _VARIANTS}

#: The core TurnItem types of Codex 0.169, and the v2 types that have one.
CORE_TYPES: tuple[str, ...] = tuple(_BY_CORE)
MAPPED_V2_TYPES: tuple[str, ...] = tuple(_BY_V2)


def v2_from_core(core: JsonObj) -> JsonObj | None:
    """The v2 ThreadItem Codex 0.169's thread/read shows for a core TurnItem (None: not a core type we know).

    startedAtMs/completedAtMs are not part of it: they live on the rollout record, not the item."""
    variant = _BY_CORE.get(str(core.get("type")))
    if variant is None:
        return None
    item: JsonObj = {"type": variant.v2}
    item.update({v2: _from_core_value(core.get(key), how) for v2, key, how in variant.fields})
    return item | variant.extra_from_core(core)


def core_from_v2(item: JsonObj) -> JsonObj | None:
    """The core TurnItem Codex 0.169 writes for a v2 ThreadItem (None: Codex has no core variant for it).

    The v2 fields listed in :data:`LOST_FIELDS` (and the few value changes the module docstring lists) do not
    survive; startedAtMs/completedAtMs are ignored (they belong on the record)."""
    variant = _BY_V2.get(str(item.get("type")))
    if variant is None:
        return None
    core: JsonObj = {"type": variant.core}
    for v2, key, how in variant.fields:
        value = item.get(v2)
        if how != "v2" and (value is not None or how == "req"):
            core[key] = _to_core_value(value, how)
    return core | variant.extra_to_core(item)
