"""The field converters of ``codex_items``: Codex 0.169's core values (snake_case enums, ``{secs, nanos}``
durations, ``file://`` URIs, argv lists, per-variant extras) to and from their v2 forms.

Pure functions, one per value kind or per variant's extra fields; ``app_server/store/codex_items.py`` holds
the variant table that says which applies where (its docstring says what each mapping loses).
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from app_server.shell_words import join_argv, split_command
from pycodex.json_types import JsonObj, JsonValue

__all__ = [
    "action_from_core",
    "action_to_core",
    "agent_state_from_core",
    "agent_state_to_core",
    "camel",
    "changes_from_core",
    "changes_to_core",
    "citation_from_core",
    "citation_to_core",
    "command_extra_from_core",
    "command_extra_to_core",
    "duration",
    "input_from_core",
    "input_to_core",
    "mcp_extra_from_core",
    "mcp_extra_to_core",
    "millis",
    "path",
    "saved_path",
    "search_action_from_core",
    "search_action_to_core",
    "snake",
    "some",
    "uri",
    "user_extra_to_core",
]

_NANOS_PER_MS = 1_000_000
_MOVED_TO = "\n\nMoved to: "


def snake(name: str) -> str:
    """``camelCase`` -> ``snake_case`` (a core enum value)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def camel(name: str) -> str:
    """``snake_case`` -> ``camelCase`` (a v2 enum value)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def some(**fields: JsonValue) -> JsonObj:
    """The fields that are set: Codex's core structs skip their None options when they serialize."""
    return {key: value for key, value in fields.items() if value is not None}


# ---- paths, durations, commands -----------------------------------------------------------------


def uri(path: str) -> str:
    """A path as the ``file://`` URI core writes."""
    # Codex's PathUri: a file URL, with what a URL path cannot hold percent-encoded.
    return "file://" + quote(path, safe="/!$&'()*+,-.:;=@_~")


def path(uri: str) -> str:
    """A core ``file://`` URI as a path."""
    return unquote(uri.removeprefix("file://"))


def duration(ms: int | None) -> JsonObj | None:
    """``durationMs`` as core's ``{secs, nanos}``."""
    return None if ms is None else {"secs": ms // 1000, "nanos": ms % 1000 * _NANOS_PER_MS}


def millis(duration: JsonObj | None) -> int | None:
    """Core's ``{secs, nanos}`` as ``durationMs``."""
    # Rust's Duration::as_millis: whole milliseconds, truncated.
    return None if duration is None else duration["secs"] * 1000 + duration["nanos"] // _NANOS_PER_MS


# ---- user input, command actions, file changes, statuses ---------------------------------------


def input_from_core(entry: JsonObj) -> JsonObj:
    """One core user-input entry as a v2 ``UserInput``."""
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


def input_to_core(entry: JsonObj) -> JsonObj | None:
    """One v2 ``UserInput`` as core writes it (None: core has no such input)."""
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
            else some(type="image", image_url=entry["url"], detail=entry.get("detail"))
        )
    if kind == "localImage":
        return some(type="local_image", path=entry["path"], detail=entry.get("detail"))
    if kind == "localAudio":
        return {"type": "local_audio", "path": entry["path"]}
    if kind == "audio":
        return None
    return dict(entry)


def action_from_core(parsed: JsonObj, cwd: str) -> JsonObj:
    """A core parsed command as a v2 ``commandActions`` entry."""
    kind = camel(str(parsed.get("type")))
    action = {"type": kind, "command": parsed["cmd"]}
    action.update({k: v for k, v in parsed.items() if k not in ("type", "cmd")})
    if kind == "read":  # core keeps the path as written; v2 resolves it against the cwd
        action["path"] = (
            parsed["path"] if parsed["path"].startswith("/") else f"{cwd.rstrip('/')}/{parsed['path']}"
        )
    return action


def action_to_core(action: JsonObj, cwd: str) -> JsonObj:
    """A v2 ``commandActions`` entry as core's parsed command."""
    parsed = {"type": snake(str(action.get("type"))), "cmd": action["command"]}
    parsed.update({k: v for k, v in action.items() if k not in ("type", "command")})
    prefix = cwd.rstrip("/") + "/"
    if parsed["type"] == "read" and parsed["path"].startswith(prefix):
        parsed["path"] = parsed["path"][len(prefix) :]
    return parsed


