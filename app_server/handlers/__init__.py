"""Request handlers, one module per method family, each with a ``ROUTES`` table; ``register_all`` fills the
server's router from them at startup."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["register_all"]


def register_all(app: AppServer) -> None:
    from app_server.handlers import (
        accounts,
        commands,
        config,
        environments,
        fs,
        hooks,
        info,
        initialize,
        mcp,
        misc,
        models,
        plugins,
        search,
        thread_goals,
        thread_history,
        thread_inject,
        thread_memory,
        thread_search,
        thread_sections,
        thread_terminals,
        threads,
        turns,
    )
    from app_server.handlers.table import register_routes

    # This order is the one "unknown variant" errors list.
    modules = (initialize, threads, thread_history, thread_goals, thread_terminals, thread_sections, thread_search,
               thread_memory, thread_inject, turns, info, models, config, search,
               fs, commands, hooks, plugins, accounts, misc, environments, mcp)
    for module in modules:
        register_routes(app, module.ROUTES)
