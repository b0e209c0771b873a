"""The effective configuration as Codex 0.169's `config/read` reports it.

`config` is every key Codex knows, with its default when no layer sets it (the table lives in
effective_defaults.json); a section the user touches expands to its full default shape with the user's
values merged in, and keys Codex does not know are left out. `origins` names, for every leaf a layer
sets, the highest-precedence enabled layer that set it. `layers` (only with `includeLayers`) lists the
layers highest first: session flags, project `.codex/` folders from `cwd` up to the project root, the
user's config.toml, then the system file. Project layers of an untrusted project are listed but
disabled (`disabledReason`) and contribute nothing.

    result = effective_config(loaded, cwd=Path("/repo/sub"), include_layers=True)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from app_server.config import schema
from app_server.config.errors import ConfigError
from app_server.config.loader import PROFILE, SESSION_FLAGS, LoadedConfig, plain_table
from app_server.config.tables import deep_merge, parse_toml
from pycodex.git_repo import DOT_GIT, is_repository_root
from pycodex.json_types import JsonObj, JsonValue

SYSTEM_CONFIG = Path("/etc/codex/config.toml")
PROJECT_DIR = ".codex"
UNTRUSTED_REASON = (
    "To load project-local config, hooks, and exec policies, add {root} as a trusted project in {user_file}."
)


@dataclass(frozen=True)
class Defaults:
    """Codex's recorded effective-config defaults (``effective_defaults.json``)."""

    #: Every top-level key Codex reports, with its default value.
    top: Mapping[str, object]
    #: Sections reported only when set -> the shape they are reported in.
    when_set: Mapping[str, object]
    #: Sections of named entries (``mcp_servers``...) -> the shape of one of its entries.
    entries: Mapping[str, Mapping[str, object]]


@cache
def defaults() -> Defaults:
    """The recorded default table (read once; the JSON file is package data)."""
    text = resources.files("app_server.config").joinpath("effective_defaults.json").read_text("utf-8")
    data = json.loads(text)
    return Defaults(top=data["top"], when_set=data["when_set"], entries=data["entries"])


def layer_version(config: Mapping[str, object]) -> str:
    """Codex's layer version: sha256 of the layer's table as compact JSON with sorted keys."""
    canonical = json.dumps(plain_table(config), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ReadLayer:
    """One layer as config/read reports it."""

    name: JsonObj
    config: JsonObj
    disabled_reason: str | None = None

    def as_json(self) -> JsonObj:
        """The layer as ``config/read`` reports it (name, version, config, and why it is disabled)."""
        out: JsonObj = {"name": self.name, "version": layer_version(self.config), "config": self.config}
        if self.disabled_reason is not None:
            out["disabledReason"] = self.disabled_reason
        return out


def _shape(template: object, value: object) -> JsonValue:
    """`value` laid over `template`: known keys only where the template is a table, else the value."""
    if isinstance(template, Mapping) and isinstance(value, Mapping):
        out = dict(template)
        for key, sub in value.items():
            if key in template:
                out[key] = _shape(template[key], sub)
        return out
    return value


def _entry(section: str, template: Mapping[str, object], entry: object) -> JsonValue:
    if section == "mcp_servers":
        # The recorded shape is a stdio server's; other transports keep what the user wrote.
        if isinstance(entry, Mapping) and "command" in entry:
            return deep_merge(template, entry)
        return entry
    return _shape(template, entry)


def _effective_value(key: str, value: object) -> JsonValue:
    table = defaults()
    if key in table.entries and isinstance(value, Mapping):
        return {name: _entry(key, table.entries[key], entry) for name, entry in value.items()}
    if key in table.when_set:
        return _shape(table.when_set[key], value)
    default = table.top[key]
    if isinstance(default, Mapping) and isinstance(value, Mapping):
        return deep_merge(default, value)
    return value


def effective_table(merged: Mapping[str, object]) -> JsonObj:
    """Codex's `config` object for a merged settings table."""
    out: JsonObj = {}
    for key, default in defaults().top.items():
        out[key] = _effective_value(key, plain_table(merged[key])) if key in merged else default
    return out


def unknown_dotted_keys(table: Mapping[str, object]) -> list[str]:
    """Dotted names of the keys Codex ignores: unknown top-level and provider keys, and unknown keys
    inside sections whose full shape is known (`tui`)."""
    found = schema.unknown_keys(table)

    def walk(template: Mapping[str, object], value: Mapping[str, object], prefix: str) -> None:
        for key, sub in value.items():
            if key not in template:
                found.append(prefix + key)
                continue
            inner = template[key]
            if isinstance(inner, Mapping) and isinstance(sub, Mapping):
                walk(inner, sub, f"{prefix}{key}.")

    tui, shape = table.get("tui"), defaults().when_set["tui"]
    if isinstance(tui, Mapping) and isinstance(shape, Mapping):  # the recorded shape is always a table
        walk(shape, tui, "tui.")
    return sorted(found)


def _is_marker(directory: Path, marker: str) -> bool:
    if marker == DOT_GIT:  # the product's one repository check (an empty `.git` folder is none)
        return is_repository_root(directory)
    return (directory / marker).exists()


def project_root(cwd: Path, markers: Sequence[str]) -> Path:
    """The nearest ancestor of `cwd` holding a root marker, else `cwd` itself."""
    for directory in (cwd, *cwd.parents):
        if any(_is_marker(directory, marker) for marker in markers):
            return directory
    return cwd


def _is_trusted(projects: object, *paths: Path) -> bool:
    if not isinstance(projects, Mapping):
        return False
    for path in paths:
        entry = projects.get(str(path))
        if isinstance(entry, Mapping) and entry.get("trust_level") == "trusted":
            return True
    return False


def project_layers(cwd: Path, user_table: Mapping[str, JsonValue], user_file: str) -> list[ReadLayer]:
    """`.codex/config.toml` layers from `cwd` up to the project root, deepest first."""
    markers = user_table.get("project_root_markers", [".git"])
    root = project_root(cwd, [m for m in markers if isinstance(m, str)])
    trusted = _is_trusted(user_table.get("projects"), root, cwd)
    reason = None if trusted else UNTRUSTED_REASON.format(root=root, user_file=user_file)
    layers: list[ReadLayer] = []
    chain = [cwd, *cwd.parents]
    for directory in chain[: chain.index(root) + 1]:
        path = directory / PROJECT_DIR / "config.toml"
        if not path.is_file():
            continue
        try:
            table = parse_toml(path.read_text(encoding="utf-8"), str(path))
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"Failed to read config file {path}: {exc}") from None
        name = {"type": "project", "dotCodexFolder": str(directory / PROJECT_DIR)}
        layers.append(ReadLayer(name=name, config=table, disabled_reason=reason))
    return layers


