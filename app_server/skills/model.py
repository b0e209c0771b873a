"""Value types of the skills package: discovered skills, load errors, limits, and their wire shapes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pycodex.json_types import JsonObj

__all__ = [
    "SCOPE_ORDER",
    "SelectedRoot",
    "SelectedSkill",
    "Skill",
    "SkillError",
    "SkillLimits",
    "SkillScope",
    "SkillSet",
]

SkillScope = Literal["user", "repo", "system", "admin"]
# skills/list order: repo skills first, then the user's, then system and admin ones.
SCOPE_ORDER: dict[str, int] = {"repo": 0, "user": 1, "system": 2, "admin": 3}


@dataclass(frozen=True, slots=True)
class SkillLimits:
    """Bounds on one scan of one root, so a huge or hostile tree cannot stall or flood a turn."""

    max_file_bytes: int = 64 * 1024
    max_skills: int = 200
    max_depth: int = 6  # directory levels below the root (Codex finds skills 6 levels down, not 7)
    max_directories: int = 2000


@dataclass(frozen=True, slots=True)
class SkillError:
    """A SKILL.md that failed to load, and why."""

    path: str
    message: str

    def to_wire(self) -> JsonObj:
        """The v2 SkillErrorInfo dict."""
        return {"path": self.path, "message": self.message}


@dataclass(frozen=True, slots=True)
class Skill:
    """A skill found on the app-server's own filesystem (a repo `.agents/skills` or `CODEX_HOME/skills`)."""

    name: str
    description: str
    path: str  # absolute path of SKILL.md
    scope: SkillScope
    root: str  # the scanned directory, shown in the model's roots table
    relative_path: str  # path of SKILL.md below `root`, with `/` separators
    contents: str  # the whole file, front matter included: what a `<skill>` message carries
    short_description: str | None = None
    interface: JsonObj | None = None  # from agents/openai.yaml, already in wire form
    dependencies: JsonObj | None = None
    allow_implicit_invocation: bool = True  # False: not advertised to the model, still usable via `$name`
    enabled: bool = True
    plugin_id: str | None = None

    def to_wire(self) -> JsonObj:
        """One `SkillMetadata` in Codex's key order; the optional keys only when the skill has them."""
        out: JsonObj = {"name": self.name, "description": self.description}
        if self.short_description is not None:
            out["shortDescription"] = self.short_description
        if self.interface is not None:
            out["interface"] = self.interface
        if self.dependencies is not None:
            out["dependencies"] = self.dependencies
        out.update(path=self.path, scope=self.scope, enabled=self.enabled, pluginId=self.plugin_id)
        return out


@dataclass(frozen=True, slots=True)
class SkillSet:
    """What one cwd sees: its skills in listing order and the files that failed to load."""

    cwd: str
    skills: tuple[Skill, ...]
    errors: tuple[SkillError, ...]

    def to_wire(self) -> JsonObj:
        """The ``skills/list`` entry for this cwd."""
        return {
            "cwd": self.cwd,
            "skills": [s.to_wire() for s in self.skills],
            "errors": [e.to_wire() for e in self.errors],
        }


@dataclass(frozen=True, slots=True)
class SelectedRoot:
    """One `selectedCapabilityRoots` entry: a directory of skills inside an execution environment."""

    id: str
    environment_id: str
    path: str  # absolute, in the environment's filesystem

    @property
    def locator(self) -> str:
        """`skill://<id><abs path>`: the root's source locator as the model sees it."""
        return f"skill://{self.id}{self.path}"


@dataclass(frozen=True, slots=True)
class SelectedSkill:
    """A skill from a selected capability root, addressed by `skill://` locators, not local paths."""

    name: str
    description: str
    root: SelectedRoot
    package_dir: str  # directory of SKILL.md below the root ("" for the root itself), `/` separators
    contents: str
    allow_implicit_invocation: bool = True

    @property
    def package(self) -> str:
        """The skill's package locator (`skill://<id><root>/<dir>`)."""
        return self.root.locator + (f"/{self.package_dir}" if self.package_dir else "")

    @property
    def path(self) -> str:
        """The `skill://` locator of its SKILL.md: what a `<skill>` message and a skill input name."""
        return f"{self.package}/SKILL.md"

    @property
    def local_path(self) -> str:
        """SKILL.md's absolute path inside the environment."""
        return (
            f"{self.root.path.rstrip('/')}/"
            + (f"{self.package_dir}/" if self.package_dir else "")
            + "SKILL.md"
        )
