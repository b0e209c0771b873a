"""The item builders fill in the protocol's item models: each result is a valid ThreadItem in Codex key order."""

from __future__ import annotations

from pydantic import TypeAdapter

from app_server.protocol.base import to_wire
from app_server.protocol.items import KnownThreadItem
from app_server.threads import items as it
from pycodex.json_types import JsonObj

STRICT: TypeAdapter[KnownThreadItem] = TypeAdapter(KnownThreadItem)


def _built() -> list[JsonObj]:
    return [
        it.user_message("u1", it.user_input_to_content([{"type": "text", "text": "hi"}]), started_at_ms=1),
        it.agent_message("a1", "hello", phase="final_answer", started_at_ms=2),
        it.reasoning("r1", started_at_ms=3),
        it.command_execution("c1", argv=["ls", "-l"], user_cmd="ls -l", cwd="/tmp", process_id=None,
                             source="userShell", started_at_ms=4),
        it.context_compaction("k1", started_at_ms=5),
        it.review_mode("e1", entered=True, review="r", started_at_ms=6),
        it.review_mode("x1", entered=False, review="r", started_at_ms=7),
    ]


def test_every_builder_gives_a_strict_thread_item_that_round_trips_unchanged() -> None:
    for wire in _built():
        model = STRICT.validate_python(wire)
        assert to_wire(model) == wire
        assert list(to_wire(model)) == list(wire)  # key order too


def test_builders_keep_codex_key_order_and_nulls() -> None:
    command = _built()[3]
    assert list(command) == ["type", "id", "pluginId", "scriptPath", "command", "cwd", "processId", "source",
                             "status", "commandActions", "aggregatedOutput", "exitCode", "durationMs",
                             "startedAtMs", "completedAtMs"]
    assert command["command"] == "ls -l" and command["commandActions"] == [{"type": "unknown", "command": "ls -l"}]
    message = it.agent_message("a", "", phase=None, started_at_ms=1)
    assert list(message) == ["type", "moderation", "id", "text", "phase", "memoryCitation", "delivery",
                             "questions", "startedAtMs", "completedAtMs"]


def test_user_content_and_model_phase_are_relayed_verbatim() -> None:
    image = {"type": "localImage", "path": "/a.png"}
    assert it.user_message("u", [image], started_at_ms=1)["content"] == [image]  # no `detail: null` added
    assert it.agent_message("a", "", phase="someNewPhase", started_at_ms=1)["phase"] == "someNewPhase"
