"""Provider settings (one `model_providers.<id>` table) and the per-request context.

Plain frozen data, shared by the config loader, the HTTP client and the scripted provider.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pycodex.json_types import JsonObj

SCRIPTED_PROVIDER_ID = "scripted"
DEFAULT_REQUEST_MAX_RETRIES = 4
DEFAULT_STREAM_MAX_RETRIES = 5
DEFAULT_STREAM_IDLE_TIMEOUT_MS = 300_000
BETA_FEATURES = "remote_compaction_v2"


class ScriptError(ValueError):
    """A model script (of the ``scripted`` provider) that does not follow the format; the message names the
    file and the position. Defined here, beside the provider, so checking a provider at start-up needs
    neither the script parser nor the stream events (``app_server/model/script.py`` raises it)."""


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True)
class ProviderConfig:
    """One model provider. `wire_api` is always "responses" (the only API Codex 0.169 speaks)."""

    id: str
    name: str
    base_url: str | None = None
    wire_api: str = "responses"
    env_key: str | None = None
    request_max_retries: int = DEFAULT_REQUEST_MAX_RETRIES
    stream_max_retries: int = DEFAULT_STREAM_MAX_RETRIES
    stream_idle_timeout_ms: int = DEFAULT_STREAM_IDLE_TIMEOUT_MS
    http_headers: Mapping[str, str] = field(default_factory=_empty)
    # header name -> environment variable; sent only when the variable is set and not blank
    env_http_headers: Mapping[str, str] = field(default_factory=_empty)
    # a literal token for `authorization: Bearer`, used when there is no `env_key` (Codex's precedence)
    experimental_bearer_token: str | None = field(default=None, repr=False)
    query_params: Mapping[str, str] = field(default_factory=_empty)
    requires_openai_auth: bool = False
    # Only for the built-in `scripted` provider: a model script path (see app_server.model.scripted).
    script: str | None = None

    @property
    def is_scripted(self) -> bool:
        """Whether this is the built-in offline ``scripted`` provider."""
        return self.id == SCRIPTED_PROVIDER_ID

    @property
    def idle_timeout_s(self) -> float:
        """The stall timeout in seconds. 0 means the default: no wait on a provider is unbounded."""
        return (self.stream_idle_timeout_ms or DEFAULT_STREAM_IDLE_TIMEOUT_MS) / 1000.0

    def static_headers(self, env: Mapping[str, str]) -> dict[str, str]:
        """`http_headers` plus the `env_http_headers` whose variable has a value in `env`."""
        headers = dict(self.http_headers)
        for name, var in self.env_http_headers.items():
            value = env.get(var)
            if value and value.strip():
                headers[name] = value
        return headers

    def responses_url(self) -> str:
        """``{base_url}/responses``; raises ValueError when the provider has no base_url."""
        if not self.base_url:
            raise ValueError(f"model provider `{self.id}` has no base_url")
        return self.base_url.rstrip("/") + "/responses"

    def checked_responses_url(self) -> str:
        """The URL an HTTP client of this provider posts to; raises ValueError when no HTTP client can serve
        the provider (a wire API other than Responses, no base_url)."""
        if self.wire_api != "responses":
            raise ValueError(f"model provider `{self.id}`: unsupported wire_api `{self.wire_api}`")
        return self.responses_url()


@dataclass(frozen=True)
class RequestContext:
    """Who is asking: the values that become Codex's per-request headers (§8 of the reference)."""

    thread_id: str
    turn_id: str
    originator: str
    user_agent: str
    window_number: int = 0
    beta_features: str = BETA_FEATURES
    # Serialized into `x-codex-turn-metadata` as compact JSON; keys keep their order.
    turn_metadata: Mapping[str, object] | None = None
    #: The session the thread belongs to (a sub-agent's is its root thread's; default: the thread itself).
    session_id: str | None = None
    #: A sub-agent's parent thread: its requests say they come from a spawned agent, as Codex's do.
    subagent_parent: str | None = None

    @property
    def window_id(self) -> str:
        """``{thread_id}:{window_number}``, Codex's context-window id."""
        return f"{self.thread_id}:{self.window_number}"

    def headers(self) -> dict[str, str]:
        """Codex's per-request headers (originator, user agent, session, window, betas, turn metadata)."""
        headers = {
            "accept": "text/event-stream",
            "content-type": "application/json",
            "originator": self.originator,
            "user-agent": self.user_agent,
            "session-id": self.session_id or self.thread_id,
            "thread-id": self.thread_id,
            "x-client-request-id": self.thread_id,
            "x-codex-window-id": self.window_id,
            "x-codex-beta-features": self.beta_features,
        }
        if self.subagent_parent is not None:
            headers["x-codex-parent-thread-id"] = self.subagent_parent
            headers["x-openai-subagent"] = "collab_spawn"
        if self.turn_metadata is not None:
            headers["x-codex-turn-metadata"] = json.dumps(
                dict(self.turn_metadata), separators=(",", ":"), ensure_ascii=False
            )
        return headers


def turn_metadata(
    *,
    installation_id: str,
    thread_id: str,
    turn_id: str,
    root_turn_id: str,
    context_window_id: str,
    sandbox_mode: str,
    model: str,
    turn_started_at_unix_ms: int,
    window_number: int = 0,
    request_kind: str = "turn",
    history_initialization: str = "new",
    compaction: Mapping[str, object] | None = None,
) -> JsonObj:
    """The `x-codex-turn-metadata` object with Codex's keys in Codex's order."""
    meta: JsonObj = {
        "installation_id": installation_id,
        "session_id": thread_id,
        "thread_id": thread_id,
        "agent_name": "/root",
        "turn_id": turn_id,
        "window_id": f"{thread_id}:{window_number}",
        "window_number": window_number,
        "context_window_id": context_window_id,
        "request_kind": request_kind,
        "history_initialization": history_initialization,
        "root_turn_id": root_turn_id,
        "sandbox": "seccomp",
        "sandbox_mode": sandbox_mode,
        "auto_review_enabled": False,
        "node_repl_auto_review_required": False,
        "node_repl_disabled": False,
        "turn_started_at_unix_ms": turn_started_at_unix_ms,
        "analytics_enabled": True,
        "model": model,
    }
    if compaction is not None:
        meta["compaction"] = dict(compaction)
    return meta
