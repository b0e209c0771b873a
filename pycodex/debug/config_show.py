"""``pycodex config show [--origin]``: the effective configuration and where each value came from.

Origins: ``default`` (the loader's built-in value), ``<config.toml>:<line>``, ``-c key=value``, or
``env <VAR>`` (the provider picked or configured by an environment variable). ``effective_values`` is the
one place that decides which keys are shown; when app_server/config/effective.py (Codex's full default
table) lands, it replaces the ``_DERIVED`` rows there. Values of keys that look like secrets are masked.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app_server.config import ConfigError, LoadedConfig, load_config, resolve_codex_home
from app_server.config.loader import SESSION_FLAGS, plain_table
from app_server.config.providers import API_KEY_ENV_VARS
from app_server.config.tables import locate

__all__ = ["Setting", "add_config_arguments", "effective_values", "run_config"]

_SECRET_KEY = re.compile(r"(?i)(api_?key|token|secret|password|authorization|bearer)")


@dataclass(frozen=True)
class Setting:
    key: str  # dotted
    value: Any
    origin: str


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    show = sub.add_parser("show", help="the effective config (from config.toml, -c flags and defaults)")
    show.add_argument("--origin", action="store_true", help="say where each value came from")
    show.add_argument("--json", action="store_true", help="a JSON object {key: {value, origin}}")


def _leaves(table: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    for key, value in table.items():
        if isinstance(value, Mapping) and value:
            yield from _leaves(value, (*prefix, str(key)))
        else:
            yield (*prefix, str(key)), plain_table(value)


def _has(table: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = table
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _provider_origin(config: LoadedConfig) -> str:
    env_var = next((name for name in API_KEY_ENV_VARS if config.env.get(name)), None)
    return f"env {env_var}" if env_var else "default (no API key in the environment)"


# Values the loader derives when no layer sets them: (dotted key, value, origin when defaulted).
_DERIVED: tuple[tuple[str, Callable[[LoadedConfig], Any], Callable[[LoadedConfig], str]], ...] = (
    ("model", lambda c: c.model, lambda c: "default"),
    ("model_provider", lambda c: c.model_provider_id, _provider_origin),
    ("approval_policy", lambda c: c.approval_policy, lambda c: "default"),
    ("sandbox_mode", lambda c: c.sandbox_mode, lambda c: "default"),
    ("project_root_markers", lambda c: list(c.project_root_markers), lambda c: "default"),
    ("model_providers.{p}.base_url", lambda c: c.provider.base_url,
     lambda c: "env OPENAI_BASE_URL" if c.env.get("OPENAI_BASE_URL") else "default"),
    ("model_providers.{p}.env_key", lambda c: c.provider.env_key, lambda c: "default"),
)


def effective_values(config: LoadedConfig, file_text: str | None) -> list[Setting]:
    """Every key a layer sets (with the layer that won), then the derived values no layer set."""
    cli = next((layer.config for layer in config.layers if layer.kind == SESSION_FLAGS), {})
    user = next((layer for layer in config.layers if layer.kind == "user"), None)
    settings: dict[str, Setting] = {}
    for path, value in _leaves(config.raw):
        key = ".".join(path)
        if _has(cli, path):
            origin = f"-c {key}"
        elif user is not None and file_text is not None:
            pos = locate(file_text, list(path), at_value=False)
            origin = f"{user.file}:{pos[0]}" if pos else str(user.file)
        else:
            origin = "?"
        settings[key] = Setting(key, value, origin)
    for template, value_of, origin_of in _DERIVED:
        key = template.format(p=config.model_provider_id)
        if key not in settings and (value := value_of(config)) is not None:
            settings[key] = Setting(key, value, origin_of(config))
    return [_masked(s) for s in sorted(settings.values(), key=lambda s: s.key)]


def _masked(setting: Setting) -> Setting:
    last = setting.key.rsplit(".", 1)[-1]
    if last != "env_key" and _SECRET_KEY.search(setting.key) and isinstance(setting.value, str):
        return Setting(setting.key, "****", setting.origin)
    return setting


def run_config(args: argparse.Namespace, overrides: list[str], codex_home: Path | None = None) -> int:
    home = resolve_codex_home() if codex_home is None else codex_home
    try:
        config = load_config(home, overrides)
    except ConfigError as exc:
        print(f"error: {exc.message.strip().splitlines()[0]}", file=sys.stderr)
        return 1
    if config.load_error is not None:
        print(f"error: {config.load_error.message.strip()} (showing the defaults and -c flags)", file=sys.stderr)
    try:
        text: str | None = config.config_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    settings = effective_values(config, text if config.load_error is None else None)
    if args.json:
        print(json.dumps({s.key: {"value": s.value, "origin": s.origin} for s in settings}, indent=2))
    else:
        width = max((len(s.key) for s in settings), default=0)
        for s in settings:
            line = f"{s.key:<{width}} = {json.dumps(s.value, ensure_ascii=False)}"
            print(f"{line:<{width + 30}}  # {s.origin}" if args.origin else line)
    return 1 if config.load_error is not None else 0
