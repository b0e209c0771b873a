"""pycodex configuration: `CODEX_HOME/config.toml`, `-c` overrides and per-thread overrides.

config = load_config(resolve_codex_home(), ["model=gpt-5"], strict=False)
for warning in config.warnings: ...            # -> `configWarning` notifications
thread_config = config.with_overrides({"model_reasoning_effort": "high"})
config.provider                                # the selected ProviderConfig
"""

from __future__ import annotations

from app_server.config.errors import UNTRUSTED_MESSAGE, ConfigError, ConfigWarning
from app_server.config.loader import (
    DEFAULT_MODEL,
    ConfigLayer,
    LoadedConfig,
    load_config,
    resolve_codex_home,
)
from app_server.config.tables import parse_cli_override

__all__ = [
    "DEFAULT_MODEL",
    "UNTRUSTED_MESSAGE",
    "ConfigError",
    "ConfigLayer",
    "ConfigWarning",
    "LoadedConfig",
    "load_config",
    "parse_cli_override",
    "resolve_codex_home",
]
