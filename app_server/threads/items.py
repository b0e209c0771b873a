"""ThreadItem dicts in wire shape (key order as Codex emits them) and their notification params.

Items are built as plain dicts: they go to the store and the wire as they are, and the streaming hot
path stays free of model validation.
"""

from __future__ import annotations

import shlex
import time

from pycodex.json_types import JsonObj

__all__ = [
    "agent_message",
    "command_execution",
    "now_ms",
    "reasoning",
    "user_message",
]


def now_ms() -> int:
    return int(time.time() * 1000)


def user_message(item_id: str, content: list[JsonObj], *, started_at_ms: int) -> JsonObj:
    return {
        "type": "userMessage",
        "id": item_id,
        "clientId": None,
        "content": content,
        "startedAtMs": started_at_ms,
        "completedAtMs": None,
    }


def agent_message(item_id: str, text: str, *, phase: str | None, started_at_ms: int) -> JsonObj:
    return {
        "type": "agentMessage",
        "moderation": None,
        "id": item_id,
        "text": text,
        "phase": phase,
        "memoryCitation": None,
        "delivery": None,
        "questions": None,
        "startedAtMs": started_at_ms,
        "completedAtMs": None,
    }


def reasoning(item_id: str, *, started_at_ms: int) -> JsonObj:
    return {
        "type": "reasoning",
        "id": item_id,
        "summary": [],
        "content": [],
        "startedAtMs": started_at_ms,
        "completedAtMs": None,
    }


def shell_command_text(argv: list[str]) -> str:
    return shlex.join(argv)


def command_execution(
    item_id: str,
    *,
    argv: list[str],
    user_cmd: str,
    cwd: str,
    process_id: str | None,
    source: str,
    started_at_ms: int,
) -> JsonObj:
    return {
        "type": "commandExecution",
        "id": item_id,
        "pluginId": None,
        "scriptPath": None,
        "command": shell_command_text(argv),
        "cwd": cwd,
        "processId": process_id,
        "source": source,
        "status": "inProgress",
        "commandActions": [{"type": "unknown", "command": user_cmd}],
        "aggregatedOutput": None,
        "exitCode": None,
        "durationMs": None,
        "startedAtMs": started_at_ms,
        "completedAtMs": None,
    }


def user_input_to_content(inputs: list[JsonObj]) -> list[JsonObj]:
    """Echo turn input into userMessage content (snake_case ``text_elements``, as Codex does)."""
    content: list[JsonObj] = []
    for part in inputs:
        if part.get("type") == "text":
            content.append(
                {"type": "text", "text": part.get("text", ""), "text_elements": part.get("text_elements") or []}
            )
        else:
            content.append(dict(part))
    return content


def user_input_texts(inputs: list[JsonObj]) -> list[str]:
    """The model-facing text parts of a turn's input."""
    texts: list[str] = []
    for part in inputs:
        kind = part.get("type")
        if kind == "text":
            texts.append(str(part.get("text", "")))
        elif kind in ("localImage", "image"):
            texts.append(f"[image: {part.get('path') or part.get('url') or part.get('fileId')}]")
        elif kind == "mention":
            texts.append(f"[mention {part.get('name')}: {part.get('path')}]")
    return texts
