"""Stored threads (v2 wire dicts with turns) as readable text: one line per item, markdown or rich markup."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from pycodex.json_types import JsonObj

__all__ = ["item_summary", "thread_markdown", "timestamp", "turn_heading"]

OUTPUT_LINES = 20  # command output beyond this many lines is cut in `show` and `export --format md`


def timestamp(seconds: object) -> str:
    if not isinstance(seconds, int | float) or seconds <= 0:
        return "-"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


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


def item_summary(item: JsonObj) -> tuple[str, str]:
    """(label, body) of one thread item; unknown types fall back to their JSON."""
    kind = str(item.get("type", "?"))
    if kind == "userMessage":
        return "user", _text_of(item.get("content"))
    if kind == "agentMessage":
        return "assistant", str(item.get("text", ""))
    if kind == "reasoning":
        return "reasoning", _text_of(item.get("summary") or item.get("content") or [])
    if kind == "commandExecution":
        exit_code = item.get("exitCode")
        head = f"$ {item.get('command', '')}  [{item.get('status', '?')}" + (
            f", exit {exit_code}" if exit_code is not None else "") + (
            f", {item['durationMs']} ms" if isinstance(item.get("durationMs"), int) else "") + "]"
        output = item.get("aggregatedOutput")
        return "command", head + ("\n" + _clip(output) if isinstance(output, str) and output.strip() else "")
    if kind == "fileChange":
        paths = ", ".join(_change(c) for c in item.get("changes") or [] if isinstance(c, dict))
        return "patch", f"{paths} [{item.get('status', '?')}]"
    if kind in ("mcpToolCall", "dynamicToolCall"):
        tool = "/".join(str(part) for part in (item.get("server"), item.get("tool", "?")) if part)
        return "tool", f"{tool} [{item.get('status', '?')}]"
    rest = {k: v for k, v in item.items() if k not in ("type", "id")}
    return kind, json.dumps(rest, ensure_ascii=False)[:400]


def turn_heading(turn: JsonObj) -> str:
    duration = turn.get("durationMs")
    took = f", {duration / 1000:.1f} s" if isinstance(duration, int | float) else ""
    error = turn.get("error")
    failed = f" - error: {error.get('message')}" if isinstance(error, dict) else ""
    return f"turn {turn.get('id')} ({turn.get('status', '?')}{took}){failed}"


def thread_markdown(thread: JsonObj) -> str:
    lines = [f"# Thread {thread.get('id')}", ""]
    for label, key in (("name", "name"), ("model provider", "modelProvider"), ("cwd", "cwd"),
                       ("created", "createdAt"), ("updated", "updatedAt"), ("rollout", "path")):
        value = thread.get(key)
        if value is not None:
            shown = timestamp(value) if key in ("createdAt", "updatedAt") else value
            lines.append(f"- {label}: `{shown}`")
    for turn in thread.get("turns") or []:
        lines += ["", f"## {turn_heading(turn)}", ""]
        for item in turn.get("items") or []:
            label, body = item_summary(item)
            if label == "command":
                head, _, output = body.partition("\n")
                lines.append(f"**{label}** `{head}`")
                if output:
                    lines += ["", "```", output, "```"]
            else:
                lines.append(f"**{label}**: {body}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
