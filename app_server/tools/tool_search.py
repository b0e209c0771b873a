"""tool_search: the model finds deferred tools by what they do, and may then call them.

Codex 0.169 offers the client-executed ``tool_search`` tool to models whose catalog metadata says they can
search (the gpt-5.5 family, ``tools.toolset``), and then defers every MCP tool behind it: the servers'
``mcp__<server>`` namespaces leave the request's ``tools`` (``threads.tool_policy.defers_mcp_tools``). Facts
recorded from the binary (tests/data/tools/codex_0169_tool_search.json, scripts/capture_tool_search.py):

* the model's call is an output item ``{"type": "tool_search_call", "call_id", "execution": "client",
  "arguments": {"query", "limit"}}`` (``arguments`` is an object, not a JSON string);
* the answer is an input item ``{"type": "tool_search_output", "id": "tso_<uuid7>", "call_id", "status":
  "completed", "execution": "client", "tools": [...]}``: the matches as ``namespace`` specs, one per
  server, in rank order, each function marked ``defer_loading: true``;
* matched tools never join later requests' ``tools``: they live in that history item, and the model calls
  them as ordinary namespaced function calls, which run as MCP calls do (``tools.mcp_tool``);
* ``limit`` defaults to 8 (also when it is null); a query that matches nothing, and every bad argument (no query, a blank one, a
  non-string, ``limit`` 0, negative or a float, arguments that are not an object), get the same answer
  as no match: ``tools: []`` with status ``completed``. Codex has error texts for some of these but the
  output item carries no text, so the model never sees them;
* the client sees nothing of a search: no thread item, no notification (the MCP call that follows is an
  ordinary ``mcpToolCall`` item);
* the model is told which namespaces are deferred: a ``<tools>`` part ends the thread's first developer
  context message, naming the namespaces of the servers ready by then (the turn waits for them first, as for
  its tool list), and a later turn gets a developer message when that list changed (``tools_section``).

Ranking is Okapi BM25 (k1 1.2, b 0.75) over each tool's search text (``mcp.tools.search_text``: names,
server, title, description, parameter names), as Codex ranks with the ``bm25`` crate; only tools sharing
a term with the query are returned. This module carries its own small BM25 rather than a library: the
maintained Python ones (``bm25s``, ``rank-bm25``) bring numpy/scipy for corpora of a few dozen short
texts, and neither tokenizes as Codex does, which matters more here than scoring speed. The tokenizer
follows the crate's default in kind: ASCII-folded lower case, word runs (``_`` joins a word, so
``mcp__calc__add`` is one term), English stop words dropped, a light suffix stemmer. Scores that tie are
ordered by the tools' order (server, then tool name); Codex's order among ties is not stable.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app_server.store import new_uuid7
from app_server.tools.contracts import ToolOutcome
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.mcp.service import ThreadMcp
    from app_server.threads.sampling import ToolCall
    from app_server.tools.contracts import ToolContext

__all__ = [
    "DEFAULT_LIMIT",
    "TOOLS_TAG",
    "Bm25Index",
    "DeferredTool",
    "deferred_tools",
    "handle_tool_search",
    "search_output",
    "tokens",
    "tools_section",
]

DEFAULT_LIMIT = 8
#: The tag of the developer part naming the deferred namespaces (as Codex tags it).
TOOLS_TAG = "<tools>"
_K1 = 1.2
_B = 0.75

# A common English stop-word list (the kind the bm25 crate drops); what matters is that a query's filler
# words ("the", "a", "for") neither match every tool nor outweigh the words that say what the tool does.
_STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
now of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself yourselves
""".split())
_WORD = re.compile(r"\w+")


def _stem(word: str) -> str:
    """A light English suffix stemmer: plurals, -ing, -ed and -ly, so "adds", "adding" and "added" meet
    "add". Stems need not be words; query and tools go through the same function."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # "adding" -> "add", "running" -> "run"
            break
    return word


def tokens(text: str) -> list[str]:
    """The search terms of ``text``: folded to ASCII, lower case, word runs, stop words dropped, stemmed."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return [_stem(word) for word in _WORD.findall(folded) if word not in _STOP_WORDS]


@dataclass(frozen=True, slots=True)
class DeferredTool:
    """One tool held back from ``tools``: the spec tool_search hands out (a one-function ``namespace``)
    and the text it is found by."""

    spec: JsonObj
    search_text: str


