"""Walking one skills root through a `SkillFileReader`: find SKILL.md files, read and parse them, within limits.

The walk is breadth-first with names sorted, so results are deterministic. Symlinks are followed only
when they resolve inside the root's real path; anything pointing outside (or unresolvable) is refused
with an error entry. Every failure becomes a `SkillError`; nothing here raises for bad content.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from .agents_yaml import AgentsMetadata, parse_agents_yaml
from .frontmatter import MAX_NAME_CHARS, FrontMatterError, SkillHeader, parse_skill_header
from .model import SkillError, SkillLimits
from .reader import SkillFileReader

__all__ = ["FoundSkill", "ScanBudget", "scan_root"]

SKILL_FILE = "SKILL.md"


@dataclass(frozen=True, slots=True)
class FoundSkill:
    """A SKILL.md found under a root: where it is, its package folder, its name and its front matter."""

    path: Path  # SKILL.md's real location, expressed under the root as given
    package_dir: str  # its directory below the root, `/` separators, "" for the root itself
    name: str
    header: SkillHeader
    contents: str
    agents: AgentsMetadata  # from agents/openai.yaml; defaults when absent or unusable


@dataclass(slots=True)
class ScanBudget:
    """Shared by all roots of one load: the skill cap is per listing, not per root."""

    limits: SkillLimits
    skills_left: int = -1
    seen_files: set[Path] = field(default_factory=set)  # real paths, so a symlinked skill counts once
    exhausted_reported: bool = False

    def __post_init__(self) -> None:
        if self.skills_left < 0:
            self.skills_left = self.limits.max_skills


@dataclass(slots=True)
class _Walk:
    reader: SkillFileReader
    root: Path
    real_root: Path | None  # None: the backend cannot resolve symlinks, so none are followed
    budget: ScanBudget
    include_hidden: bool
    found: list[FoundSkill] = field(default_factory=list)
    errors: list[SkillError] = field(default_factory=list)

    def shown(self, real: Path, reached: Path) -> Path:
        """Where a file is reported: its real location, expressed under the root as the caller named it."""
        if self.real_root is None:
            return reached
        return self.root / real.relative_to(self.real_root)

    def error(self, path: Path, message: str) -> None:
        self.errors.append(SkillError(str(path), message))

    async def real_path(self, path: Path, real_parent: Path, name: str) -> Path | None:
        """`path`'s real location if it may be used, else None (after recording why not)."""
        try:
            info = await self.reader.stat(path)
        except OSError as exc:
            self.error(path, f"cannot read metadata: {exc.strerror or exc}")
            return None
        if not info.is_symlink:
            return real_parent / name
        if self.real_root is None:
            self.error(path, "refusing symlink: this environment cannot resolve it")
            return None
        try:
            target = await self.reader.canonicalize(path)
        except NotImplementedError:
            self.error(path, "refusing symlink: this environment cannot resolve it")
            return None
        except OSError as exc:
            self.error(path, f"broken symlink: {exc.strerror or exc}")
            return None
        if not target.is_relative_to(self.real_root):
            self.error(
                path, f"refusing symlink that escapes the skills root {self.root}: it points to {target}"
            )
            return None
        return target

    async def load_file(self, path: Path, real_path: Path) -> None:
        if real_path in self.budget.seen_files:
            return
        limits = self.budget.limits
        try:
            info = await self.reader.stat(path)
            if not info.is_file:
                return
            if info.size > limits.max_file_bytes:
                self.error(
                    path, f"SKILL.md is too large: {info.size} bytes, the limit is {limits.max_file_bytes}"
                )
                return
            data = await self.reader.read_file(path)
        except OSError as exc:
            self.error(path, f"failed to read file: {exc.strerror or exc}")
            return
        if len(data) > limits.max_file_bytes:  # it grew between stat and read
            self.error(path, f"SKILL.md is too large: more than {limits.max_file_bytes} bytes")
            return
        try:
            contents = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            # Worded like Rust's Utf8Error, which Codex reports.
            if exc.reason == "unexpected end of data":
                detail = f"incomplete utf-8 byte sequence from index {exc.start}"
            else:
                detail = f"invalid utf-8 sequence of {exc.end - exc.start} bytes from index {exc.start}"
            self.error(path, f"failed to read file: {detail}")
            return
        try:
            header = parse_skill_header(contents)
        except FrontMatterError as exc:
            self.error(path, str(exc))
            return
        name = header.name or path.parent.name
        if len(name) > MAX_NAME_CHARS:
            self.error(path, f"invalid name: exceeds maximum length of {MAX_NAME_CHARS} characters")
            return
        if self.budget.skills_left <= 0:
            if not self.budget.exhausted_reported:
                self.budget.exhausted_reported = True
                self.error(path, f"too many skills: only the first {limits.max_skills} are loaded")
            return
        self.budget.skills_left -= 1
        self.budget.seen_files.add(real_path)
        package_dir = path.parent.relative_to(self.root).as_posix()
        agents = await self.load_agents(path.parent)
        self.found.append(
            FoundSkill(path, "" if package_dir == "." else package_dir, name, header, contents, agents)
        )

    async def load_agents(self, skill_dir: Path) -> AgentsMetadata:
        """`agents/openai.yaml` beside SKILL.md; like Codex, a missing or unusable file just means defaults."""
        path = skill_dir / "agents" / "openai.yaml"
        try:
            info = await self.reader.stat(path)
            if info.is_symlink or not info.is_file or info.size > self.budget.limits.max_file_bytes:
                return AgentsMetadata()
            text = (await self.reader.read_file(path)).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return AgentsMetadata()
        return parse_agents_yaml(text, str(skill_dir)) or AgentsMetadata()


