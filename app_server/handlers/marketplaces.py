"""Local plugin marketplaces: marketplace/add and remove, plugin/list, installed, read, install, uninstall.

A marketplace is a folder with a manifest (``.agents/plugins/marketplace.json`` and the like) listing
plugins by name and local path; a plugin folder has ``.codex-plugin/plugin.json`` (version, description)
and may carry ``skills/<name>/SKILL.md``. State lives where Codex keeps it: ``[marketplaces.<name>]``
(``source_type``, ``source``) and ``[plugins."<plugin>@<marketplace>"]`` (``enabled``) in config.toml, and
installed copies under ``CODEX_HOME/plugins/cache/<marketplace>/<plugin>/<version>``. pycodex lists and
installs plugins but does not load their skills, hooks or MCP servers into threads yet."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from app_server.protocol import responses_plugins as rp
from app_server.skills.frontmatter import parse_skill_header
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["MANIFESTS", "Marketplace", "Store"]

# Where a marketplace root keeps its manifest, in the order they are looked for.
MANIFESTS = (".agents/plugins/marketplace.json", ".claude-plugin/marketplace.json")


@dataclass(frozen=True)
class Marketplace:
    name: str
    manifest: Path
    plugins: tuple[JsonObj, ...]

    @property
    def root(self) -> Path:
        for name in MANIFESTS:
            if self.manifest.as_posix().endswith("/" + name):
                return self.manifest.parents[name.count("/")]
        return self.manifest.parent

    def plugin_dir(self, entry: JsonObj) -> Path:
        source = entry.get("source")
        raw = source.get("path") if isinstance(source, dict) else source
        return (self.root / str(raw or f"./plugins/{entry.get('name')}")).resolve()

    def find(self, name: str) -> JsonObj:
        for entry in self.plugins:
            if entry.get("name") == name:
                return entry
        raise InvalidRequest(f"plugin `{name}` was not found in marketplace `{self.name}`")


def load_marketplace(manifest: Path) -> Marketplace:
    if not manifest.is_file():
        raise InvalidRequest(f"marketplace file `{manifest}` does not exist")
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidRequest(f"invalid marketplace file `{manifest}`: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        raise InvalidRequest(f"invalid marketplace file `{manifest}`: missing marketplace name")
    plugins = tuple(p for p in data.get("plugins") or [] if isinstance(p, dict) and isinstance(p.get("name"), str))
    return Marketplace(data["name"], manifest, plugins)


def manifest_in(root: Path) -> Path:
    for name in MANIFESTS:
        if (root / name).is_file():
            return root / name
    raise InvalidRequest(f"invalid marketplace file `{root}`: marketplace root does not contain a supported manifest")


def _plugin_meta(folder: Path) -> JsonObj:
    try:
        data = json.loads((folder / ".codex-plugin/plugin.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


class Store:
    """The marketplace and plugin state of one CODEX_HOME."""

    def __init__(self, codex_home: Path) -> None:
        self.home = codex_home
        self.config = codex_home / "config.toml"

    def _table(self, key: str) -> JsonObj:
        try:
            data = tomllib.loads(self.config.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            return {}
        table = data.get(key)
        return table if isinstance(table, dict) else {}

    def _append(self, text: str) -> None:
        with self.config.open("a", encoding="utf-8") as handle:
            handle.write(text)

    def _drop_section(self, header: str) -> None:
        """Remove the ``[header]`` table (up to the next table) from config.toml."""
        lines = self.config.read_text(encoding="utf-8").splitlines(keepends=True)
        out, skipping = [], False
        for line in lines:
            stripped = line.strip()
            if stripped.startswith("["):
                skipping = stripped == f"[{header}]"
            if not skipping:
                out.append(line)
        self.config.write_text("".join(out).rstrip("\n") + "\n", encoding="utf-8")

    # -- marketplaces ------------------------------------------------------------------------
    def sources(self) -> dict[str, str]:
        return {name: str(spec.get("source")) for name, spec in self._table("marketplaces").items()
                if isinstance(spec, dict) and spec.get("source_type") == "local"}

    def add(self, root: Path) -> tuple[str, bool]:
        market = load_marketplace(manifest_in(root))
        known = self.sources()
        if market.name in known:
            if Path(known[market.name]) == root:
                return market.name, True
            raise InvalidRequest(f"marketplace `{market.name}` is already added from {known[market.name]}")
        self._append(f'\n[marketplaces.{_toml_key(market.name)}]\nsource_type = "local"\n'
                     f"source = {json.dumps(str(root))}\n")
        return market.name, False

    def remove(self, name: str) -> None:
        if name not in self.sources():
            raise InvalidRequest(f"marketplace `{name}` is not configured or installed")
        self._drop_section(f"marketplaces.{_toml_key(name)}")

    def marketplaces(self) -> tuple[list[Marketplace], list[rp.MarketplaceLoadErrorInfo]]:
        found: list[Marketplace] = []
        errors: list[rp.MarketplaceLoadErrorInfo] = []
        for root in self.sources().values():
            try:
                found.append(load_marketplace(manifest_in(Path(root))))
            except InvalidRequest as exc:
                errors.append(rp.MarketplaceLoadErrorInfo(marketplace_path=root, message=exc.message))
        return found, errors

    # -- plugins -----------------------------------------------------------------------------
    def installed_dir(self, market: str, plugin: str) -> Path:
        return self.home / "plugins/cache" / market / plugin

    def summary(self, market: Marketplace, entry: JsonObj) -> rp.PluginSummary:
        name = str(entry["name"])
        plugin_id = f"{name}@{market.name}"
        folder = market.plugin_dir(entry)
        meta = _plugin_meta(folder)
        installed = self.installed_dir(market.name, name).is_dir()
        spec = self._table("plugins").get(plugin_id)
        enabled = installed and (not isinstance(spec, dict) or spec.get("enabled", True) is not False)
        local_version = meta.get("version")
        keywords = meta.get("keywords")
        return rp.PluginSummary(
            id=plugin_id, remote_plugin_id=None, version=None,
            local_version=local_version if isinstance(local_version, str) else None,
            name=name, share_context=None, source={"type": "local", "path": str(folder)},
            installed=installed, installed_at=None, enabled=enabled, install_policy="AVAILABLE",
            install_policy_source=None, must_show_installation_interstitial=None, auth_policy="ON_INSTALL",
            availability="AVAILABLE", disabled_reason=None, eligible_plan_types=None, interface=None,
            keywords=[str(k) for k in keywords] if isinstance(keywords, list) else [],
        )

    def detail(self, market: Marketplace, entry: JsonObj) -> rp.PluginDetail:
        folder = market.plugin_dir(entry)
        skills: list[rp.SkillSummary] = []
        for path in sorted(folder.glob("skills/*/SKILL.md")):
            try:
                header = parse_skill_header(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            skills.append(rp.SkillSummary(
                name=f"{entry['name']}:{header.name}", description=header.description, short_description=None,
                interface=None, path=str(path), enabled=True,
            ))
        description = _plugin_meta(folder).get("description")
        return rp.PluginDetail(
            marketplace_name=market.name, marketplace_path=str(market.manifest),
            summary=self.summary(market, entry), share_url=None,
            description=description if isinstance(description, str) else None, skills=skills,
            onboarding_skill=None, hooks=[], apps=[], app_templates=[], mcp_servers=[], scheduled_tasks=None,
        )

    def install(self, market: Marketplace, entry: JsonObj) -> None:
        folder = market.plugin_dir(entry)
        if not folder.is_dir():
            raise InvalidRequest(f"plugin source `{folder}` does not exist")
        version = str(_plugin_meta(folder).get("version") or "local")
        target = self.installed_dir(market.name, str(entry["name"]))
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(folder, target / version, symlinks=True)
        plugin_id = f"{entry['name']}@{market.name}"
        if plugin_id not in self._table("plugins"):
            self._append(f"\n[plugins.{json.dumps(plugin_id)}]\nenabled = true\n")

    def uninstall(self, plugin_id: str) -> bool:
        """Remove a locally installed plugin; False when ``plugin_id`` is not one."""
        name, _, market = plugin_id.rpartition("@")
        if not name or market not in self.sources():
            return False
        target = self.installed_dir(market, name)
        if target.exists():
            shutil.rmtree(target)
        if plugin_id in self._table("plugins"):
            self._drop_section(f"plugins.{json.dumps(plugin_id)}")
        return True
