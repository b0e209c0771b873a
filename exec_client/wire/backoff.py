"""Reconnect delays: exponential with jitter, as both Codex ends do (~0.7, 1.3, 2.4, 5.7, 14.5 s)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["Backoff"]


@dataclass
class Backoff:
    """Exponential backoff with jitter between reconnect attempts."""

    initial: float = 0.7
    factor: float = 2.0
    maximum: float = 15.0
    #: Each delay is scaled by a random factor in ``[1 - jitter, 1 + jitter]``.
    jitter: float = 0.25
    _attempt: int = field(default=0, init=False)
    _random: random.Random = field(default_factory=random.Random, init=False, repr=False)

    def next_delay(self) -> float:
        """The delay before the next attempt (grows until ``maximum``)."""
        base = min(self.maximum, self.initial * self.factor**self._attempt)
        self._attempt += 1
        return max(0.0, base * self._random.uniform(1 - self.jitter, 1 + self.jitter))

    def reset(self) -> None:
        """Start again from ``initial`` (after a success)."""
        self._attempt = 0