def changes_from_core(changes: JsonObj) -> list[JsonObj]:
    """Core's ``{path: change}`` map as v2 ``changes``."""
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


def changes_to_core(changes: list[JsonObj]) -> JsonObj:
    """v2 ``changes`` as core's ``{path: change}`` map."""
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


def agent_state_from_core(status: JsonValue) -> JsonObj:
    """A core sub-agent status as a v2 ``CollabAgentState``."""
    # Core AgentStatus: a bare name, or {"completed": message} / {"errored": message}.
    if isinstance(status, dict):
        ((name, message),) = status.items()
        return {"status": camel(name), "message": message}
    return {"status": camel(str(status)), "message": None}


def agent_state_to_core(state: JsonObj) -> JsonValue:
    """A v2 ``CollabAgentState`` as core's status."""
    name = snake(state["status"])
    return {name: state.get("message")} if name in ("completed", "errored") else name


def search_action_from_core(action: JsonObj) -> JsonObj:
    """A core web-search action as the v2 one."""
    kind = camel(str(action.get("type")))
    # v2 lists every field of its variant, null when unset (core skips them).
    fields = {"search": ("query", "queries"), "openPage": ("url",), "findInPage": ("url", "pattern")}
    return {"type": kind, **{k: action.get(k) for k in fields.get(kind, ())}}


def search_action_to_core(action: JsonObj | None) -> JsonObj:
    """A v2 web-search action as core's."""
    if action is None:
        return {"type": "other"}
    return {"type": snake(str(action["type"])), **some(**{k: v for k, v in action.items() if k != "type"})}


def user_extra_to_core(v: JsonObj) -> JsonObj:
    """A userMessage's content as core writes it."""
    return {"content": [e for e in (input_to_core(entry) for entry in v["content"]) if e is not None]}


def citation_from_core(cited: JsonObj | None) -> JsonObj | None:
    """A core memory citation as the v2 one."""
    if cited is None:
        return None
    entries = [
        {"path": e["path"], "lineStart": e["line_start"], "lineEnd": e["line_end"], "note": e["note"]}
        for e in cited["entries"]
    ]
    return {"entries": entries, "threadIds": cited["rollout_ids"]}


def citation_to_core(cited: JsonObj | None) -> JsonObj:
    """A v2 memory citation as core's."""
    if cited is None:
        return {}
    entries = [
        {"path": e["path"], "line_start": e["lineStart"], "line_end": e["lineEnd"], "note": e["note"]}
        for e in cited["entries"]
    ]
    return {"memory_citation": {"entries": entries, "rollout_ids": cited["threadIds"]}}


def command_extra_from_core(c: JsonObj) -> JsonObj:
    """A commandExecution's fields that need code, from core."""
    cwd = path(c["cwd"])
    return {
        "command": join_argv(c["command"]),
        "cwd": cwd,
        "commandActions": [action_from_core(p, cwd) for p in c["parsed_cmd"]],
        "aggregatedOutput": c.get("aggregated_output") or None,  # Codex shows an empty output as null
    }


def command_extra_to_core(v: JsonObj) -> JsonObj:
    """A commandExecution's fields that need code, to core."""
    return {
        "command": split_command(v["command"]),
        "cwd": uri(v["cwd"]),
        "parsed_cmd": [action_to_core(a, v["cwd"]) for a in v["commandActions"]],
        **some(aggregated_output=v.get("aggregatedOutput")),
    }


def mcp_extra_from_core(c: JsonObj) -> JsonObj:
    """An mcpToolCall's fields that need code, from core."""
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


def mcp_extra_to_core(v: JsonObj) -> JsonObj:
    """An mcpToolCall's fields that need code, to core."""
    context = v.get("appContext") or {}
    result = v.get("result")
    extra = some(
        connectorId=context.get("connectorId"),
        linkId=context.get("linkId"),
        mcpAppResourceUri=v.get("mcpAppResourceUri", context.get("resourceUri")),
        appName=context.get("appName"),
        actionName=context.get("actionName"),
    )
    if result is not None:
        # v2 drops the MCP result's isError; Codex marks the call failed exactly when it is set.
        extra["result"] = {"content": result["content"], "isError": v["status"] == "failed"} | some(
            structuredContent=result.get("structuredContent"), _meta=result.get("_meta")
        )
    return extra


def saved_path(c: JsonObj) -> JsonObj:
    """An imageView's path, from core."""
    return some(savedPath=c.get("saved_path"))  # v2 skips savedPath when unset
