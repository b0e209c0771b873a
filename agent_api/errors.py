"""The error types a caller of agent_api can see; every message is safe to show (no raw paths or output)."""

from __future__ import annotations

__all__ = ["AgentApiError", "BackendError", "InvalidRequest", "UnknownBackend", "UnsupportedCapability"]


class AgentApiError(Exception):
    """Base class: ``message`` is the stable, redacted text; ``str()`` adds the variant prefix."""

    prefix = "agent api error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"{self.prefix}: {self.message}"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.message == other.message

    def __hash__(self) -> int:
        return hash((type(self), self.message))


class InvalidRequest(AgentApiError):
    """The request was rejected before anything was spawned."""

    prefix = "invalid request"


class BackendError(AgentApiError):
    """The backend failed: spawn, a classified runtime failure, timeout or cancellation."""

    prefix = "backend error"


class UnknownBackend(AgentApiError):
    """No backend of that kind is registered with the gateway."""

    prefix = "unknown backend"

    def __init__(self, agent_kind: str) -> None:
        super().__init__(agent_kind)
        self.agent_kind = agent_kind


class UnsupportedCapability(AgentApiError):
    """The backend does not advertise the capability (or extension key) the request needs."""

    def __init__(self, agent_kind: str, capability: str) -> None:
        super().__init__(capability)
        self.agent_kind = agent_kind
        self.capability = capability

    def __str__(self) -> str:
        return f"unsupported capability for {self.agent_kind}: {self.capability}"
