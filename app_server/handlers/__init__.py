"""Request handlers, one module per method family, each with a ``ROUTES`` table.

``register_all`` declares every family's methods at start-up but imports a family's module (and so
builds the pydantic params and response models it names) only when one of its methods is first
requested: serving ``initialize`` must not pay for the whole protocol surface. ``FAMILIES`` is checked
against the modules' ``ROUTES`` by tests/test_handler_families.py.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["FAMILIES", "register_all"]

#: Handler module -> its methods. This order is the one "unknown variant" errors list.
FAMILIES: dict[str, tuple[str, ...]] = {
    "initialize": ("initialize",),
    "threads": (
        "thread/start", "thread/resume", "thread/fork", "thread/read", "thread/list", "thread/loaded/list",
        "thread/turns/list", "thread/name/set", "thread/archive", "thread/unarchive", "thread/unsubscribe",
    ),
    "turns": ("turn/start", "turn/steer", "turn/interrupt"),
    "info": ("skills/list", "account/read", "model/list", "config/read", "configRequirements/read"),
}


def register_all(app: AppServer) -> None:
    for family, methods in FAMILIES.items():
        app.router.add_family(methods, _loader(app, family))


def _loader(app: AppServer, family: str) -> Callable[[], None]:
    def load() -> None:
        from app_server.handlers.table import register_routes

        register_routes(app, import_module(f"{__name__}.{family}").ROUTES)

    return load
