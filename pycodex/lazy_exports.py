"""Package re-exports resolved on first use (PEP 562), so importing one submodule of a package does not
import (and build the pydantic models of) all its siblings. Start-up time is the reason: see the
"Performance" section of the README."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``homes`` maps each exported name to its submodule."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{home}"), name)

    return __getattr__
