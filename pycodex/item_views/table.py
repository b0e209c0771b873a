"""The one table of item views: for each ThreadItem type, how each client-side view shows it.

A new item type gets one `ItemView` here (or registered from elsewhere with `ITEM_VIEWS.register`); the
renderers look items up by type and know no type names of their own.
"""

from __future__ import annotations

from collections.abc import Callable

from pycodex.item_views.registry import HumanStyle, ItemView, ItemViewRegistry, camel_to_snake
from pycodex.json_types import JsonObj

__all__ = ["ITEM_VIEWS", "OUTPUT_LINES"]

OUTPUT_LINES = 20  # command output beyond this many lines is cut in `show` and `export --format md`


# ---- pieces the views share ----------------------------------------------------------------------


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return str(content["text"])
        return f"[{content.get('type', 'input')}]"
    return ""


def _clip(text: str, lines: int = OUTPUT_LINES) -> str:
    parts = text.rstrip("\n").splitlines()
    if len(parts) <= lines:
        return "\n".join(parts)
    return "\n".join([*parts[:lines], f"... ({len(parts) - lines} more lines)"])


def _change(change: JsonObj) -> str:
    """`update a.py`, `add b.py`: a fileChange entry (`kind` is `{"type": "add"|"delete"|"update"}`)."""
    kind = change.get("kind")
    verb = kind.get("type", "") if isinstance(kind, dict) else str(kind or "")
    return f"{verb} {change.get('path', '?')}".strip()


def _summary_text(item: JsonObj) -> str:
    return "\n".join(str(s) for s in item.get("summary") or [])


def _status(item: JsonObj) -> str:
    return camel_to_snake(str(item.get("status", "inProgress")))


def _text(item: JsonObj) -> str:
    return str(item.get("text", ""))


def _field(key: str) -> Callable[[JsonObj], object]:
    return lambda item: item.get(key, "")


# ---- userMessage, agentMessage, plan, reasoning --------------------------------------------------


def _user_label(item: JsonObj) -> str:
    return " ".join(c.get("text", "") for c in item.get("content", []) if isinstance(c, dict))


def _agent_exec(item: JsonObj, new_id: Callable[[], str]) -> JsonObj:
    return {"id": new_id(), "type": "agent_message", "text": _text(item)}


def _reasoning_exec(item: JsonObj, new_id: Callable[[], str]) -> JsonObj | None:
    text = _summary_text(item)
    if not text:  # Codex shows no reasoning item without a summary
        return None
    return {"id": new_id(), "type": "reasoning", "text": text}


def _reasoning_human(item: JsonObj, style: HumanStyle) -> str:
    if style.hide_reasoning:
        return ""
    text = _summary_text(item)
    return f"{text}\n" if text else ""


# ---- commandExecution ----------------------------------------------------------------------------


def _command_summary(item: JsonObj) -> tuple[str, str]:
    exit_code = item.get("exitCode")
    head = f"$ {item.get('command', '')}  [{item.get('status', '?')}" + (
        f", exit {exit_code}" if exit_code is not None else "") + (
        f", {item['durationMs']} ms" if isinstance(item.get("durationMs"), int) else "") + "]"
    output = item.get("aggregatedOutput")
    return "command", head + ("\n" + _clip(output) if isinstance(output, str) and output.strip() else "")


def _command_exec(item: JsonObj, new_id: Callable[[], str]) -> JsonObj:
    return {
        "id": new_id(), "type": "command_execution", "command": str(item.get("command", "")),
        "aggregated_output": item.get("aggregatedOutput") or "", "exit_code": item.get("exitCode"),
        "status": _status(item),
    }


def _command_human_completed(item: JsonObj, style: HumanStyle) -> str:
    code = item.get("exitCode")
    took = f"{item.get('durationMs') or 0}ms"
    verdict = f" succeeded in {took}:" if code == 0 else f" exited {code} in {took}:"
    return f"{verdict}\n{item.get('aggregatedOutput') or ''}\n"


# ---- fileChange ----------------------------------------------------------------------------------


def _file_change_label(item: JsonObj) -> str:
    return ", ".join(str(c.get("path", "")) for c in item.get("changes", []) if isinstance(c, dict))


def _file_change_summary(item: JsonObj) -> tuple[str, str]:
    paths = ", ".join(_change(c) for c in item.get("changes") or [] if isinstance(c, dict))
    return "patch", f"{paths} [{item.get('status', '?')}]"