class Bm25Index:
    """Okapi BM25 over a fixed list of documents (the deferred tools' search texts)."""

    def __init__(self, documents: Sequence[str]) -> None:
        self._docs = [Counter(tokens(doc)) for doc in documents]
        self._lengths = [sum(doc.values()) for doc in self._docs]
        self._avg = (sum(self._lengths) / len(self._lengths)) if self._lengths else 0.0
        df: Counter[str] = Counter()
        for doc in self._docs:
            df.update(doc.keys())
        n = len(self._docs)
        self._idf = {term: math.log(1 + (n - count + 0.5) / (count + 0.5)) for term, count in df.items()}

    def search(self, query: str, limit: int) -> list[int]:
        """The indexes of the at most ``limit`` best documents sharing a term with ``query``, best first."""
        terms = set(tokens(query)) & self._idf.keys()
        scored: list[tuple[float, int]] = []
        for index, (doc, length) in enumerate(zip(self._docs, self._lengths, strict=True)):
            norm = _K1 * (1 - _B + _B * length / self._avg) if self._avg else _K1
            score = sum(self._idf[t] * doc[t] * (_K1 + 1) / (doc[t] + norm) for t in terms if t in doc)
            if score > 0:
                scored.append((score, index))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [index for _, index in scored[:limit]]


def _coalesce(specs: Sequence[JsonObj]) -> list[JsonObj]:
    """Matches of one namespace merged into one spec at its first match's place, tools in rank order."""
    merged: dict[str, JsonObj] = {}
    for spec in specs:
        name = str(spec.get("name"))
        if name in merged:
            merged[name]["tools"].extend(spec.get("tools", []))
        else:
            merged[name] = {**spec, "tools": list(spec.get("tools", []))}
    return list(merged.values())


def _parse(arguments: str) -> tuple[str, int] | None:
    """(query, limit) from the call's arguments, or None for anything Codex cannot search with."""
    try:
        args = json.loads(arguments) if arguments.strip() else None
    except ValueError:
        return None
    if not isinstance(args, dict):
        return None
    query, limit = args.get("query"), args.get("limit", DEFAULT_LIMIT)
    if not isinstance(query, str) or not query.strip():
        return None
    if limit is None:
        limit = DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:  # 2.0 too (recorded)
        return None
    return query.strip(), limit


def search_output(call_id: str, tools: Sequence[DeferredTool], arguments: str) -> JsonObj:
    """The ``tool_search_output`` item answering a search with ``arguments`` over ``tools``."""
    found: list[JsonObj] = []
    parsed = _parse(arguments)
    if parsed is not None and tools:
        query, limit = parsed
        hits = Bm25Index([tool.search_text for tool in tools]).search(query, limit)
        found = _coalesce([tools[index].spec for index in hits])
    return {"type": "tool_search_output", "id": f"tso_{new_uuid7()}", "call_id": call_id,
            "status": "completed", "execution": "client", "tools": found}


def deferred_tools(mcp: ThreadMcp | None) -> list[DeferredTool]:
    """What a thread with MCP servers ``mcp`` holds back from ``tools``: the ready servers' tools. Codex
    defers its ``multi_agent_v1`` namespace here too for the gpt-5.5 family (recorded: "spawn agent" finds
    it); pycodex does not yet (those models get no sub-agent tools at all)."""
    manager = mcp.manager if mcp is not None else None
    if manager is None:
        return []
    return [DeferredTool(spec, text) for spec, text in manager.deferred_tools()]


def tools_section(mcp: ThreadMcp | None, *, previously: str | None) -> str | None:
    """The ``<tools>`` developer text naming the deferred namespaces, when the model should get it now:
    the first time there are any, and again whenever the list differs from ``previously`` (the last one
    it got). Codex opens the thread's developer context with such a part and later tells what was added or
    removed; pycodex re-sends the whole list. The prose is pycodex's own."""
    namespaces = sorted({str(tool.spec.get("name")) for tool in deferred_tools(mcp)})
    if not namespaces and previously is None:
        return None
    body = ("Tool namespaces held back from the tool list (tool_search finds their tools):\n"
            + "\n".join(f"- {name}" for name in namespaces)) if namespaces else \
        "No tool namespaces are held back from the tool list now."
    text = f"{TOOLS_TAG}\n{body}\n</tools>"
    return None if text == previously else text


async def handle_tool_search(ctx: ToolContext, call: ToolCall) -> ToolOutcome:
    """Answer a ``tool_search_call`` with the deferred tools that match it (no thread item, as Codex)."""
    return ToolOutcome(search_output(call.call_id, deferred_tools(ctx.thread.services.mcp), call.arguments))
