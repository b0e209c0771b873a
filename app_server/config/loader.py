"""Loading `CODEX_HOME/config.toml` plus `-c` overrides and per-thread overrides into a `LoadedConfig`.

Layers, lowest first: the user file, `-c key=value` flags ("session-flags"), then `thread/start.config`.
Behaviour observed on Codex 0.169:
* an unknown key is ignored with one aggregated warning (an error with `strict=True`);
* a file that cannot be read as UTF-8, does not parse, has a badly typed value or names an unknown
  provider is reported ("Invalid configuration; using defaults.", the cause in `details`) and kept as
  `load_error`: the server still starts, but every thread/start, thread/fork and cold thread/resume
  is refused with "failed to load configuration: <cause>" until the file is fixed (an error at once
  with `strict=True`); bad `-c` flags and bad thread overrides are errors;
* `approval_policy = "untrusted"` in any config layer is a fatal error (the `approvalPolicy`
  parameter of thread/start is a different path and still allows it);
* profiles: `--profile NAME` (exec) layers `CODEX_HOME/NAME.config.toml` between config.toml and the
  `-c` flags. The legacy selector `profile = "NAME"` is refused (a bad file, or a fatal `-c` flag), and
  `--profile NAME` with a legacy `[profiles.NAME]` table is fatal, both with Codex's message. Codex
  ignores other `[profiles.*]` tables and a missing profile file silently; pycodex warns, naming them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from app_server.config import schema
from app_server.config.errors import (
    UNTRUSTED_MESSAGE,
    ConfigError,
    ConfigWarning,
    invalid_config_warning,
    unimplemented_keys_warning,
    unknown_keys_warning,
    utf8_error_reason,
)
from app_server.config.mcp_servers import McpServerConfig, check_mcp_servers, optional_startup_grace_s
from app_server.config.mcp_servers import unknown_keys as mcp_unknown_keys
from app_server.config.otel import otel_settings
from app_server.config.providers import (
    OPENAI_PROVIDER_ID,
    builtin_providers,
    provider_config,
)
from app_server.config.tables import (
    deep_merge,
    expand_dotted,
    locate,
    nest,
    parse_cli_override,
    parse_toml,
    value_end_column,
)
from app_server.model.provider import (
    SCRIPTED_PROVIDER_ID,
    ProviderConfig,
)
from pycodex.json_types import JsonObj, JsonValue
from pycodex.otel.settings import OtelSettings

DEFAULT_CODEX_HOME = "~/.pycodex"
DEFAULT_MODEL = "gpt-6.1-sol"
SESSION_FLAGS = "session-flags"
PROFILE = "profile"
PROFILE_DOCS = "See https://developers.openai.com/codex/config-advanced#profiles for more information."
LEGACY_PROFILE_SELECTOR = (
    "legacy `profile = \"{name}\"` config is no longer supported; use `--profile {name}` with "
    "`{name}.config.toml` instead"
)
LEGACY_PROFILE_CONFLICT = (
    "--profile `{name}` cannot be used while {file} contains legacy `profile = \"{name}\"` or "
    "`[profiles.{name}]` config; move those settings into {target} and remove the legacy profile "
    "selector/table. " + PROFILE_DOCS
)
LEGACY_PROFILE_TABLES = (
    "pycodex ignores legacy profile tables ({keys}) as Codex does: move each into CODEX_HOME/<name>.config.toml "
    "and run with `--profile <name>`. " + PROFILE_DOCS
)
MISSING_PROFILE = "Profile `{name}` has no file {file}; using the base configuration."


def resolve_codex_home(env: Mapping[str, str] | None = None) -> Path:
    """`$CODEX_HOME` if set and non-empty, else `~/.pycodex`."""
    env = os.environ if env is None else env
    return Path(env.get("CODEX_HOME") or DEFAULT_CODEX_HOME).expanduser()


def plain_table(value: object) -> JsonValue:
    """A config table (read-only mappings inside) as plain JSON values."""
    if isinstance(value, Mapping):
        return {str(k): plain_table(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_table(v) for v in value]
    return value


@dataclass(frozen=True)
class ConfigLayer:
    """One source of settings, as `config/read {includeLayers}` reports it."""

    kind: str  # "user" | "session-flags" | "thread"
    file: str | None
    config: Mapping[str, object]

    @property
    def version(self) -> str:
        """``sha256:`` of the layer's canonical JSON (how ``config/read`` versions a layer)."""
        canonical = json.dumps(plain_table(self.config), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def label(self) -> str:
        """How messages name the layer (the file for user and profile layers)."""
        return f"{self.kind} ({self.file})" if self.kind in ("user", PROFILE) else SESSION_FLAGS


@dataclass(frozen=True)
class LoadedConfig:
    """The effective configuration. `warnings` are those of the latest load step only.

    `load_error` is set when config.toml exists but cannot be used; the rest then holds the defaults
    plus `-c` flags, and no thread may start on it (Codex fails closed the same way).
    """

    codex_home: Path
    raw: Mapping[str, object]  # the merged effective table (all layers)
    layers: tuple[ConfigLayer, ...]
    model: str
    model_provider_id: str
    model_providers: Mapping[str, ProviderConfig]
    approval_policy: str | None
    sandbox_mode: str | None
    developer_instructions: str | None
    instructions: str | None
    model_reasoning_effort: str | None
    model_reasoning_summary: str | None
    project_root_markers: tuple[str, ...]
    features: Mapping[str, object]
    #: `pycodex exec` leaves reasoning out of its transcript (as `codex exec`; its JSON events keep it).
    hide_agent_reasoning: bool = False
    #: A program run after each completed turn (app_server/notify.py); empty: none.
    notify: tuple[str, ...] = ()
    #: `[mcp_servers.NAME]`, checked (disabled servers included).
    mcp_servers: Mapping[str, McpServerConfig] = field(default_factory=dict)
    #: `[otel]`, checked (pycodex.otel exports what it asks for).
    otel: OtelSettings = field(default_factory=OtelSettings)
    warnings: tuple[ConfigWarning, ...] = ()
    load_error: ConfigError | None = None
    strict: bool = False
    env: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def config_path(self) -> Path:
        """The user's config.toml."""
        return self.codex_home / "config.toml"

    @property
    def provider(self) -> ProviderConfig:
        """The configured model provider."""
        return self.model_providers[self.model_provider_id]

    def with_overrides(self, overrides: Mapping[str, object], strict: bool | None = None) -> LoadedConfig:
        """Apply a `thread/start.config` dict (dotted or nested keys) on top; raises ConfigError."""
        strict = self.strict if strict is None else strict
        table = expand_dotted(overrides)
        layer = ConfigLayer(kind="thread", file=None, config=MappingProxyType(table))
        warnings = _unknown_key_warnings([layer], strict, texts={})
        merged = deep_merge(self.raw, table)
        try:
            result = _build(self.codex_home, merged, (*self.layers, layer), self.env, strict)
        except schema.Invalid as exc:
            raise _override_error(exc) from None
        return replace(result, warnings=tuple(warnings), load_error=self.load_error)


def _override_error(exc: schema.Invalid) -> ConfigError:
    key = ".".join(exc.path)
    return ConfigError(f"{exc.message}\nin `{key}`\n", key=key)


def _build(
    codex_home: Path,
    raw: Mapping[str, object],
    layers: tuple[ConfigLayer, ...],
    env: Mapping[str, str],
    strict: bool,
) -> LoadedConfig:
    """Check and type the merged table. Raises schema.Invalid or ConfigError."""
    top: list[str] = []
    approval = schema.opt_variant(raw, "approval_policy", top, schema.APPROVAL_POLICIES)
    if approval == "untrusted":
        raise ConfigError(UNTRUSTED_MESSAGE, key="approval_policy")
    selector = schema.opt_str(raw, "profile", top)
    if selector is not None:
        raise ConfigError(LEGACY_PROFILE_SELECTOR.format(name=selector), key="profile")
    schema.opt_table(raw, "profiles", top)
    providers = builtin_providers(env, schema.opt_str(raw, "openai_base_url", top))
    tables = schema.opt_table(raw, "model_providers", top) or {}
    for table_id, table in tables.items():
        if not isinstance(table, Mapping):
            raise schema.Invalid(
                ["model_providers", table_id], f"invalid type: {schema.describe(table)}, expected a map"
            )
        providers[table_id] = provider_config(table_id, table, providers.get(table_id))
    provider_id = schema.opt_str(raw, "model_provider", top)
    model = schema.opt_str(raw, "model", top) or DEFAULT_MODEL
    if provider_id is None:
        # As in Codex, the default provider is OpenAI, key or no key: without one a turn fails and says how
        # to configure a model (app_server/model/errors.py). The offline model runs only when asked for, by
        # `model_provider = "scripted"` or by naming it as the model (`--model scripted`).
        provider_id = SCRIPTED_PROVIDER_ID if model == SCRIPTED_PROVIDER_ID else OPENAI_PROVIDER_ID
    if provider_id not in providers:
        raise ConfigError(f"Model provider `{provider_id}` not found", key="model_provider", phase="resolve")
    if providers[provider_id].base_url is None and provider_id != SCRIPTED_PROVIDER_ID:
        raise schema.Invalid(["model_providers", provider_id, "base_url"], "missing field `base_url`")
    markers = schema.opt_str_list(raw, "project_root_markers", top)
    optional_startup_grace_s(raw)  # checked here so a bad value fails the load like any other
    mcp = check_mcp_servers(raw.get("mcp_servers"), strict=strict)
    return LoadedConfig(
        codex_home=codex_home,
        raw=MappingProxyType(dict(raw)),
        layers=layers,
        model=model,
        model_provider_id=provider_id,
        model_providers=MappingProxyType(providers),
        approval_policy=approval,
        sandbox_mode=schema.opt_variant(raw, "sandbox_mode", top, schema.SANDBOX_MODES),
        developer_instructions=schema.opt_str(raw, "developer_instructions", top),
        instructions=schema.opt_str(raw, "instructions", top),
        model_reasoning_effort=schema.opt_variant(
            raw, "model_reasoning_effort", top, schema.REASONING_EFFORTS
        ),
        model_reasoning_summary=schema.opt_variant(
            raw, "model_reasoning_summary", top, schema.REASONING_SUMMARIES
        ),
        project_root_markers=tuple(markers) if markers is not None else (".git",),
        features=MappingProxyType(dict(schema.opt_table(raw, "features", top) or {})),
        hide_agent_reasoning=bool(schema.opt_bool(raw, "hide_agent_reasoning", top)),
        notify=tuple(schema.opt_str_list(raw, "notify", top) or ()),
        mcp_servers=MappingProxyType(dict(mcp.servers)),
        otel=otel_settings(raw),
        strict=strict,
        env=env,
    )


def _unknown_key_warnings(
    layers: Sequence[ConfigLayer], strict: bool, texts: Mapping[str, str | None]
) -> list[ConfigWarning]:
    found = [(layer, key) for layer in layers
             for key in sorted([*schema.unknown_keys(layer.config), *mcp_unknown_keys(layer.config)])]
    if not found:
        return []
    if strict:
        layer, key = found[0]
        message = f"unknown configuration field `{key.split('.')[-1]}`"
        text = texts.get(layer.file or "")
        if layer.file is not None and text is not None:
            pos = locate(text, key.split("."), at_value=False)
            line, col = pos if pos else (None, None)
            where = f"{layer.file}:{line}:{col}" if pos else f"{layer.file}"
            raise ConfigError(f"{where}: {message}", key=key, path=layer.file, line=line, column=col)
        raise ConfigError(f"{message}\nin `{key}`\n", key=key)
    return [unknown_keys_warning([(layer.label, key) for layer, key in found])]


def _file_error(exc: schema.Invalid, path: str, text: str) -> ConfigError:
    pos = locate(text, exc.path, at_value=True)
    if pos is None:
        return ConfigError(
            f"{path}: {exc.message}", key=".".join(exc.path), path=path, reason=exc.message, phase="schema"
        )
    line, col = pos
    return ConfigError(
        f"{path}:{line}:{col}: {exc.message}", key=".".join(exc.path), path=path, line=line, column=col,
        end_column=value_end_column(text, line, col), reason=exc.message, phase="schema",
    )


def _read_file(path: Path) -> str | None:
    """config.toml's text, or None when there is none. Raises ConfigError when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"Failed to read config file {path}: {utf8_error_reason(exc)}", phase="read") from None
    except OSError as exc:
        raise ConfigError(f"Failed to read config file {path}: {exc.strerror or exc}", phase="read") from None


def _check_file(
    codex_home: Path, path: Path, env: Mapping[str, str], strict: bool
) -> tuple[str | None, JsonObj, ConfigError | None]:
    """Read, parse and check config.toml on its own (so errors point at its lines).

    Returns (text, table, error): on an error the table is empty. Raises with `strict`, and always for
    `approval_policy = "untrusted"` (fatal in Codex too).
    """
    try:
        text = _read_file(path)
        if text is None:
            return None, {}, None
        table = parse_toml(text, str(path))
    except ConfigError as err:
        if strict:
            raise
        return None, {}, err
    if not table:
        return text, table, None
    try:
        _build(codex_home, table, (), env, strict)
    except schema.Invalid as exc:
        file_err = _file_error(exc, str(path), text)
        if strict:
            raise file_err from None
        return text, {}, file_err
    except ConfigError as err:
        if err.message == UNTRUSTED_MESSAGE or strict:
            raise
        return text, {}, err
    return text, table, None


def _profile_layer(
    codex_home: Path, profile: str, user_table: Mapping[str, object], env: Mapping[str, str], strict: bool
) -> tuple[ConfigLayer | None, str | None, ConfigError | None, list[ConfigWarning]]:
    """`--profile NAME`: the layer of `CODEX_HOME/NAME.config.toml` (None when there is no such file),
    its text, its error and warnings. Raises ConfigError for a bad name or a legacy profile of that name."""
    if not profile or profile in (".", "..") or any(c in profile for c in "/\\\0"):
        raise ConfigError(f"invalid profile name `{profile}`: it names a file in CODEX_HOME", key="profile")
    path = codex_home / f"{profile}.config.toml"
    legacy = user_table.get("profiles")
    if user_table.get("profile") == profile or (isinstance(legacy, Mapping) and profile in legacy):
        raise ConfigError(LEGACY_PROFILE_CONFLICT.format(
            name=profile, file=codex_home / "config.toml", target=path), key="profile")
    text, table, error = _check_file(codex_home, path, env, strict)
    if text is None and error is None:
        return None, None, None, [ConfigWarning(summary=MISSING_PROFILE.format(name=profile, file=path))]
    return ConfigLayer(kind=PROFILE, file=str(path), config=MappingProxyType(table)), text, error, []


def _legacy_profile_warnings(table: Mapping[str, object]) -> list[ConfigWarning]:
    legacy = table.get("profiles")
    if not isinstance(legacy, Mapping) or not legacy:
        return []
    keys = ", ".join(f"`profiles.{name}`" for name in legacy)
    return [ConfigWarning(summary=LEGACY_PROFILE_TABLES.format(keys=keys))]


def load_config(
    codex_home: Path,
    cli_overrides: Sequence[str] = (),
    strict: bool = False,
    env: Mapping[str, str] | None = None,
    profile: str | None = None,
) -> LoadedConfig:
    """Load `codex_home/config.toml` (missing is fine), the `profile`'s file, and `-c key=value` overrides.

    Raises ConfigError for anything fatal: bad `-c` flags, "untrusted", a legacy profile clash, and
    (with `strict`) unknown keys or an invalid file; without `strict` an invalid file is `load_error`
    on the result. `env` (default `os.environ`) decides the default provider.
    """
    env = dict(os.environ) if env is None else env
    path = codex_home / "config.toml"
    cli_table: JsonObj = {}
    for override in cli_overrides:
        key_path, value = parse_cli_override(override)
        cli_table = deep_merge(cli_table, nest(key_path, value))
    cli_layer = ConfigLayer(kind=SESSION_FLAGS, file=None, config=MappingProxyType(cli_table))

    text, file_table, load_error = _check_file(codex_home, path, env, strict)
    user_layer = ConfigLayer(kind="user", file=str(path), config=MappingProxyType(file_table))
    layers: tuple[ConfigLayer, ...] = (user_layer,)
    texts = {str(path): text}
    notes: list[ConfigWarning] = _legacy_profile_warnings(file_table)
    if profile is not None:
        layer, profile_text, profile_error, missing = _profile_layer(codex_home, profile, file_table, env, strict)
        notes += missing
        load_error = load_error or profile_error
        if layer is not None:
            layers += (layer,)
            texts[str(layer.file)] = profile_text
    layers += (cli_layer,)
    warnings = [invalid_config_warning(load_error)] if load_error is not None else []
    warnings = _unknown_key_warnings(layers, strict, texts) + warnings + notes
    unimplemented = [(layer.label, key) for layer in layers for key in schema.unimplemented_keys(layer.config)]
    if unimplemented:
        warnings.append(unimplemented_keys_warning(unimplemented))
    merged: JsonObj = {}
    for layer in layers:
        merged = deep_merge(merged, layer.config)
    try:
        config = _build(codex_home, merged, layers, env, strict)
    except schema.Invalid as exc:
        raise _override_error(exc) from None
    config = replace(config, load_error=load_error)
    return replace(config, warnings=tuple(warnings))


def check_table(codex_home: Path, table: Mapping[str, object], env: Mapping[str, str] | None = None) -> None:
    """Check a would-be config.toml table as the loader would; raises ConfigError in Codex's
    "<cause>\\nin `<key>`\\n" shape (used before writing the file, so pycodex never saves what it cannot load)."""
    try:
        _build(codex_home, table, (), dict(os.environ) if env is None else env, strict=False)
    except schema.Invalid as exc:
        raise _override_error(exc) from None
