"""Codex core TurnItem <-> v2 ThreadItem (interim: user and agent messages; the full table is coming)."""

from __future__ import annotations

from pycodex.json_types import JsonObj


def core_from_v2(item: JsonObj) -> JsonObj | None:
    """Codex 0.169's core item for a v2 item, or None when Codex has none for its type."""
    kind = item.get("type")
    if kind == "userMessage":
        return {"type": "UserMessage", "id": item.get("id"), "content": item.get("content") or []}
    if kind == "agentMessage":
        return {"type": "AgentMessage", "id": item.get("id"), "content": [{"type": "Text", "text": item.get("text")}]}
    return None


def v2_from_core(core: JsonObj) -> JsonObj | None:
    """The v2 item Codex's thread/read gives for a core item, or None for an unknown type."""
    kind = core.get("type")
    if kind == "UserMessage":
        return {"type": "userMessage", "id": core.get("id"), "clientId": core.get("client_id"),
                "content": core.get("content") or []}
    if kind == "AgentMessage":
        text = "".join(c.get("text", "") for c in core.get("content") or [] if isinstance(c, dict))
        return {"type": "agentMessage", "moderation": None, "id": core.get("id"), "text": text,
                "phase": core.get("phase"), "memoryCitation": core.get("memory_citation"), "delivery": None,
                "questions": None}
    return None
