"""Skills from `selectedCapabilityRoots` (thread/start, experimental): parsing the param and discovery.

Each root lives in an execution environment; the caller maps `environmentId` to a `SkillFileReader`
backed by that environment's filesystem. Skills are looked for anywhere below the root (hidden folders
included, as Codex does), up to the scan limits. A missing root contributes nothing.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .model import SelectedRoot, SelectedSkill, SkillError, SkillLimits
from .reader import SkillFileReader
from .scan import ScanBudget, scan_root

__all__ = ["SelectedSkills", "discover_selected", "parse_selected_roots"]


@dataclass(frozen=True, slots=True)
class SelectedSkills:
    """All selected-root skills of a thread, in discovery order (root by root, breadth-first)."""

    skills: tuple[SelectedSkill, ...] = ()
    errors: tuple[SkillError, ...] = ()


def _text(obj: Mapping[str, object], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}.{key} must be a non-empty string")
    return value


def parse_selected_roots(raw: object) -> list[SelectedRoot]:
    """Validate the wire value `[{id, location:{type:"environment", environmentId, path}}]`.

    Raises ValueError with the offending field named; paths must be absolute and free of `..`.
    """
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError("selectedCapabilityRoots must be an array")
    roots: list[SelectedRoot] = []
    seen: set[str] = set()
    for index, entry in enumerate(raw):
        where = f"selectedCapabilityRoots[{index}]"
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where} must be an object")
        root_id = _text(entry, "id", where)
        if "/" in root_id or any(ch.isspace() for ch in root_id):
            raise ValueError(f"{where}.id must not contain `/` or whitespace: {root_id!r}")
        if root_id in seen:
            raise ValueError(f"{where}.id duplicates an earlier root: {root_id!r}")
        seen.add(root_id)
        location = entry.get("location")
        if not isinstance(location, Mapping):
            raise ValueError(f"{where}.location must be an object")
        if location.get("type") != "environment":
            raise ValueError(f'{where}.location.type must be "environment", not {location.get("type")!r}')
        environment_id = _text(location, "environmentId", f"{where}.location")
        path = _text(location, "path", f"{where}.location")
        if not path.startswith("/"):
            raise ValueError(f"{where}.location.path must be absolute: {path!r}")
        if ".." in PurePosixPath(path).parts:
            raise ValueError(f"{where}.location.path must not contain `..`: {path!r}")
        normalized = posixpath.normpath(path)
        normalized = "/" if normalized == "//" else normalized
        roots.append(SelectedRoot(id=root_id, environment_id=environment_id, path=normalized))
    return roots


async def discover_selected(
    roots: Sequence[SelectedRoot],
    reader_for: Callable[[str], SkillFileReader | None],
    limits: SkillLimits | None = None,
) -> SelectedSkills:
    """Scan every root with its environment's reader; an unknown environment becomes an error entry."""
    budget = ScanBudget(limits or SkillLimits())
    skills: list[SelectedSkill] = []
    errors: list[SkillError] = []
    for root in roots:
        reader = reader_for(root.environment_id)
        if reader is None:
            errors.append(
                SkillError(root.path, f"unknown environment `{root.environment_id}` for root `{root.id}`")
            )
            continue
        found, failed = await scan_root(reader, Path(root.path), budget, include_hidden=True)
        errors.extend(failed)
        for item in found:
            skills.append(
                SelectedSkill(
                    name=item.name,
                    description=item.header.description,
                    root=root,
                    package_dir=item.package_dir,
                    contents=item.contents,
                    allow_implicit_invocation=item.agents.allow_implicit_invocation,
                )
            )
    return SelectedSkills(skills=tuple(skills), errors=tuple(errors))