def _file_change_exec(item: JsonObj, new_id: Callable[[], str]) -> JsonObj:
    changes = [
        {"path": str(c.get("path", "")), "kind": str((c.get("kind") or {}).get("type", "update"))}
        for c in item.get("changes") or [] if isinstance(c, dict)
    ]
    return {"id": new_id(), "type": "file_change", "changes": changes, "status": _status(item)}


def _file_change_human_completed(item: JsonObj, style: HumanStyle) -> str:
    lines = [f"{(c.get('kind') or {}).get('type', 'update')[0].upper()} {c.get('path')}"
             for c in item.get("changes") or [] if isinstance(c, dict)]
    status = "succeeded" if item.get("status") == "completed" else str(item.get("status"))
    return f"patch: {status}\n" + "".join(f"{line}\n" for line in lines)


# ---- tool calls: mcpToolCall, dynamicToolCall, webSearch -----------------------------------------


def _tool_summary(item: JsonObj) -> tuple[str, str]:
    tool = "/".join(str(part) for part in (item.get("server"), item.get("tool", "?")) if part)
    return "tool", f"{tool} [{item.get('status', '?')}]"


def _mcp_exec(item: JsonObj, new_id: Callable[[], str]) -> JsonObj:
    return {
        "id": new_id(), "type": "mcp_tool_call", "server": item.get("server"),
        "tool": item.get("tool"), "arguments": item.get("arguments"), "result": item.get("result"),
        "error": item.get("error"), "status": _status(item),
    }


def _web_search_exec(item: JsonObj, new_id: Callable[[], str]) -> JsonObj:
    # codex exec leaves the action's unset fields out (``{"type":"search","query":"..."}``).
    action = item.get("action")
    if isinstance(action, dict):
        action = {k: v for k, v in action.items() if v is not None}
    return {"id": new_id(), "type": "web_search", "query": item.get("query", ""), "action": action}


# ---- the table -----------------------------------------------------------------------------------

ITEM_VIEWS = ItemViewRegistry([
    ItemView(
        "userMessage", trace_label=_user_label, conversation=True,
        summary=lambda item: ("user", _text_of(item.get("content"))), summary_style="bold cyan",
    ),
    ItemView(
        "agentMessage", trace_label=_field("text"), conversation=True,
        summary=lambda item: ("assistant", _text(item)), summary_style="bold green",
        human_completed=lambda item, style: f"{style.label('codex')}\n{item.get('text', '')}\n",
        exec_item=_agent_exec, answer=True,
        demo_completed=lambda item: f"  assistant: {item.get('text')}",
    ),
    ItemView("plan", trace_label=_field("text"), conversation=True),
    ItemView(
        "reasoning", trace_label=lambda item: " ".join(str(s) for s in item.get("summary", [])), conversation=True,
        summary=lambda item: ("reasoning", _text_of(item.get("summary") or item.get("content") or [])),
        summary_style="dim",
        human_completed=_reasoning_human, exec_item=_reasoning_exec,
        demo_completed=lambda item: f"  (thinking) {' '.join(item.get('summary') or [])}",
    ),
    ItemView(
        "commandExecution", trace_label=_field("command"), summary=_command_summary,
        summary_style="bold yellow", summary_block=True,
        human_started=lambda item, style: f"{style.label('exec')}\n{item.get('command')} in {item.get('cwd')}\n",
        human_completed=_command_human_completed, exec_item=_command_exec, tool_kind="command_execution",
        demo_started=lambda item: f"  $ {item.get('command')}",
        demo_completed=lambda item: f"  $ exit {item.get('exitCode')} in {item.get('durationMs')} ms",
    ),
    ItemView(
        "fileChange", trace_label=_file_change_label, summary=_file_change_summary, summary_style="bold magenta",
        human_started=lambda item, style: f"{style.label('apply patch')}\n",
        human_completed=_file_change_human_completed, exec_item=_file_change_exec, tool_kind="file_change",
    ),
    ItemView(
        "mcpToolCall", summary=_tool_summary, summary_style="bold blue", exec_item=_mcp_exec,
        tool_kind="mcp_tool_call",
    ),
    ItemView("dynamicToolCall", summary=_tool_summary, summary_style="bold blue"),
    ItemView("webSearch", exec_item=_web_search_exec, tool_kind="web_search"),
    # Shown by the fallback in every view, registered so that each variant of the item union has its entry.
    ItemView("collabAgentToolCall"),
    ItemView("imageView"),
    ItemView("enteredReviewMode"),
    ItemView("exitedReviewMode"),
    ItemView("contextCompaction"),
])
