"""The ``webSearch`` thread item of a hosted ``web_search_call``, as Codex 0.169 builds it.

The Responses API announces a search (``output_item.added``) before it knows what it does: Codex then
starts the item with an empty query and an ``other`` action, and completes it from the finished call, whose
``action`` (``search``, ``open_page`` or ``find_in_page``) becomes the item's action in camelCase with
every field present, and whose short description becomes ``query``. ``results`` stays null (the API sends
none). The raw call goes back to the model as history unchanged.
"""

from __future__ import annotations

from pycodex.json_types import JsonObj, JsonValue

__all__ = ["WEB_SEARCH_CALL", "web_search_action", "web_search_item", "web_search_query"]

WEB_SEARCH_CALL = "web_search_call"


def _opt_str(value: JsonValue | None) -> str | None:
    return value if isinstance(value, str) else None


def web_search_action(raw: JsonValue | None) -> JsonObj:
    """The item's ``action`` for the call's ``action`` (``{"type": "other"}`` when absent or unknown)."""
    if not isinstance(raw, dict):
        return {"type": "other"}
    kind = raw.get("type")
    if kind == "search":
        queries = raw.get("queries")
        listed = [q for q in queries if isinstance(q, str)] if isinstance(queries, list) else None
        return {"type": "search", "query": _opt_str(raw.get("query")), "queries": listed}
    if kind in ("open_page", "openPage"):
        return {"type": "openPage", "url": _opt_str(raw.get("url"))}
    if kind in ("find_in_page", "findInPage"):
        return {"type": "findInPage", "url": _opt_str(raw.get("url")), "pattern": _opt_str(raw.get("pattern"))}
    return {"type": "other"}


def web_search_query(action: JsonObj) -> str:
    """The short text Codex shows for ``action``: the query, the page, or ``'pattern' in url``."""
    kind = action.get("type")
    if kind == "search":
        query = _opt_str(action.get("query"))
        if query:
            return query
        queries = action.get("queries")
        listed = [q for q in queries if isinstance(q, str)] if isinstance(queries, list) else []
        first = listed[0] if listed else ""
        return f"{first} ..." if first and len([q for q in listed if q]) > 1 else first
    if kind == "openPage":
        return _opt_str(action.get("url")) or ""
    if kind == "findInPage":
        pattern, url = _opt_str(action.get("pattern")), _opt_str(action.get("url"))
        if pattern is not None and url is not None:
            return f"'{pattern}' in {url}"
        if pattern is not None:
            return f"'{pattern}'"
        return url or ""
    return ""


def web_search_item(item_id: str, call: JsonObj | None, *, started_at_ms: int) -> JsonObj:
    """The ``webSearch`` item for ``call`` (None: the announced search, not yet known), still open."""
    action = web_search_action(call.get("action") if call is not None else None)
    return {
        "type": "webSearch",
        "id": item_id,
        "query": web_search_query(action),
        "action": action,
        "results": None,
        "startedAtMs": started_at_ms,
        "completedAtMs": None,
    }
