"""The item views: every ThreadItem variant has an entry, an unknown type has one fallback in every view, and a
new item type (model, builder, view: one declaration each) shows in every view without touching a renderer."""

from __future__ import annotations

import io
import typing
from typing import Literal

import pytest
from pydantic import TypeAdapter
from rich.console import Console

from agent_api.fork_events import TurnMapper
from agent_api.values import EventKind
from app_server.protocol.base import WireModel, to_wire
from app_server.protocol.items import (
    CODEX_THREAD_ITEM_TYPES,
    THREAD_ITEM_VARIANTS,
    AddPatchChangeKind,
    AgentMessageItem,
    CollabAgentState,
    CollabAgentToolCallItem,
    CommandExecutionItem,
    ContextCompactionItem,
    EnteredReviewModeItem,
    ExitedReviewModeItem,
    FileChangeItem,
    FileUpdateChange,
    ImageViewItem,
    PlanItem,
    ReasoningItem,
    TextUserInput,
    ThreadItem,
    UnknownThreadItem,
    UserMessageItem,
)
from app_server.protocol.tool_items import (
    McpToolCallItem,
    McpToolCallResult,
    SearchWebSearchAction,
    WebSearchItem,
)
from pycodex import demo
from pycodex.debug import threads as threads_cli
from pycodex.debug.render import item_summary, thread_markdown
from pycodex.exec_cli.events import ExecEventMapper
from pycodex.exec_cli.human import HumanRenderer
from pycodex.item_views import FALLBACK, ITEM_VIEWS, HumanStyle, ItemView, ItemViewRegistry
from pycodex.item_views.registry import fallback_label, json_summary
from pycodex.json_types import JsonObj
from pycodex.trace.timeline import build_timeline


def _union_types() -> set[str]:
    """The `type` tag of every modelled variant of the ThreadItem union, read from the union itself."""
    union = typing.get_args(typing.get_args(ThreadItem)[0])
    models = [typing.get_args(member)[0] for member in union]
    return {model.model_fields["type"].default for model in models if model is not UnknownThreadItem}


def test_every_variant_of_the_item_union_has_a_view() -> None:
    union = _union_types()
    assert union == set(THREAD_ITEM_VARIANTS)
    assert union - ITEM_VIEWS.types() == set(), "an item type without a view: add its ItemView to the table"


def test_views_are_only_for_types_codex_defines() -> None:
    assert ITEM_VIEWS.types() <= set(CODEX_THREAD_ITEM_TYPES)


def test_an_unknown_type_gets_the_one_fallback_in_every_view() -> None:
    item = {"type": "somethingNew", "id": "x", "name": "n", "status": "completed"}
    assert ITEM_VIEWS.view_of("somethingNew") is FALLBACK is ITEM_VIEWS.view_of(None) is ITEM_VIEWS.view_of(3)
    assert item_summary(item) == ("somethingNew", '{"name": "n", "status": "completed"}')
    assert HumanRenderer().feed("item/completed", {"item": item}) == ""
    assert ExecEventMapper().feed("item/completed", {"item": item}) == []
    assert TurnMapper(agent_kind="codex", thread_id="t").feed("item/completed", {"item": item}) == []
    record = build_timeline(_trace(item))["turns"][0]["items"][0]
    assert (record["label"], record["tool"]) == ("n", True)


def test_a_type_has_one_view() -> None:
    registry = ItemViewRegistry([ItemView("a")])
    with pytest.raises(ValueError):
        registry.register(ItemView("a"))
    with pytest.raises(ValueError):
        registry.register(ItemView(""))


# ---- a toy item type, declared once per part -------------------------------------------------


class ToyItem(WireModel):  # the model
    type: Literal["toyBell"] = "toyBell"
    id: str
    rings: int
    started_at_ms: int | None = None
    completed_at_ms: int | None = None


def toy_bell(item_id: str, *, rings: int) -> JsonObj:  # the builder
    return to_wire(ToyItem(id=item_id, rings=rings, started_at_ms=1))


TOY_VIEW = ItemView(  # the view
    "toyBell",
    trace_label=lambda item: f"ding x{item['rings']}",
    summary=lambda item: ("bell", f"rang {item['rings']} times\nding ding ding"),
    summary_style="bold red",
    summary_block=True,
    human_started=lambda item, style: f"{style.label('bell')}\n",
    human_completed=lambda item, style: f"rang {item['rings']}\n",
    exec_item=lambda item, new_id: {"id": new_id(), "type": "toy_bell", "rings": item["rings"]},
    tool_kind="toy_bell",
    demo_completed=lambda item: f"  bell: {item['rings']}",
)


def _trace(item: JsonObj) -> list[JsonObj]:
    def note(t: float, method: str, params: JsonObj) -> JsonObj:
        return {"t": t, "dir": "out", "channel": "client", "msg": {"method": method, "params": params}}

    return [
        note(0.0, "turn/started", {"threadId": "th", "turn": {"id": "tu", "status": "inProgress"}}),
        note(0.1, "item/started", {"threadId": "th", "turnId": "tu", "item": item}),
        note(0.2, "item/completed", {"threadId": "th", "turnId": "tu", "item": dict(item, completedAtMs=2)}),
        note(0.3, "turn/completed", {"threadId": "th", "turn": {"id": "tu", "status": "completed"}}),
    ]


