"""The model layer: Responses SSE decoding, typed events, the HTTP client and the offline scripted provider.

Both clients satisfy `ModelStreamer`; `create_model_client()` picks one for a provider.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Protocol

from app_server.lazy import LazyModule
from pycodex.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from app_server.model import client as model_client
    from app_server.model import scripted as model_scripted
    from app_server.model.client import ModelClient
    from app_server.model.errors import ModelError, RetryNotice, RetryScope, TurnErrorPayload
    from app_server.model.events import ResponseEvent
    from app_server.model.provider import SCRIPTED_PROVIDER_ID, ProviderConfig, RequestContext, turn_metadata
    from app_server.model.retry import RetryCallback
    from app_server.model.scripted import ScriptedModelClient
else:
    model_client = LazyModule("app_server.model.client")
    model_scripted = LazyModule("app_server.model.scripted")

#: Exported name -> its submodule, resolved on first use: the HTTP client (httpx) is not needed until a
#: turn samples the model, and config loading only needs `provider`.
_HOME = {
    "ModelClient": "client", "ModelError": "errors", "RetryNotice": "errors", "RetryScope": "errors",
    "TurnErrorPayload": "errors", "ResponseEvent": "events", "SCRIPTED_PROVIDER_ID": "provider",
    "ProviderConfig": "provider", "RequestContext": "provider", "turn_metadata": "provider",
    "RetryCallback": "retry", "ScriptedModelClient": "scripted",
}


class ModelStreamer(Protocol):
    """What the turn runner needs from a model provider."""

    @property
    def provider(self) -> ProviderConfig:
        """The provider this client talks to."""

    def stream(
        self, body: Mapping[str, object], ctx: RequestContext, on_retry: RetryCallback | None = None
    ) -> AsyncIterator[ResponseEvent]:
        """The events of one model response, up to ``ResponseCompleted``; raises ``ModelError`` on failure."""

    async def aclose(self) -> None:
        """Release what the client holds (its HTTP connections)."""


def create_model_client(provider: ProviderConfig, env: Mapping[str, str] | None = None) -> ModelStreamer:
    """The scripted provider for `scripted`, the HTTP Responses client for anything else."""
    if provider.is_scripted:
        return model_scripted.ScriptedModelClient.from_provider(provider, env)
    return model_client.ModelClient(provider, env=env)


__all__ = [
    "SCRIPTED_PROVIDER_ID",
    "ModelClient",
    "ModelError",
    "ModelStreamer",
    "ProviderConfig",
    "RequestContext",
    "ResponseEvent",
    "RetryCallback",
    "RetryNotice",
    "RetryScope",
    "ScriptedModelClient",
    "TurnErrorPayload",
    "create_model_client",
    "turn_metadata",
]


def __getattr__(name: str) -> object:
    return _lazy(name)


_lazy = lazy_getattr(__name__, _HOME)
