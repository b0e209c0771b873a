"""The lifecycle of one turn: its states, the events that move it, and the one table of legal moves.

Every change of turn status goes through ``advance``; nothing else assigns a status. A turn is
*accepted* when ``turn/start`` answers, *running* once its task is launched, *interrupting* while a
requested interrupt is on its way, and then ends exactly once as completed, interrupted or failed.
An ended turn accepts no event at all, which is what makes "one ``turn/completed`` per turn" a checked
invariant rather than a hope. The wire knows only four statuses; ``TurnStatus.wire`` maps onto them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["TRANSITIONS", "IllegalTurnTransition", "TurnEvent", "TurnStatus", "advance"]


class TurnStatus(enum.Enum):
    """Where a turn is: live (accepted, running, interrupting) or ended (completed, interrupted, failed)."""

    ACCEPTED = "accepted"
    RUNNING = "running"
    INTERRUPTING = "interrupting"
    COMPLETED = "completed"
    INTERRUPTED = "interrupted"
    FAILED = "failed"

    @property
    def ended(self) -> bool:
        """Whether the status is final (no event may change it)."""
        return self in _ENDED

    @property
    def wire(self) -> str:
        """The v2 ``TurnStatus``: every live state is ``inProgress``."""
        return "inProgress" if not self.ended else self.value


_ENDED = frozenset({TurnStatus.COMPLETED, TurnStatus.INTERRUPTED, TurnStatus.FAILED})


class TurnEvent(enum.Enum):
    """What can happen to a turn; ``advance`` says which status each event leads to from each status."""

    LAUNCH = "launch"  # the runner's task starts
    INTERRUPT = "interrupt"  # turn/interrupt, thread/archive or shutdown asked the turn to stop
    COMPLETE = "complete"  # the model has nothing more to do
    ABORT = "abort"  # the task was cancelled, or the user cancelled from an approval prompt
    FAIL = "fail"  # a model error or a bug ended the turn


S, E = TurnStatus, TurnEvent
#: (status, event) -> next status. A pair that is absent is illegal.
TRANSITIONS: Mapping[tuple[TurnStatus, TurnEvent], TurnStatus] = MappingProxyType({
    (S.ACCEPTED, E.LAUNCH): S.RUNNING,
    (S.ACCEPTED, E.INTERRUPT): S.INTERRUPTING,
    (S.RUNNING, E.INTERRUPT): S.INTERRUPTING,
    (S.RUNNING, E.COMPLETE): S.COMPLETED,
    (S.RUNNING, E.ABORT): S.INTERRUPTED,
    (S.RUNNING, E.FAIL): S.FAILED,
    # An interrupt asked for before the launch still launches, so the turn ends the ordinary way.
    (S.INTERRUPTING, E.LAUNCH): S.INTERRUPTING,
    (S.INTERRUPTING, E.INTERRUPT): S.INTERRUPTING,
    (S.INTERRUPTING, E.ABORT): S.INTERRUPTED,
    # The turn may finish on its own before the cancellation reaches it.
    (S.INTERRUPTING, E.COMPLETE): S.COMPLETED,
    (S.INTERRUPTING, E.FAIL): S.FAILED,
})
del S, E


class IllegalTurnTransition(RuntimeError):
    """A local error: the server tried to move a turn in a way the table forbids."""

    def __init__(self, turn_id: str, status: TurnStatus, event: TurnEvent) -> None:
        super().__init__(f"turn {turn_id}: cannot {event.value} a turn that is {status.value}")
        self.status = status
        self.event = event


def advance(turn_id: str, status: TurnStatus, event: TurnEvent) -> TurnStatus:
    """The status after ``event``; raises ``IllegalTurnTransition`` for a pair not in ``TRANSITIONS``."""
    nxt = TRANSITIONS.get((status, event))
    if nxt is None:
        raise IllegalTurnTransition(turn_id, status, event)
    return nxt
