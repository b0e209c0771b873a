"""What the exec-server's router needs from a connection, as a protocol in a leaf module.

The router (:mod:`exec_server.router`) gates every method on the connection's handshake state and hands
``initialize`` to the connection; the connection (:mod:`exec_server.connection`) owns a router. Naming the
router's side of that contract here, rather than importing ``Connection``, keeps the two modules out of an
import circle (type-level included): the router depends on this protocol, the connection satisfies it.
"""

from __future__ import annotations

from typing import Protocol

from exec_client.wire.protocol import InitializeParams
from exec_server.session import Session
from pycodex.json_types import JsonObj

__all__ = ["Handshake"]


class Handshake(Protocol):
    """A connection as the router sees it: its handshake state and its ``initialize`` step."""

    @property
    def session(self) -> Session | None:
        """The session ``initialize`` attached, or None before it succeeded."""
        ...

    @property
    def initialized(self) -> bool:
        """``initialized`` was received after a successful ``initialize``."""
        ...

    def initialize(self, params: InitializeParams) -> JsonObj:
        """Attach (or resume) a session and return the ``initialize`` result."""
        ...
