"""Builders of ThreadItems: each builds the item's model from `app_server.protocol.items` and hands out its wire dict.

The model is the one declaration of an item's shape (fields, key order, nulls); a builder only fills it in.
Builders return the wire dict rather than the model because the thread runtime passes items on as dicts
(it merges updates into them, stores them and sends them) and the streaming hot path then stays free of
model copies: the model is built once per item, never per delta.
"""

from __future__ import annotations

import time

from app_server.protocol.base import to_wire
from app_server.protocol.items import (
    AgentMessageItem,
    CommandExecutionItem,
    CommandExecutionSource,
    ContextCompactionItem,
    EnteredReviewModeItem,
    ExitedReviewModeItem,
    ReasoningItem,
    UnknownCommandAction,
    UserMessageItem,
)
from app_server.shell_words import join_argv
from pycodex.json_types import JsonObj

__all__ = [
    "agent_message",
    "command_execution",
    "context_compaction",
    "now_ms",
    "reasoning",
    "review_mode",
    "shell_command_text",
    "user_input_texts",
    "user_input_to_content",
    "user_message",
]


def now_ms() -> int:
    """Wall-clock milliseconds, the unit of an item's ``startedAtMs`` / ``completedAtMs``."""
    return int(time.time() * 1000)


def user_message(item_id: str, content: list[JsonObj], *, started_at_ms: int) -> JsonObj:
    """A started ``userMessage`` item holding the turn's input ``content``.

    The content is the client's input echoed verbatim, as Codex echoes it: a round trip through the input
    models would add keys the client did not send (``detail: null`` on a localImage).
    """
    wire = to_wire(UserMessageItem(id=item_id, content=[], started_at_ms=started_at_ms))
    wire["content"] = content  # the key keeps its place in the model's order
    return wire


def agent_message(item_id: str, text: str, *, phase: str | None, started_at_ms: int) -> JsonObj:
    """A started ``agentMessage`` item (``text`` grows with the deltas until the item completes).

    ``phase`` is relayed as the model's stream names it, even a phase newer than `MessagePhase`: Codex
    passes it through, and a turn must not fail on it.
    """
    wire = to_wire(AgentMessageItem(id=item_id, text=text, started_at_ms=started_at_ms))
    wire["phase"] = phase
    return wire


def reasoning(item_id: str, *, started_at_ms: int) -> JsonObj:
    """A started ``reasoning`` item with no summary or content yet."""
    return to_wire(ReasoningItem(id=item_id, started_at_ms=started_at_ms))


def shell_command_text(argv: list[str]) -> str:
    """The ``command`` text of a commandExecution item: the argv joined as Codex joins it (shell_words)."""
    return join_argv(argv)


def command_execution(
    item_id: str,
    *,
    argv: list[str],
    user_cmd: str,
    cwd: str,
    process_id: str | None,
    source: CommandExecutionSource,
    started_at_ms: int,
) -> JsonObj:
    """A started (``inProgress``) ``commandExecution`` item for ``argv`` run in ``cwd``."""
    return to_wire(
        CommandExecutionItem(
            id=item_id,
            command=shell_command_text(argv),
            cwd=cwd,
            process_id=process_id,
            source=source,
            status="inProgress",
            command_actions=[UnknownCommandAction(command=user_cmd)],
            started_at_ms=started_at_ms,
        )
    )


def context_compaction(item_id: str, *, started_at_ms: int) -> JsonObj:
    """A started ``contextCompaction`` item."""
    return to_wire(ContextCompactionItem(id=item_id, started_at_ms=started_at_ms))


def review_mode(item_id: str, *, entered: bool, review: str, started_at_ms: int) -> JsonObj:
    """A started ``enteredReviewMode`` (``entered``) or ``exitedReviewMode`` item about ``review``."""
    model = EnteredReviewModeItem if entered else ExitedReviewModeItem
    return to_wire(model(id=item_id, review=review, started_at_ms=started_at_ms))


def user_input_to_content(inputs: list[JsonObj]) -> list[JsonObj]:
    """Echo turn input into userMessage content as Codex does (snake_case ``text_elements``, images
    with ``detail``)."""
    content: list[JsonObj] = []
    for part in inputs:
        if part.get("type") == "text":
            content.append(
                {"type": "text", "text": part.get("text", ""), "text_elements": part.get("text_elements") or []}
            )
        elif part.get("type") == "localImage":  # Codex's order, `detail` first and null when not given
            content.append({"type": "localImage", "detail": part.get("detail"), "path": part.get("path")})
        elif part.get("type") == "image" and "url" in part:
            content.append({"type": "image", "url": part["url"], "detail": part.get("detail")})
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
