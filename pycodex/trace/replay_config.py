"""How a replay configures the server under test so that it starts as the recorded one did.

The recorded config (the header's ``config``, parsed and redacted) and its ``-c`` overrides are written
back, so the config warnings the recording holds come back too. What changes is the model provider, chosen
by the provider the recording ran on (:func:`recorded_provider`):

* ``scripted``, the built-in offline model: nothing to redirect, the replay runs on the same model and
  script (the one the server noted, written to the replay's CODEX_HOME; none noted: the built-in demo, so
  a ``PYCODEX_SCRIPT`` in the replaying shell is dropped). A recording whose config names no provider
  is from when that meant the scripted model (it now means ``openai``): the replay names it;
* ``openai`` with no table of its own (selected by an API key): ``openai_base_url`` points the built-in
  provider at the playback server and a placeholder key selects it, so the threads still say ``openai``;
* any other: its table's ``base_url`` moves to the playback server, with retries off.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pycodex.json_types import JsonObj

__all__ = ["API_KEY_VARS", "ReplaySetup", "recorded_provider", "replay_setup"]

#: The variables a server takes an API key from when no provider is configured (Codex's order).
API_KEY_VARS = ("CODEX_API_KEY", "OPENAI_API_KEY")
SCRIPTED = "scripted"
OPENAI = "openai"
SCRIPT_ENV = "PYCODEX_SCRIPT"
#: What the playback server gets as a key: it checks none, and no real key should reach it.
PLACEHOLDER_KEY = "replay"


@dataclass(frozen=True)
class ReplaySetup:
    """The server under test's config.toml (None: none, as recorded), ``-c`` overrides and environment."""

    config: JsonObj | None
    overrides: list[str]
    env: dict[str, str]


def recorded_provider(header: Mapping[str, object], events: list[JsonObj]) -> str | None:
    """The model provider the recording ran on: the one the server noted after start-up (its ``model_provider``
    meta event), else the ``modelProvider`` of the first thread it answered with (traces from before that
    note), else the config's ``model_provider``; None if nothing says."""
    noted = header.get("model_provider")
    if isinstance(noted, str):
        return noted
    for event in events:
        msg = event.get("msg")
        if event.get("channel") == "client" and event.get("dir") == "out" and isinstance(msg, dict):
            result = msg.get("result")
            if isinstance(result, dict) and isinstance(result.get("modelProvider"), str):
                return str(result["modelProvider"])
    config = header.get("config")
    named = config.get("model_provider") if isinstance(config, dict) else None
    return named if isinstance(named, str) else None


def replay_setup(header: Mapping[str, object], provider_id: str | None, base_url: str,
                 env: Mapping[str, str], home: Path) -> ReplaySetup:
    """The configuration that makes the server under test start as recorded, its model served from
    ``base_url``; ``env`` is the replaying process's environment, ``home`` the replay's CODEX_HOME."""
    recorded = header.get("config")
    config: JsonObj | None = dict(recorded) if isinstance(recorded, dict) else None
    overrides = [str(o) for o in _list(header.get("config_overrides"))]
    env = dict(env)
    if provider_id == SCRIPTED:
        if not _names_provider(config, overrides):
            # Recorded when no provider meant the scripted model; today it means `openai`, so name it.
            config = {**(config or {}), "model_provider": SCRIPTED}
        if "model_script" in header:  # noted by the recording server (older traces do not say)
            config = _same_script(header["model_script"], config, env, home)
        return ReplaySetup(config, overrides, env)
    # The recorded provider settings (a URL, a provider choice) would lead away from the playback server.
    overrides = [o for o in overrides if not o.startswith("model_provider")]
    config = config or {}
    providers = dict(_dict(config.get("model_providers")))
    if provider_id == OPENAI and OPENAI not in providers:
        config["openai_base_url"] = base_url
        for var in API_KEY_VARS:
            env.pop(var, None)
        env["OPENAI_API_KEY"] = PLACEHOLDER_KEY
        return ReplaySetup(config, overrides, env)
    provider_id = provider_id or str(config.get("model_provider") or "replay")
    provider = dict(_dict(providers.get(provider_id)) or {"name": "replay", "wire_api": "responses"})
    provider.update(base_url=base_url, request_max_retries=0, stream_max_retries=0)
    providers[provider_id] = provider
    config.update(model_provider=provider_id, model_providers=providers)
    if provider.get("env_key"):
        env.setdefault(str(provider["env_key"]), PLACEHOLDER_KEY)
    return ReplaySetup(config, overrides, env)


def _same_script(script: object, config: JsonObj | None, env: dict[str, str], home: Path) -> JsonObj | None:
    """Make the scripted model play the recorded script: a copy in ``home`` named by $PYCODEX_SCRIPT and
    by the config's ``script`` if it has one; no script noted means the built-in demo."""
    if script is None:
        env.pop(SCRIPT_ENV, None)
        return config
    copy = home / "replayed-model-script.json"
    copy.write_text(json.dumps(script), encoding="utf-8")
    env[SCRIPT_ENV] = str(copy)
    scripted = _dict(_dict(config.get("model_providers") if config else None).get(SCRIPTED))
    if config is not None and "script" in scripted:
        providers = _dict(config.get("model_providers"))
        providers[SCRIPTED] = {**scripted, "script": str(copy)}
        config = {**config, "model_providers": providers}
    return config


def _names_provider(config: JsonObj | None, overrides: list[str]) -> bool:
    return bool(config and "model_provider" in config) or any(o.startswith("model_provider=") for o in overrides)


def _dict(value: object) -> JsonObj:
    return dict(value) if isinstance(value, dict) else {}


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []
