"""The model clients of a process, one per provider: what turns stream their requests through.

A config reload may change a provider's settings; the next request then gets a fresh client. The old one
may still serve a running turn, so it is closed only at shutdown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, TypeAlias

from app_server.lazy import LazyModule
from app_server.model.errors import ModelError, RetryNotice, RetryScope, TurnErrorPayload
from app_server.model.provider import ProviderConfig, RequestContext, ScriptError
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

if TYPE_CHECKING:  # the HTTP client (httpx) is imported when the first turn needs a model
    from app_server.model import client as model_client
    from app_server.model import scripted as model_scripted
    from app_server.model.client import ModelClient
    from app_server.model.events import ResponseEvent
    from app_server.model.scripted import ScriptedModelClient
else:
    model_client = LazyModule("app_server.model.client")
    model_scripted = LazyModule("app_server.model.scripted")

__all__ = ["ModelClients"]

Client: TypeAlias = "ModelClient | ScriptedModelClient"


class ModelClients:
    """Implements the runner's ``ModelGateway``."""

    def __init__(
        self, providers: Callable[[], Mapping[str, ProviderConfig]], env: Mapping[str, str] | None = None,
        stored_key: Callable[[], str | None] | None = None,
    ) -> None:
        self._providers = providers  # read on every use: config.toml may have been reloaded
        self._env = env  # where `env_key` and $PYCODEX_SCRIPT are read (None: the process's environment)
        self._stored_key = stored_key  # the API-key login (app_server/model/auth.py), read per request
        self._clients: dict[str, Client] = {}
        self._retired: list[Client] = []

    def provider(self, provider_id: str) -> ProviderConfig:
        """The provider ``provider_id``; raises InvalidRequest for an unknown one."""
        provider = self._providers().get(provider_id)
        if provider is None:
            raise InvalidRequest(f"unknown model provider `{provider_id}`")
        return provider

    def client(self, provider_id: str) -> Client:
        """The client of a provider; raises ``ScriptError`` when a scripted provider's script is unusable."""
        provider = self.provider(provider_id)
        client = self._clients.get(provider_id)
        if client is None or client.provider != provider:
            fresh = _new_client(provider, self._env, self._stored_key)
            if client is not None:
                self._retired.append(client)
            self._clients[provider_id] = client = fresh
        return client

    def check(self, provider_id: str) -> None:
        """Raise what building the client of ``provider_id`` would (``ScriptError`` for an unusable script,
        ValueError for a provider no HTTP client can serve), without building an HTTP client: a thread checks
        its provider when it starts, and its first turn builds the client (httpx, the CA bundle)."""
        provider = self.provider(provider_id)
        if provider.is_scripted:
            self.client(provider_id)  # loading the script is its check
        else:
            provider.checked_responses_url()

    def stream(
        self, provider_id: str, body: JsonObj, ctx: RequestContext,
        on_retry: Callable[[RetryNotice], Awaitable[None]],
    ) -> AsyncIterator[ResponseEvent]:
        """Stream one request through the client of ``provider_id`` (a broken model script fails the turn)."""
        try:
            client = self.client(provider_id)
        except ScriptError as exc:  # the script broke after the thread started: fail the turn, say why
            raise ModelError(TurnErrorPayload(str(exc), "other"), RetryScope.NONE) from None
        return client.stream(body, ctx, on_retry)

    async def aclose(self) -> None:
        """Close every client, current and retired."""
        for client in [*self._clients.values(), *self._retired]:
            await client.aclose()


def _new_client(
    provider: ProviderConfig, env: Mapping[str, str] | None, stored_key: Callable[[], str | None] | None
) -> Client:
    if provider.is_scripted:
        return model_scripted.ScriptedModelClient.from_provider(provider, env)
    return model_client.ModelClient(provider, env=env, stored_key=stored_key)
