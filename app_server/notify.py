"""The `notify` config key: a program run after each completed turn the user sent input to, with one JSON
argument describing it, as Codex 0.169's app-server runs it:

    notify = ["notify-send-wrapper", "--flag"]   ->   notify-send-wrapper --flag '{"type": "agent-turn-complete",
        "thread-id": ..., "turn-id": ..., "cwd": ..., "client": ..., "input-messages": [...],
        "last-assistant-message": ...}'

The program runs detached (its own session, no stdio); the turn does not wait for it. A program that
cannot be started is logged and otherwise ignored, as a notification must never fail a turn."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Coroutine, Sequence

from pycodex.json_types import JsonObj

__all__ = ["TurnNotifier", "turn_complete_payload"]

logger = logging.getLogger(__name__)


def turn_complete_payload(*, thread_id: str, turn_id: str, cwd: str, client: str, inputs: list[str],
                          last_message: str | None) -> JsonObj:
    """The JSON the ``notify`` program gets for a completed turn (Codex's ``agent-turn-complete``)."""
    return {"type": "agent-turn-complete", "thread-id": thread_id, "turn-id": turn_id, "cwd": cwd,
            "client": client, "input-messages": inputs, "last-assistant-message": last_message}


class TurnNotifier:
    """Runs the configured program; `spawn` keeps the task that reaps it (the server owns and ends it)."""

    def __init__(
        self, argv: Sequence[str], spawn: Callable[[Coroutine[object, object, object]], object]
    ) -> None:
        self._argv = list(argv)
        self._spawn = spawn

    async def __call__(self, payload: JsonObj) -> None:
        if not self._argv:
            return
        try:
            proc = await asyncio.create_subprocess_exec(
                *self._argv, json.dumps(payload), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
        except (OSError, ValueError) as exc:  # ValueError: an argument with a NUL byte
            logger.warning("could not run the notify program %s: %s", self._argv[0], exc)
            return
        self._spawn(proc.wait())  # reaped in the background: the turn does not wait for it
