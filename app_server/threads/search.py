"""Full-text search over stored threads (thread/search, thread/search/stream) and within one thread
(thread/searchOccurrences). Matching is a case-insensitive substring test over the text of user and agent
messages, in stored order; a thread's snippet is its first matching message. As in Codex 0.169, a fork is
searched only in the messages it added itself (not those it copied from its parent) and names are not
searched. Synchronous: callers run it in a worker thread. Bounded by MAX_SCANNED threads per search."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from app_server.store import RolloutCorruptError, ThreadNotFoundError, ThreadStore
from pycodex.json_types import JsonObj

DEFAULT_LIMIT = 25
MAX_SCANNED = 5000
SNIPPET_CHARS = 200


def item_text(item: JsonObj) -> str:
    """The searchable text of a thread item: a user message's text parts or an agent message's text."""
    if item.get("type") == "userMessage":
        parts = item.get("content") or []
        return "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
    if item.get("type") == "agentMessage" and isinstance(item.get("text"), str):
        return str(item["text"])
    return ""


def snippet(text: str, start: int, end: int) -> tuple[str, int, int]:
    """A window of at most SNIPPET_CHARS around ``text[start:end]``; the match's offsets inside it."""
    if len(text) <= SNIPPET_CHARS:
        return text, start, end
    left = max(0, min(start - SNIPPET_CHARS // 4, len(text) - SNIPPET_CHARS))
    return text[left : left + SNIPPET_CHARS], start - left, min(end - left, SNIPPET_CHARS)


def turn_cursor(thread_id: str, turn_id: str) -> str:
    """A thread/turns/list cursor that starts at (and includes) ``turn_id``."""
    return json.dumps({"requestedThreadId": thread_id, "turnId": turn_id, "includeAnchor": True,
                       "scope": {"kind": "turns"}}, separators=(",", ":"))


def occurrences(thread_id: str, turns: list[JsonObj], term: str) -> list[JsonObj]:
    """Each case-insensitive occurrence of ``term`` in the turns' messages, with a snippet and turn cursor."""
    needle = term.casefold()
    found = []
    for turn in turns:
        for item in turn.get("items") or []:
            text = item_text(item)
            folded = text.casefold()
            at = folded.find(needle)
            while at >= 0:
                snip, start, end = snippet(text, at, at + len(needle))
                found.append({"turnId": turn["id"], "itemId": item.get("id"), "snippet": snip,
                              "snippetMatchRange": {"start": start, "end": end},
                              "turnCursor": turn_cursor(thread_id, str(turn["id"]))})
                at = folded.find(needle, at + max(len(needle), 1))
    return found


def _candidates(store: ThreadStore, *, archived: bool, source_kinds: list[str] | None,
                direction: str) -> Iterator[JsonObj]:
    cursor, scanned = None, 0
    while scanned < MAX_SCANNED:
        page = store.list_threads(cursor=cursor, limit=500, sort_direction=direction, archived=archived,
                                  source_kinds=source_kinds)
        yield from page.threads
        scanned += len(page.threads)
        cursor = page.next_cursor
        if cursor is None:
            return


def search_threads(store: ThreadStore, term: str, *, archived: bool, source_kinds: list[str] | None,
                   direction: str, on_match: Callable[[JsonObj], None] | None = None) -> list[JsonObj]:
    """Every matching thread as ``{"thread", "snippet"}``, in list order; ``on_match`` sees each as found."""
    needle = term.casefold()
    results = []
    for wire in _candidates(store, archived=archived, source_kinds=source_kinds, direction=direction):
        try:
            loaded = store.load_thread(wire["id"])
        except (ThreadNotFoundError, RolloutCorruptError):
            continue  # gone or damaged since it was listed: not a search result
        # a fork's copied items keep their original times, all before the fork was made
        own_since = loaded.created_at_ms if wire.get("forkedFromId") else 0
        for turn in loaded.turns:
            texts = [item_text(i) for i in turn.get("items") or [] if (i.get("startedAtMs") or 0) >= own_since]
            hit = next((t for t in texts if needle in t.casefold()), None)
            if hit is not None:
                at = hit.casefold().find(needle)
                result = {"thread": wire, "snippet": snippet(hit, at, at + len(needle))[0]}
                results.append(result)
                if on_match is not None:
                    on_match(result)
                break
    return results


def page(results: list[JsonObj], cursor: str | None, limit: int | None) -> JsonObj:
    """Offset pages; the cursor is the offset as a string (opaque to clients)."""
    start = int(cursor) if cursor else 0
    size = limit or DEFAULT_LIMIT
    data = results[start : start + size]
    more = start + size < len(results)
    return {"data": data, "nextCursor": str(start + size) if more else None,
            "backwardsCursor": str(start) if data else None}
