"""Request handlers, grouped by area. ``register_all`` fills the server's router at startup."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["register_all"]


def register_all(app: AppServer) -> None:
    from app_server.handlers import info, initialize, threads, turns

    initialize.register(app)
    threads.register(app)
    turns.register(app)
    info.register(app)
    from app_server.handlers import (
        thread_goals,
        thread_history,
        thread_inject,
        thread_memory,
        thread_search,
        thread_sections,
        thread_terminals,
    )
    from app_server.handlers.table import register_routes

    modules = (thread_history, thread_goals, thread_terminals, thread_sections, thread_search, thread_memory,
               thread_inject)
    for module in modules:
        register_routes(app, module.ROUTES)
