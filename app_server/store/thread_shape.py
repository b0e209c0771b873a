"""Build v2 `Thread` dicts (observed key order) from stored metadata, and derive the list preview."""

from __future__ import annotations

from pycodex.json_types import JsonObj

# The Thread keys in the order the reference server emits them.
THREAD_KEYS: tuple[str, ...] = (
    "id", "environments", "extra", "sessionId", "forkedFromId", "attachedToThreadId", "parentThreadId",
    "preview", "ephemeral", "section", "sectionEnteredAt", "projectId", "historyMode", "modelProvider", "model",
    "reasoningEffort", "createdAt", "updatedAt", "recencyAt", "status", "path", "cwd", "cliVersion", "originator",
    "source", "canAcceptDirectInput", "threadSource", "agentNickname", "agentRole", "gitInfo", "name",
    "daybreakEnabled", "turns",
)  # fmt: skip

# Keys the store derives from the stored state (or the caller fills for a loaded thread), so they are never
# taken from the caller's metadata when stored. `name` is stored: a fork starts with its source's name.
DERIVED_KEYS = frozenset(
    {"preview", "createdAt", "updatedAt", "recencyAt", "status", "path", "turns", "environments"}
)

NOT_LOADED: JsonObj = {"type": "notLoaded"}


def stored_meta(meta: JsonObj) -> JsonObj:
    """The part of a caller's thread dict that goes into session_meta."""
    return {k: v for k, v in meta.items() if k not in DERIVED_KEYS}


def build_thread(
    meta: JsonObj,
    *,
    thread_id: str,
    path: str | None,
    preview: str,
    name: str | None,
    created_at_ms: int,
    updated_at_ms: int,
    turns: list[JsonObj] | None = None,
    status: JsonObj | None = None,
) -> JsonObj:
    """A full Thread dict with exactly the wire keys; other keys in `meta` (e.g. stored instructions) stay out."""
    values: JsonObj = {
        **meta,
        "id": thread_id,
        "sessionId": meta.get("sessionId") or thread_id,
        "environments": None,  # only a loaded thread has live environments; the caller fills them
        "preview": preview,
        "ephemeral": bool(meta.get("ephemeral", False)),
        "historyMode": meta.get("historyMode", "paginated"),
        "createdAt": created_at_ms // 1000,
        "updatedAt": updated_at_ms // 1000,
        "recencyAt": updated_at_ms // 1000,
        "status": dict(status) if status is not None else dict(NOT_LOADED),
        "path": path,
        "name": name,
        "turns": turns if turns is not None else [],
    }
    return {key: values.get(key) for key in THREAD_KEYS}


def preview_of(item: JsonObj) -> str | None:
    """The preview text a userMessage item contributes, or None for other items / no text."""
    if item.get("type") != "userMessage":
        return None
    content = item.get("content")
    if not isinstance(content, list):
        return None
    texts = [
        part["text"]
        for part in content
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
    ]
    text = "\n".join(t for t in texts if t)
    return text or None