def _system_layer(system_config: Path) -> ReadLayer:
    table: JsonObj = {}
    if system_config.is_file():
        table = parse_toml(system_config.read_text(encoding="utf-8"), str(system_config))
    return ReadLayer(name={"type": "system", "file": str(system_config)}, config=table)


def read_layers(loaded: LoadedConfig, cwd: Path | None, system_config: Path = SYSTEM_CONFIG) -> list[ReadLayer]:
    """Every layer config/read reports, highest precedence first."""
    user_file = str(loaded.config_path)
    user_table: JsonObj = {}
    session: JsonObj = {}
    profiles: list[ReadLayer] = []  # `--profile NAME`: NAME.config.toml, above config.toml
    for layer in loaded.layers:
        if layer.kind == "user":
            user_table = plain_table(layer.config)
        elif layer.kind == SESSION_FLAGS:
            session = deep_merge(session, plain_table(layer.config))
        elif layer.kind == PROFILE:
            name = {"type": "user", "file": layer.file, "profile": Path(layer.file or "").name.removesuffix(".config.toml")}
            profiles.insert(0, ReadLayer(name=name, config=plain_table(layer.config)))
    layers: list[ReadLayer] = []
    if session:
        layers.append(ReadLayer(name={"type": "sessionFlags"}, config=session))
    layers.extend(profiles)
    if cwd is not None:
        layers.extend(project_layers(cwd, user_table, user_file))
    layers.append(ReadLayer(name={"type": "user", "file": user_file, "profile": None}, config=user_table))
    layers.append(_system_layer(system_config))
    return layers


def _leaves(table: Mapping[str, object], prefix: str = "") -> list[str]:
    keys: list[str] = []
    for key, value in table.items():
        if isinstance(value, Mapping) and value:
            keys.extend(_leaves(value, f"{prefix}{key}."))
        elif not isinstance(value, Mapping):
            keys.append(prefix + key)
    return keys


def effective_config(
    loaded: LoadedConfig, cwd: Path | None, include_layers: bool, system_config: Path = SYSTEM_CONFIG
) -> JsonObj:
    """The `config/read` result: `config`, `origins`, and `layers` only when asked for."""
    layers = read_layers(loaded, cwd, system_config)
    enabled = [layer for layer in layers if layer.disabled_reason is None]
    merged: JsonObj = {}
    origins: JsonObj = {}
    for layer in reversed(enabled):  # lowest first, so higher layers overwrite
        merged = deep_merge(merged, layer.config)
        meta = {"name": layer.name, "version": layer_version(layer.config)}
        for key in _leaves(layer.config):
            origins[key] = meta
    result: JsonObj = {"config": effective_table(merged), "origins": origins}
    if include_layers:
        result["layers"] = [layer.as_json() for layer in layers]
    return result
