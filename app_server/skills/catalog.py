"""The app-server's own skills per cwd (`.agents/skills` of the project, `CODEX_HOME/skills`) and `skills/list`.

Repo skills come from `<dir>/.agents/skills` and the older `<dir>/.codex/skills` for every dir from the
project root (the nearest ancestor holding a root marker, default `.git`) down to the cwd; with no
marker, from the cwd only. User skills come from `CODEX_HOME/skills` and `$HOME/.agents/skills` (hidden
folders are skipped); pycodex's system skills from `CODEX_HOME/skills/.pycodex-system` (see ``bundled``); installed plugins'
skills as `<plugin>:<skill>` (see ``settings``). Results are cached per cwd until `force_reload`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pycodex.git_repo import DOT_GIT
from pycodex.json_types import JsonObj

from .bundled import SYSTEM_DIR
from .model import SCOPE_ORDER, Skill, SkillError, SkillLimits, SkillScope, SkillSet
from .reader import LocalSkillReader, SkillFileReader
from .scan import ScanBudget, scan_root
from .settings import PluginSkillsRoot, read_skill_settings

__all__ = ["SkillsCatalog"]

REPO_SKILLS_DIRS = ((".agents", "skills"), (".codex", "skills"))


class SkillsCatalog:
    """`await catalog.list_for_cwds(cwds, force_reload)` answers `skills/list`; `skills_for_cwd` feeds turns."""

    def __init__(
        self,
        codex_home: Path,
        project_root_markers: Sequence[str] = (".git",),
        *,
        reader: SkillFileReader | None = None,
        limits: SkillLimits | None = None,
        user_home: Path | None = None,
    ) -> None:
        self._codex_home = Path(codex_home)
        self._user_home = Path(user_home) if user_home is not None else Path.home()
        self._markers = tuple(project_root_markers)
        self._reader: SkillFileReader = reader or LocalSkillReader()
        self._limits = limits or SkillLimits()
        self._cache: dict[str, SkillSet] = {}
        self._extra_roots: tuple[Path, ...] = ()

    @property
    def user_roots(self) -> list[Path]:
        """The user's skill folders: ``$CODEX_HOME/skills`` and ``~/.agents/skills``."""
        return list(dict.fromkeys([self._codex_home / "skills", self._user_home / ".agents" / "skills"]))

    def set_extra_roots(self, roots: Sequence[str | Path]) -> None:
        """skills/extraRoots/set: more folders searched like user ones, replacing the previous set."""
        self._extra_roots = tuple(Path(r) for r in roots)
        self._cache.clear()

    def invalidate(self, cwd: str | Path | None = None) -> None:
        """Forget cached results: for one cwd, or all of them."""
        if cwd is None:
            self._cache.clear()
        else:
            self._cache.pop(str(cwd), None)

    async def list_for_cwds(self, cwds: Sequence[str | Path], force_reload: bool = False) -> JsonObj:
        """The `skills/list` result: `{data: [{cwd, skills, errors}, ...]}`, one entry per cwd in order."""
        data = [(await self.skills_for_cwd(cwd, force_reload=force_reload)).to_wire() for cwd in cwds]
        return {"data": data}

    async def skills_for_cwd(self, cwd: str | Path, *, force_reload: bool = False) -> SkillSet:
        """The skills ``cwd`` sees (cached per cwd; ``force_reload`` reads the folders again)."""
        key = str(cwd)
        cached = self._cache.get(key)
        if cached is not None and not force_reload:
            return cached
        result = await self._load(key)
        self._cache[key] = result
        return result

    async def project_root(self, cwd: Path) -> Path | None:
        """The nearest ancestor of `cwd` (itself included) holding a root marker, or None."""
        for candidate in (cwd, *cwd.parents):
            for marker in self._markers:
                if await self._has_marker(candidate, marker):
                    return candidate
        return None

    async def _has_marker(self, folder: Path, marker: str) -> bool:
        """Whether `folder/marker` exists; for `.git`, the product's one repository check (pycodex/git_repo.py:
        a file, or a folder holding HEAD), asked through the reader, which may be a remote environment's."""
        try:
            found = await self._reader.stat(folder / marker)
            if marker == DOT_GIT and not found.is_file:
                await self._reader.stat(folder / marker / "HEAD")
        except OSError:
            return False
        return True

    async def repo_roots(self, cwd: Path) -> list[Path]:
        """The repo skill folders that apply to `cwd`, outermost first."""
        top = await self.project_root(cwd)
        if top is None:
            chain = [cwd]
        else:
            chain = [p for p in reversed(cwd.parents) if p == top or top in p.parents] + [cwd]
        return [folder.joinpath(*parts) for folder in dict.fromkeys(chain) for parts in REPO_SKILLS_DIRS]

    async def _load(self, cwd_text: str) -> SkillSet:
        cwd = Path(os.path.abspath(cwd_text))
        budget = ScanBudget(self._limits)
        skills: list[Skill] = []
        errors: list[SkillError] = []
        roots: list[tuple[Path, SkillScope]] = [(r, "repo") for r in await self.repo_roots(cwd)]
        roots += [(r, "user") for r in [*self.user_roots, *self._extra_roots] if r not in {seen for seen, _ in roots}]
        roots.append((self._codex_home.joinpath("skills", *SYSTEM_DIR), "system"))
        settings = read_skill_settings(self._codex_home)
        sources: list[tuple[Path, SkillScope, PluginSkillsRoot | None]] = [(r, s, None) for r, s in roots]
        sources += [(plugin.root, "user", plugin) for plugin in settings.plugin_roots]
        for root, scope, plugin in sources:
            found, failed = await scan_root(self._reader, root, budget, include_hidden=False)
            errors.extend(failed)
            for item in found:
                relative = f"{item.package_dir}/SKILL.md".lstrip("/")
                skills.append(
                    Skill(
                        name=f"{plugin.plugin}:{item.name}" if plugin else item.name,
                        plugin_id=plugin.plugin_id if plugin else None,
                        description=item.header.description,
                        path=str(item.path),
                        scope=scope,
                        root=str(root),
                        relative_path=relative,
                        contents=item.contents,
                        short_description=item.header.short_description,
                        interface=item.agents.interface,
                        dependencies=item.agents.dependencies,
                        allow_implicit_invocation=item.agents.allow_implicit_invocation,
                    )
                )
        off_names, off_paths = settings.disabled_names, settings.disabled_paths
        skills = [replace(s, enabled=False) if s.name in off_names or s.path in off_paths else s for s in skills]
        skills.sort(key=lambda s: (SCOPE_ORDER[s.scope], s.name, s.path))
        errors.sort(key=lambda e: e.path)
        return SkillSet(cwd=cwd_text, skills=tuple(skills), errors=tuple(errors))
