"""A registry of backends by kind, with the capability gate in front of them."""

from __future__ import annotations

from agent_api.backends import CAP_CANCEL, ExecBackend
from agent_api.errors import InvalidRequest, UnknownBackend, UnsupportedCapability
from agent_api.run import RunHandle
from agent_api.values import RunRequest

__all__ = ["Gateway"]


class Gateway:
    """``register`` backends, then ``run(kind, request)``."""

    def __init__(self) -> None:
        self._backends: dict[str, ExecBackend] = {}

    def register(self, backend: ExecBackend) -> None:
        """Add ``backend`` under its kind; a kind registered twice is refused."""
        if backend.kind in self._backends:
            raise InvalidRequest(f"backend already registered: {backend.kind}")
        self._backends[backend.kind] = backend

    def backend(self, kind: str) -> ExecBackend:
        """The backend registered for ``kind`` (``UnknownBackend`` otherwise)."""
        try:
            return self._backends[kind]
        except KeyError:
            raise UnknownBackend(kind) from None

    def kinds(self) -> list[str]:
        """The registered backend kinds, sorted."""
        return sorted(self._backends)

    async def run(self, kind: str, request: RunRequest) -> RunHandle:
        """Start a run; the handle's ``cancel`` needs the backend to advertise cancellation."""
        backend = self.backend(kind)
        if CAP_CANCEL not in backend.capabilities:
            raise UnsupportedCapability(kind, CAP_CANCEL)
        return await backend.run(request)
