"""What config.toml says about skills: ``[[skills.config]]`` switches (skills/config/write) and the
installed, enabled plugins whose bundled skills join the user's (``[plugins."<plugin>@<market>"]`` with
copies under ``CODEX_HOME/plugins/cache/<market>/<plugin>/<version>``)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pycodex.json_types import JsonObj

__all__ = ["PluginSkillsRoot", "SkillSettings", "read_skill_settings"]


@dataclass(frozen=True)
class PluginSkillsRoot:
    """The skills folder of one installed plugin."""

    plugin_id: str  # "<plugin>@<marketplace>"
    plugin: str
    root: Path  # the installed copy's skills folder


@dataclass(frozen=True)
class SkillSettings:
    """The user's skill switches (disabled names and paths) and the installed plugins' skill folders."""

    disabled_names: frozenset[str] = frozenset()
    disabled_paths: frozenset[str] = frozenset()
    plugin_roots: tuple[PluginSkillsRoot, ...] = field(default=())


def _switches(data: JsonObj) -> tuple[frozenset[str], frozenset[str]]:
    skills = data.get("skills")
    entries = skills.get("config") if isinstance(skills, dict) else None
    state: dict[tuple[str, str], bool] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("enabled"), bool):
            continue
        for key in ("name", "path"):
            if isinstance(entry.get(key), str):
                state[(key, entry[key])] = entry["enabled"]  # the last entry for a key wins
    off = [key for key, on in state.items() if not on]
    return frozenset(v for k, v in off if k == "name"), frozenset(v for k, v in off if k == "path")


def _plugin_roots(data: JsonObj, codex_home: Path) -> tuple[PluginSkillsRoot, ...]:
    plugins = data.get("plugins")
    roots = []
    for plugin_id, spec in (plugins.items() if isinstance(plugins, dict) else []):
        if not isinstance(spec, dict) or spec.get("enabled", True) is False or "@" not in plugin_id:
            continue
        name, _, market = plugin_id.rpartition("@")
        installed = codex_home / "plugins/cache" / market / name
        for version in sorted(installed.glob("*/skills")) if installed.is_dir() else []:
            roots.append(PluginSkillsRoot(plugin_id, name, version))
    return tuple(roots)


def read_skill_settings(codex_home: Path) -> SkillSettings:
    """The skill settings in ``$CODEX_HOME/config.toml`` (none when it is missing or unreadable)."""
    try:
        data = tomllib.loads((codex_home / "config.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return SkillSettings()
    names, paths = _switches(data)
    return SkillSettings(names, paths, _plugin_roots(data, codex_home))