def test_a_toy_item_type_shows_in_every_view(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setattr(demo, "_say", lambda raw, text, out=None: said.append(text))
    item = toy_bell("b1", rings=3)
    assert isinstance(TypeAdapter(ThreadItem).validate_python(item), UnknownThreadItem)  # not in the union
    started, completed = {"threadId": "th", "item": item}, {"threadId": "th", "item": item}
    with ITEM_VIEWS.registered(TOY_VIEW):
        # trace timeline
        record = build_timeline(_trace(item))["turns"][0]["items"][0]
        assert (record["type"], record["label"], record["tool"]) == ("toyBell", "ding x3", True)
        # pycodex threads show / export
        assert item_summary(item) == ("bell", "rang 3 times\nding ding ding")
        thread = {"id": "th", "turns": [{"id": "tu", "status": "completed", "items": [item]}]}
        assert "**bell** `rang 3 times`\n\n```\nding ding ding\n```" in thread_markdown(thread)
        console = Console(file=io.StringIO(), record=True, width=80, color_system="truecolor", highlight=False)
        threads_cli._show(console, thread)
        assert "\x1b[1;31m      bell\x1b[0m rang 3 times" in console.export_text(styles=True)  # in bold red
        # exec transcript
        human = HumanRenderer()
        assert human.feed("item/started", started) + human.feed("item/completed", completed) == "bell\nrang 3\n"
        # exec --json: a tool call, so shown when it starts and when it ends, under one id
        mapper = ExecEventMapper()
        assert mapper.feed("item/started", started) + mapper.feed("item/completed", completed) == [
            {"type": "item.started", "item": {"id": "item_0", "type": "toy_bell", "rings": 3}},
            {"type": "item.completed", "item": {"id": "item_0", "type": "toy_bell", "rings": 3}},
        ]
        # agent API fork events
        fork = TurnMapper(agent_kind="codex", thread_id="th")
        events = fork.feed("item/started", started) + fork.feed("item/completed", completed)
        assert [e.kind for e in events] == [EventKind.TOOL_CALL, EventKind.TOOL_RESULT]
        assert events[0].data is not None and events[0].data["tool"]["kind"] == "toy_bell"
        # demo transcript
        demo._describe(demo._Client.__new__(demo._Client), {"method": "item/completed", "params": completed}, False)
        assert said == ["  bell: 3"]
    assert "toyBell" not in ITEM_VIEWS.types()
    assert item_summary(item)[0] == "toyBell"  # back to the fallback


def test_human_style_labels_in_bold_only_when_colouring() -> None:
    assert HumanStyle().label("exec") == "exec"
    assert HumanStyle(color=True).label("exec") == "\x1b[1mexec\x1b[0m"


# ---- the views read the fields the models declare --------------------------------------------


def _samples() -> list[JsonObj]:
    """One item of each modelled variant, built from its model (so a renamed field shows up here)."""
    models = [
        UserMessageItem(id="u", content=[TextUserInput(text="hello")]),
        AgentMessageItem(id="a", text="an answer"),
        PlanItem(id="p", text="1. look"),
        ReasoningItem(id="r", summary=["thinking"]),
        CommandExecutionItem(id="c", command="ls", cwd="/w", status="completed", command_actions=[],
                             aggregated_output="a.py\n", exit_code=0, duration_ms=3),
        FileChangeItem(id="f", changes=[FileUpdateChange(path="a.py", kind=AddPatchChangeKind(), diff="+x")],
                       status="completed"),
        CollabAgentToolCallItem(id="s", tool="spawnAgent", status="completed", sender_thread_id="t1",
                                receiver_thread_ids=["t2"], prompt="help", model="m",
                                agents_states={"t2": CollabAgentState(status="running")}),
        ImageViewItem(id="i", path="/w/a.png"),
        EnteredReviewModeItem(id="e", review="the diff"),
        ExitedReviewModeItem(id="x", review="looks good"),
        ContextCompactionItem(id="k"),
        McpToolCallItem(id="m", server="docs", tool="lookup", status="completed", arguments={"q": "x"},
                        result=McpToolCallResult(content=[{"type": "text", "text": "found"}])),
        WebSearchItem(id="w", query="pydantic", action=SearchWebSearchAction(query="pydantic")),
    ]
    return [to_wire(model) for model in models]


def test_every_view_shows_an_item_of_each_variant_from_its_model_fields() -> None:
    samples = _samples()
    assert {item["type"] for item in samples} == _union_types()
    for item in samples:
        view = ITEM_VIEWS.view_of(item["type"])
        if view.trace_label is not fallback_label:
            record = build_timeline(_trace(item))["turns"][0]["items"][0]
            assert record["label"], item["type"]
        if view.summary is not json_summary:
            assert item_summary(item)[1], item["type"]
        for hook in (view.human_started, view.human_completed):
            assert hook is None or isinstance(hook(item, HumanStyle()), str)
        events = ExecEventMapper().feed("item/completed", {"item": item})
        assert (events != []) == (view.exec_item is not None), item["type"]
        fork = TurnMapper(agent_kind="codex", thread_id="t").feed("item/completed", {"item": item})
        assert (fork != []) == (view.tool_kind is not None or view.answer), item["type"]
