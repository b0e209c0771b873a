"""The turn lifecycle table: every legal move lands where the table says, every other pair is refused."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from app_server.threads.lifecycle import TRANSITIONS, IllegalTurnTransition, TurnEvent, TurnStatus, advance
from app_server.threads.state import TurnState

S, E = TurnStatus, TurnEvent

EXPECTED = {
    (S.ACCEPTED, E.LAUNCH): S.RUNNING,
    (S.ACCEPTED, E.INTERRUPT): S.INTERRUPTING,
    (S.RUNNING, E.INTERRUPT): S.INTERRUPTING,
    (S.RUNNING, E.COMPLETE): S.COMPLETED,
    (S.RUNNING, E.ABORT): S.INTERRUPTED,
    (S.RUNNING, E.FAIL): S.FAILED,
    (S.INTERRUPTING, E.LAUNCH): S.INTERRUPTING,
    (S.INTERRUPTING, E.INTERRUPT): S.INTERRUPTING,
    (S.INTERRUPTING, E.ABORT): S.INTERRUPTED,
    (S.INTERRUPTING, E.COMPLETE): S.COMPLETED,
    (S.INTERRUPTING, E.FAIL): S.FAILED,
}
ALL_PAIRS = list(itertools.product(TurnStatus, TurnEvent))
ILLEGAL = [pair for pair in ALL_PAIRS if pair not in EXPECTED]


def test_the_table_is_exactly_the_documented_one() -> None:
    assert dict(TRANSITIONS) == EXPECTED


@pytest.mark.parametrize(("status", "event"), list(EXPECTED), ids=lambda v: v.value)
def test_a_legal_transition_moves_to_the_tabled_status(status: TurnStatus, event: TurnEvent) -> None:
    assert advance("t1", status, event) is EXPECTED[(status, event)]


@pytest.mark.parametrize(("status", "event"), ILLEGAL, ids=lambda v: v.value)
def test_an_illegal_transition_is_refused_naming_the_turn(status: TurnStatus, event: TurnEvent) -> None:
    with pytest.raises(IllegalTurnTransition, match=f"turn t1: cannot {event.value}"):
        advance("t1", status, event)


@pytest.mark.parametrize("status", [s for s in TurnStatus if s.ended], ids=lambda v: v.value)
def test_an_ended_turn_accepts_no_event(status: TurnStatus) -> None:
    assert not [e for e in TurnEvent if (status, e) in TRANSITIONS]


def test_wire_status_has_four_values() -> None:
    assert {s.wire for s in TurnStatus} == {"inProgress", "completed", "interrupted", "failed"}
    assert [s for s in TurnStatus if s.wire == "inProgress"] == [S.ACCEPTED, S.RUNNING, S.INTERRUPTING]


def test_turn_state_ends_once() -> None:
    async def body() -> None:
        turn = TurnState("t2", inputs=[])
        turn.apply(E.LAUNCH)
        assert turn.finish(E.COMPLETE) is S.COMPLETED
        assert turn.wire(view="notLoaded")["status"] == "completed"
        assert turn.duration_ms is not None
        with pytest.raises(IllegalTurnTransition):
            turn.finish(E.ABORT)
        with pytest.raises(ValueError, match="launch does not end a turn"):
            TurnState("t3", inputs=[]).finish(E.LAUNCH)

    asyncio.run(body())
