"""Request handlers, one module per method family, each with a ``ROUTES`` table; ``register_all`` fills the
server's router from them at startup."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["register_all"]


def register_all(app: AppServer) -> None:
    from app_server.handlers import config, info, initialize, models, search, threads, turns
    from app_server.handlers.table import register_routes

    for module in (initialize, threads, turns, info, models, config, search):  # this order is the one "unknown variant" errors list
        register_routes(app, module.ROUTES)
