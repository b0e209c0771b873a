"""`fuzzyFileSearch` and its sessions, as Codex 0.169 answers them.

A search lists each root (ignore rules honoured, see walk.py), scores every file and folder against
the query (score.py) and returns the best 50, highest score first, then by path. An empty query or no
roots gives no files. A session keeps its roots' listing, so each `sessionUpdate` only re-scores; its
answer is the pair of notifications Codex sends (`sessionUpdated` with the files, then
`sessionCompleted`).

    files = fuzzy_file_search("main", ["/repo"])          # [{"root", "path", "match_type", ...}, ...]
    sessions = FuzzySessions()
    sessions.start("s1", ["/repo"]); notes = sessions.update("s1", "main"); sessions.stop("s1")

Both are synchronous and may take a while on a big tree: a handler runs them with `asyncio.to_thread`.
"""

from __future__ import annotations

import heapq
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app_server.search.score import EXACT_NAME_BONUS, score_path, subsequence_pattern
from app_server.search.walk import Entry, walk_lists
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InternalError, InvalidRequest

MATCH_LIMIT = 50
UPDATED = "fuzzyFileSearch/sessionUpdated"
COMPLETED = "fuzzyFileSearch/sessionCompleted"


#: Joins a listing's paths into one text: no path can hold a NUL.
SEPARATOR = "\0"


@dataclass(frozen=True)
class RootListing:
    """One search root's listing: its paths, whether each is a folder, and the paths lower-cased and
    joined by SEPARATOR."""

    root: str
    paths: list[str]
    dirs: list[bool]
    lowered: str  # for the pre-filter: one regex scan over it replaces a search per entry

    def candidates(self, pattern: re.Pattern[str]) -> Iterator[int]:
        """The indices of the entries whose lower-cased path ``pattern`` matches, in order. ``pattern``
        must never match across SEPARATOR and must run to the path's end (see ``to_path_end``), so
        each path matches at most once and the scan skips the rest of a matched path."""
        text = self.lowered
        index = pos = 0
        for found in pattern.finditer(text):
            start = found.start()
            index += text.count(SEPARATOR, pos, start)
            pos = start
            yield index


