"""The built-in offline `scripted` provider: replays a model script as a Responses event stream.

It has the same `stream(body, ctx, on_retry)` API and error mapping as the HTTP `ModelClient`, so the
turn runner cannot tell the two apart. Where the script comes from, first match wins:
1. `model_providers.scripted.script = "<path>"` in config (`ProviderConfig.script`);
2. the `PYCODEX_SCRIPT` environment variable;
3. the built-in demo (`demo_script.json` in this package, a copy of `fixtures/scripts/demo.json`):
   one `exec_command` call running `echo hello from pycodex`, then a final assistant message.

Each thread replays the script from its first response; a thread that has used every response starts
over at the first one. Faults are retried like HTTP ones, without sleeping.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from importlib import resources
from pathlib import Path

from app_server.model import errors
from app_server.model.events import ResponseEvent
from app_server.model.provider import ProviderConfig, RequestContext
from app_server.model.retry import Backoff, RetryCallback, RetryPolicy, no_backoff, stream_with_retries
from app_server.model.script import ModelScript, expand, load_script, parse_script

SCRIPT_ENV = "PYCODEX_SCRIPT"
DEMO_SCRIPT_RESOURCE = "demo_script.json"


def demo_script() -> ModelScript:
    """The built-in demo script (used when no script is configured)."""
    text = resources.files(__package__).joinpath(DEMO_SCRIPT_RESOURCE).read_text(encoding="utf-8")
    return parse_script(json.loads(text), f"<built-in {DEMO_SCRIPT_RESOURCE}>")


def resolve_script(provider: ProviderConfig, env: Mapping[str, str] | None = None) -> ModelScript:
    """Find and load the script for `provider` (config, then $PYCODEX_SCRIPT, then the demo)."""
    env = os.environ if env is None else env
    if provider.script:
        return load_script(Path(provider.script).expanduser())
    if env.get(SCRIPT_ENV):
        return load_script(Path(env[SCRIPT_ENV]).expanduser())
    return demo_script()


class ScriptedModelClient:
    """Serves model requests from a `ModelScript`; one cursor per thread id."""

    def __init__(
        self, provider: ProviderConfig, script: ModelScript, *, backoff: Backoff = no_backoff
    ) -> None:
        self._provider = provider
        self._script = script
        self._policy = RetryPolicy(
            stream_max_retries=provider.stream_max_retries, backoff=backoff, network_retry_limit=0
        )
        self._cursors: dict[str, int] = {}
        self._served = 0

    @classmethod
    def from_provider(
        cls, provider: ProviderConfig, env: Mapping[str, str] | None = None
    ) -> ScriptedModelClient:
        """The client for ``provider``, with the script it names (or ``$PYCODEX_SCRIPT``, or the demo)."""
        return cls(provider, resolve_script(provider, env))

    @property
    def provider(self) -> ProviderConfig:
        """The scripted provider."""
        return self._provider

    @property
    def script(self) -> ModelScript:
        """The script the responses come from."""
        return self._script

    @property
    def requests_served(self) -> int:
        """How many model requests the script has answered."""
        return self._served

    async def aclose(self) -> None:
        """Nothing to release."""
        return None

    def stream(
        self, body: Mapping[str, object], ctx: RequestContext, on_retry: RetryCallback | None = None
    ) -> AsyncIterator[ResponseEvent]:
        """The next scripted response's events, with the same retry rules as the HTTP client."""
        return stream_with_retries(lambda: self._attempt(ctx), self._policy, on_retry)

    def _next_response(self, thread_id: str) -> int:
        index = self._cursors.get(thread_id, 0) % len(self._script.responses)
        self._cursors[thread_id] = index + 1
        return index

    async def _attempt(self, ctx: RequestContext) -> AsyncGenerator[ResponseEvent, None]:
        index = self._next_response(ctx.thread_id)
        self._served += 1
        serial = self._served
        response = self._script.responses[index]
        fault = response.fault
        if fault is not None and fault.kind == "http_error":
            body = fault.spec.get("body", "")
            text = body if isinstance(body, str) else json.dumps(body)
            raise errors.from_http_status(
                fault.spec["status"], text, f"scripted://{self._provider.id}/responses"
            )
        delay = response.delay_ms / 1000.0
        for event in expand(response, f"resp_scripted_{serial}", f"scripted_{serial}"):
            if delay:
                await asyncio.sleep(delay)
            yield event
        if fault is None:
            return
        if fault.kind == "failed":
            raise errors.from_response_failed(fault.spec.get("code"), str(fault.spec.get("message", "")))
        if fault.kind == "truncate":
            raise errors.stream_closed()
        # stall: hold the stream open; past the idle timeout it fails like a silent HTTP stream.
        seconds = float(fault.spec.get("seconds", 3600))
        idle = self._provider.idle_timeout_s
        await asyncio.sleep(min(seconds, idle))
        raise errors.idle_timeout() if seconds >= idle else errors.stream_closed()
