"""What an item view is, and the registry that finds the view of an item by its ``type``.

An `ItemView` says, for one ThreadItem type, how every client-side view shows it: the trace timeline, the
``pycodex threads show/export`` text, the ``exec`` transcript, the ``exec --json`` events, the agent API's
fork events and the demo transcript. A field left at its default shows the item as the fallback does, so
`FALLBACK` (the view of a type nobody registered) is the one place that says what an unknown item looks like.

Views read the item's wire form (a `JsonObj`). The renderers are clients: they show what a server sent
(ours, a real Codex, an old trace file) and must not fail on an item that a newer or older server shapes
differently; and this layer (``pycodex`` core) may not import the models in ``app_server.protocol``. Which
types exist is still checked against the model union: a test fails for a `ThreadItem` variant with no view.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pycodex.json_types import JsonObj

__all__ = [
    "FALLBACK",
    "HumanStyle",
    "ItemView",
    "ItemViewRegistry",
    "camel_to_snake",
    "fallback_label",
    "json_summary",
]


def camel_to_snake(value: str) -> str:
    """``inProgress`` -> ``in_progress``: Codex exec's spelling of wire enums."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", value).lower()


@dataclass(frozen=True)
class HumanStyle:
    """How the ``exec`` transcript is styled: bold labels on a terminal, reasoning shown or hidden."""

    color: bool = False
    hide_reasoning: bool = False  # config `hide_agent_reasoning`, as codex exec honours it

    def label(self, text: str) -> str:
        """A section label (``exec``, ``codex``), bold when colouring."""
        return f"\x1b[1m{text}\x1b[0m" if self.color else text


def fallback_label(item: JsonObj) -> object:
    """The trace label of an item with no label of its own: its tool or name, if it has one."""
    return item.get("tool") or item.get("name") or ""


def json_summary(item: JsonObj) -> tuple[str, str]:
    """The threads-view line of an item with no summary of its own: its type and its fields as JSON."""
    rest = {k: v for k, v in item.items() if k not in ("type", "id")}
    return str(item.get("type", "?")), json.dumps(rest, ensure_ascii=False)[:400]


#: ``exec --json``: the event item, or None to show nothing. The second argument hands out the item's
#: per-process id (``item_0``...); call it only when the item is shown, so hidden items use up no number.
ExecConvert = Callable[[JsonObj, Callable[[], str]], JsonObj | None]
#: ``exec`` transcript: the text for an item's notification ("" for none).
HumanText = Callable[[JsonObj, HumanStyle], str]
#: Demo transcript: the line for an item's notification.
DemoText = Callable[[JsonObj], str]


@dataclass(frozen=True)
class ItemView:
    """How each view shows items of one ``type``; a view left at its default shows it as `FALLBACK` does."""

    type: str
    #: trace timeline: the item's label (whitespace folded and clipped by the timeline)
    trace_label: Callable[[JsonObj], object] = fallback_label
    #: trace timeline: part of the conversation (message, reasoning, plan), not a tool call
    conversation: bool = False
    #: ``pycodex threads show/export``: (label, body) of the item
    summary: Callable[[JsonObj], tuple[str, str]] = json_summary
    #: ``threads show``: the rich style of the label
    summary_style: str = "bold"
    #: ``threads export --format md``: the body's first line goes in backticks and the rest in a code block
    #: (command output), rather than the body after the label as prose
    summary_block: bool = False
    #: ``exec`` transcript at item/started and item/completed (None: nothing)
    human_started: HumanText | None = None
    human_completed: HumanText | None = None
    #: ``exec --json`` item (None: the type is not shown)
    exec_item: ExecConvert | None = None
    #: a tool call's kind as codex exec spells it (``command_execution``); tool calls are shown when they
    #: start as well as when they end (``exec --json``) and are tool events in the agent API's fork flow
    tool_kind: str | None = None
    #: the item's ``text`` is the agent's answer (``exec``'s last message, the fork's final text)
    answer: bool = False
    #: demo transcript at item/started and item/completed (None: nothing)
    demo_started: DemoText | None = None
    demo_completed: DemoText | None = None


FALLBACK = ItemView(type="")


class ItemViewRegistry:
    """The item views by type; `view_of` answers `FALLBACK` for a type with no view (or no type)."""

    def __init__(self, views: list[ItemView] | None = None) -> None:
        self._views: dict[str, ItemView] = {}
        for view in views or []:
            self.register(view)

    def register(self, view: ItemView) -> ItemView:
        """Add the view of a new type (a type has one view: registering it twice is an error)."""
        if not view.type or view.type in self._views:
            raise ValueError(f"item type {view.type!r} is empty or has a view already")
        self._views[view.type] = view
        return view

    def unregister(self, item_type: str) -> None:
        """Drop the view of ``item_type`` (for tests that register a toy type)."""
        del self._views[item_type]

    @contextmanager
    def registered(self, view: ItemView) -> Iterator[ItemView]:
        """The registry with ``view`` added for the ``with`` block."""
        self.register(view)
        try:
            yield view
        finally:
            self.unregister(view.type)

    def view_of(self, item_type: object) -> ItemView:
        """The view of items of ``item_type`` (an item's ``type`` value, whatever it holds)."""
        return self._views.get(item_type, FALLBACK) if isinstance(item_type, str) else FALLBACK

    def types(self) -> frozenset[str]:
        """Every type with a view of its own."""
        return frozenset(self._views)
