"""Several kinds of work that start when a turn ends with the thread idle, behind the one
``ThreadRuntime.idle_hook`` the runner calls: each registers under a name and a rank, and they run by rank
until one of them starts a turn. Queued user submissions (rank 0) go before goal continuation (rank 10),
as in Codex."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from app_server.threads.state import ThreadRuntime

__all__ = ["GOAL_RANK", "QUEUE_RANK", "IdleHooks", "add_idle_hook"]

Hook = Callable[[], Awaitable[None]]
QUEUE_RANK = 0
GOAL_RANK = 10


class IdleHooks:
    """The named hooks of one thread, called in rank order while the thread stays idle."""

    def __init__(self, thread: ThreadRuntime) -> None:
        self._thread = thread
        self._hooks: dict[str, tuple[int, Hook]] = {}

    def add(self, name: str, rank: int, hook: Hook) -> None:
        """Register (or replace) the hook called ``name``."""
        self._hooks[name] = (rank, hook)

    async def __call__(self) -> None:
        for _, hook in sorted(self._hooks.values(), key=lambda entry: entry[0]):
            if self._thread.active is not None:  # an earlier hook started a turn: the rest wait for its end
                return
            await hook()


def add_idle_hook(thread: ThreadRuntime, name: str, rank: int, hook: Hook) -> None:
    """Make ``hook`` one of the thread's idle hooks (a plain hook already set is kept, ahead of the others)."""
    hooks = thread.idle_hook
    if not isinstance(hooks, IdleHooks):
        previous = hooks
        hooks = IdleHooks(thread)
        if previous is not None:
            hooks.add("earlier", -1, previous)
        thread.idle_hook = hooks
    hooks.add(name, rank, hook)
