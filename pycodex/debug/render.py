"""Stored threads (v2 wire dicts with turns) as readable text: one line per item, markdown or rich markup."""

from __future__ import annotations

from datetime import UTC, datetime

from pycodex.item_views import ITEM_VIEWS
from pycodex.item_views.table import OUTPUT_LINES
from pycodex.json_types import JsonObj

__all__ = ["OUTPUT_LINES", "item_summary", "thread_markdown", "timestamp", "turn_heading"]


def timestamp(seconds: object) -> str:
    """A Unix time in seconds as UTC text, or ``-`` when unset."""
    if not isinstance(seconds, int | float) or seconds <= 0:
        return "-"
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def item_summary(item: JsonObj) -> tuple[str, str]:
    """(label, body) of one thread item, as its entry in the item views says; unknown types show their JSON."""
    return ITEM_VIEWS.view_of(item.get("type")).summary(item)


def turn_heading(turn: JsonObj) -> str:
    """One turn's heading: its id, status, duration and error."""
    duration = turn.get("durationMs")
    took = f", {duration / 1000:.1f} s" if isinstance(duration, int | float) else ""
    error = turn.get("error")
    failed = f" - error: {error.get('message')}" if isinstance(error, dict) else ""
    return f"turn {turn.get('id')} ({turn.get('status', '?')}{took}){failed}"


def thread_markdown(thread: JsonObj) -> str:
    """A stored thread as markdown: its metadata, then each turn's items (``threads export --format md``)."""
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
            if ITEM_VIEWS.view_of(item.get("type")).summary_block:
                head, _, output = body.partition("\n")
                lines.append(f"**{label}** `{head}`")
                if output:
                    lines += ["", "```", output, "```"]
            else:
                lines.append(f"**{label}**: {body}")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