def _valid_entry_name(name: str) -> bool:
    return (
        bool(name) and name not in (".", "..") and "/" not in name and "\\" not in name and "\0" not in name
    )


async def scan_root(
    reader: SkillFileReader, root: Path, budget: ScanBudget, *, include_hidden: bool
) -> tuple[list[FoundSkill], list[SkillError]]:
    """All skills below `root` (SKILL.md in the root itself included); a missing root gives nothing."""
    try:
        info = await reader.stat(root)
    except OSError:
        return [], []
    if not info.is_dir:
        return [], []
    try:
        real_root: Path | None = await reader.canonicalize(root)
    except NotImplementedError:
        real_root = None
    except OSError:
        return [], []
    walk = _Walk(reader, root, real_root, budget, include_hidden)
    limits = budget.limits
    queue: deque[tuple[Path, Path, int]] = deque([(root, real_root or root, 0)])
    visited = {real_root or root}
    listed = 0
    while queue:
        directory, real_dir, depth = queue.popleft()
        listed += 1
        if listed > limits.max_directories:
            walk.error(
                root, f"stopped scanning: more than {limits.max_directories} directories below the root"
            )
            break
        try:
            entries = sorted(await reader.list_dir(directory), key=lambda e: e.name)
        except OSError as exc:
            walk.error(directory, f"cannot list directory: {exc.strerror or exc}")
            continue
        for entry in entries:
            if not _valid_entry_name(entry.name):
                walk.error(directory, f"refusing directory entry with an invalid name: {entry.name!r}")
                continue
            child = directory / entry.name
            if entry.name == SKILL_FILE and entry.is_file:
                real = await walk.real_path(child, real_dir, entry.name)
                if real is not None:
                    await walk.load_file(walk.shown(real, child), real)
            elif entry.is_dir and depth < limits.max_depth:
                if entry.name.startswith(".") and not include_hidden:
                    continue
                real = await walk.real_path(child, real_dir, entry.name)
                if real is None or real in visited:
                    continue
                visited.add(real)
                queue.append((child, real, depth + 1))
    return walk.found, walk.errors
