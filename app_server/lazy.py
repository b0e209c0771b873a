"""A module imported on the first read of one of its attributes: how the app-server defers its imports.

Code that defers a module declares its own handle beside the real import the type checker reads::

    if TYPE_CHECKING:
        from app_server.mcp import manager as mcp_manager
    else:
        mcp_manager = LazyModule("app_server.mcp.manager")

so the import graph (and a type-level cycle check) sees the same edge as a plain import would, and no
module imports a registry of handles. When each deferred module loads is said once, in
``app_server/loading.py`` (its group and why); ``tests/app_server/test_loading.py`` checks that every
handle names a module declared there.

Standard library only: ``app_server.main`` imports this before it answers ``initialize``.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

__all__ = ["LazyModule"]


class LazyModule:
    """Stands for the module ``name``: imports it on the first attribute read, then forwards to it."""

    __slots__ = ("_module", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._module: ModuleType | None = None

    def load(self) -> ModuleType:
        """The module, imported now if it is not yet."""
        module = self._module
        if module is None:
            # The import statement's own path (not importlib.import_module), so `-X importtime` sees it.
            __import__(self.name)
            module = self._module = sys.modules[self.name]
        return module

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.load(), attr)

    def __repr__(self) -> str:
        return f"<LazyModule {self.name}>"