def to_path_end(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` extended over the rest of its path (up to SEPARATOR), for ``RootListing.candidates``."""
    return re.compile(pattern.pattern + f"[^{re.escape(SEPARATOR)}]*")


def list_root(root: str, cancelled: Callable[[], bool] = lambda: False) -> RootListing:
    """Walk ``root`` (stopping when ``cancelled`` says so) into a listing."""
    paths, dirs = walk_lists(Path(root), cancelled)
    joined = SEPARATOR.join(paths)
    # Lowering the joined text equals joining the lowered paths for ASCII; beyond it (the final sigma
    # looks at its neighbours) lower each path on its own.
    lowered = joined.lower() if joined.isascii() else SEPARATOR.join(path.lower() for path in paths)
    return RootListing(root, paths, dirs, lowered)


def search_listings(query: str, listings: Sequence[RootListing], limit: int = MATCH_LIMIT) -> list[JsonObj]:
    """The best `limit` matches across the listings, as FuzzyFileSearchResult objects."""
    if not query or SEPARATOR in query:  # no path holds a NUL
        return []
    pattern = subsequence_pattern(query, SEPARATOR)
    whole_path = to_path_end(pattern)
    lowered_query = query.lower()
    named: list[tuple[RootListing, Entry, str]] = []  # files whose own name holds the query
    others: list[tuple[RootListing, Entry, str]] = []
    for listing in listings:
        paths, dirs = listing.paths, listing.dirs
        for index in listing.candidates(whole_path):
            entry = Entry(paths[index], dirs[index])
            lowered = entry.path.lower()
            in_name = not entry.is_dir and pattern.search(lowered, lowered.rfind("/") + 1) is not None
            (named if in_name else others).append((listing, entry, lowered))
    if len(named) >= limit:
        # Name matches outrank every other match but an exact name, so the rest need no scoring.
        others = [item for item in others if item[2].rsplit("/", 1)[-1] == lowered_query]
    scored: list[tuple[int, str, list[int], RootListing, Entry]] = []
    exact: dict[bool, tuple[tuple[int, str], int]] = {}  # is_dir -> (rank key, index into scored)
    for listing, entry, lowered in named + others:
        found = score_path(query, entry.path, entry.is_dir)
        if found is None:
            continue
        if lowered.rsplit("/", 1)[-1] == lowered_query:
            key = (entry.path.count("/"), entry.path)
            if entry.is_dir not in exact or key < exact[entry.is_dir][0]:
                exact[entry.is_dir] = (key, len(scored))
        scored.append((found[0], entry.path, found[1], listing, entry))
    # Codex ranks one file and one folder named exactly like the query first. Which one it picks
    # follows its walk order; pycodex takes the shallowest (then the first by path), deterministically.
    for _, index in exact.values():
        score, path, indices, listing, entry = scored[index]
        scored[index] = (score + EXACT_NAME_BONUS, path, indices, listing, entry)
    best = heapq.nsmallest(limit, scored, key=lambda item: (-item[0], item[1]))
    return [
        {
            "root": listing.root,
            "path": entry.path,
            "match_type": "directory" if entry.is_dir else "file",
            "file_name": entry.path.rsplit("/", 1)[-1],
            "score": score,
            "indices": indices,
        }
        for score, _, indices, listing, entry in best
    ]


def fuzzy_file_search(query: str, roots: Sequence[str], limit: int = MATCH_LIMIT,
                      cancelled: Callable[[], bool] = lambda: False) -> list[JsonObj]:
    """The `fuzzyFileSearch` result's `files` (a missing root simply has no files). A search cancelled
    while it runs finds nothing, as Codex answers a search superseded by one with its cancellation token."""
    if not query or not roots:
        return []
    listings = [list_root(root, cancelled) for root in roots]
    return [] if cancelled() else search_listings(query, listings, limit)


@dataclass
class _Session:
    roots: list[str]
    listings: list[RootListing] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def listing(self) -> list[RootListing]:
        with self.lock:  # the first update lists the roots; later ones reuse the listing
            if self.listings is None:
                self.listings = [list_root(root) for root in self.roots]
            return self.listings


class FuzzySessions:
    """The fuzzy-search sessions of one connection, by client-chosen id."""

    def __init__(self) -> None:
        self._sessions: dict[str, _Session] = {}
        self._lock = threading.Lock()
        self._searches: dict[str, threading.Event] = {}  # cancellation token -> the running search's flag

    def begin_search(self, token: str) -> threading.Event:
        """A flag for a `fuzzyFileSearch` with this cancellation token; the earlier search holding the same
        token (if still running) is cancelled."""
        flag = threading.Event()
        with self._lock:
            earlier = self._searches.get(token)
            self._searches[token] = flag
        if earlier is not None:
            earlier.set()
        return flag

    def end_search(self, token: str, flag: threading.Event) -> None:
        """Forget the search holding ``token`` unless a later search has taken the token over."""
        with self._lock:
            if self._searches.get(token) is flag:  # a later search may own the token by now
                del self._searches[token]

    def start(self, session_id: str, roots: Sequence[str]) -> JsonObj:
        """`fuzzyFileSearch/sessionStart`: a session of the same id is replaced."""
        if not roots:
            raise InternalError(
                "failed to start fuzzy file search session: at least one search directory is required"
            )
        with self._lock:
            self._sessions[session_id] = _Session(list(roots))
        return {}

    def update(self, session_id: str, query: str) -> list[tuple[str, JsonObj]]:
        """`fuzzyFileSearch/sessionUpdate`: the notifications to send after the (empty) response."""
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None:
            raise InvalidRequest(f"fuzzy file search session not found: {session_id}")
        files = search_listings(query, session.listing()) if query else []
        return [
            (UPDATED, {"sessionId": session_id, "query": query, "files": files}),
            (COMPLETED, {"sessionId": session_id}),
        ]

    def stop(self, session_id: str) -> JsonObj:
        """`fuzzyFileSearch/sessionStop`: stopping an unknown session is fine."""
        with self._lock:
            self._sessions.pop(session_id, None)
        return {}

    def __len__(self) -> int:
        return len(self._sessions)
