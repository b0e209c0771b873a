"""The `skills` namespace tool (`list`, `read`) a thread with selected capability roots offers the model.

The tool's JSON shape and its outputs follow Codex 0.169.0 (a `function_call` with `namespace: "skills"`;
outputs are compact JSON objects, or a bare error text); the descriptions are pycodex's own. Reads go
through the root environment's `SkillFileReader`, are confined to the skill's own folder, and come back
in pages with an opaque `next_cursor`.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Callable, Sequence
from pathlib import Path

from pycodex.json_types import JsonObj

from .model import SelectedSkill
from .prompt import root_aliases
from .reader import SkillFileReader

__all__ = ["PAGE_CHARS", "SkillsTool", "skills_tool_spec"]

PAGE_CHARS = 12_000
LIST_PAGE = 100
# Codex's own error texts, kept so the model sees the same answers.
NOT_AVAILABLE = "skill package is not available"
OUTSIDE = "skill environment is not available for this callback"
READ_FAILED = "failed to read skill resource"


def skills_tool_spec() -> JsonObj:
    """The `tools[]` entry: a namespace with `list` and `read` functions."""
    authority = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"kind": {"type": "string", "enum": [kind]}},
                "required": ["kind"],
                "additionalProperties": False,
            }
            for kind in ("cloud", "executor")
        ]
    }
    return {
        "type": "namespace",
        "name": "skills",
        "description": "Skill packages from the capability roots selected for this thread.",
        "tools": [
            {
                "type": "function",
                "name": "list",
                "description": (
                    "List the skills an authority provides, each with its authority, package and main_resource. "
                    "Give a package to skills.read. When next_cursor is set, call again with it as cursor."
                ),
                "strict": False,
                "parameters": {
                    "type": "object",
                    "properties": {"authority": authority, "cursor": {"type": "string"}},
                    "required": ["authority"],
                    "additionalProperties": False,
                },
            },
            {
                "type": "function",
                "name": "read",
                "description": (
                    "Read a page of a skill. Pass the package as given (root aliases such as e0 are expanded). "
                    "Without resource you get its SKILL.md; for another file of the skill keep the package and "
                    "pass that file's full skill:// identifier as resource. skill_root in the answer is the "
                    "skill's folder on the executor, useful for running its scripts. When next_cursor is set, "
                    "pass it back as cursor for the next page of the same snapshot."
                ),
                "strict": False,
                "parameters": {
                    "type": "object",
                    "properties": {
                        "cursor": {"type": "string"},
                        "package": {"type": "string"},
                        "resource": {"type": "string"},
                    },
                    "required": ["package"],
                },
            },
        ],
    }


def _dump(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class SkillsTool:
    """Answers `skills.list` / `skills.read` calls for one thread's selected skills."""

    def __init__(
        self, skills: Sequence[SelectedSkill], reader_for: Callable[[str], SkillFileReader | None]
    ) -> None:
        self._skills = list(skills)
        self._reader_for = reader_for
        self._aliases = {alias: locator for locator, alias in root_aliases(self._skills).items()}

    async def call(self, name: str, arguments: str) -> str:
        """The `function_call_output.output` text for a call of `name` (`list` or `read`)."""
        try:
            args = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            return f"invalid arguments: {exc.msg} at line {exc.lineno} column {exc.colno}"
        if not isinstance(args, dict):
            return "invalid arguments: expected a JSON object"
        if name == "list":
            return self._list(args)
        if name == "read":
            return await self._read(args)
        return f"unsupported call: skills.{name}"

    def _list(self, args: JsonObj) -> str:
        authority = args.get("authority")
        if authority is None:
            return "missing field `authority`"
        kind = authority.get("kind") if isinstance(authority, dict) else None
        if kind not in ("cloud", "executor"):
            return 'invalid authority: expected {"kind":"cloud"} or {"kind":"executor"}'
        found = sorted(self._skills, key=lambda s: (s.name, s.package)) if kind == "executor" else []
        start = _offset(args.get("cursor"))
        if start is None:
            return "invalid cursor"
        entries = [
            {
                "authority": {"kind": "executor", "id": s.root.id},
                "package": s.package,
                "name": s.name,
                "description": s.description,
                "main_resource": s.path,
            }
            for s in found[start : start + LIST_PAGE]
        ]
        more = start + LIST_PAGE < len(found)
        return _dump(
            {"skills": entries, "warnings": [], "next_cursor": str(start + LIST_PAGE) if more else None}
        )

    def _package(self, package: str) -> SelectedSkill | None:
        alias, _, rest = package.partition("/")
        if alias in self._aliases:
            package = self._aliases[alias] + (f"/{rest}" if rest else "")
        return next((s for s in self._skills if s.package == package.rstrip("/")), None)

    async def _read(self, args: JsonObj) -> str:
        package = args.get("package")
        if package is None:
            return "missing field `package`"
        if not isinstance(package, str):
            return "invalid type for `package`: expected a string"
        skill = self._package(package)
        if skill is None:
            return NOT_AVAILABLE
        resource = args.get("resource") or skill.path
        if not isinstance(resource, str):
            return "invalid type for `resource`: expected a string"
        # Only files inside this skill's own folder, named by their full locator, are readable.
        folder = skill.local_path.rsplit("/", 1)[0]
        prefix = skill.package + "/"
        if not resource.startswith(prefix):
            return OUTSIDE
        local = posixpath.normpath(folder + "/" + resource[len(prefix) :])
        if not local.startswith(folder + "/") or ".." in resource[len(prefix) :].split("/"):
            return OUTSIDE
        reader = self._reader_for(skill.root.environment_id)
        if reader is None:
            return OUTSIDE
        try:
            if not await _stays_inside(reader, Path(local), Path(folder)):
                return OUTSIDE
            text = (await reader.read_file(Path(local))).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return READ_FAILED
        snapshot = hashlib.sha256(text.encode()).hexdigest()[:16]
        start = 0
        cursor = args.get("cursor")
        if cursor is not None:
            tag, _, offset = str(cursor).partition(":")
            parsed = _offset(offset)
            if tag != snapshot or parsed is None or parsed > len(text):
                return "cursor is stale or invalid: read again without a cursor"
            start = parsed
        end = min(start + PAGE_CHARS, len(text))
        return _dump(
            {
                "resource": resource,
                "contents": text[start:end],
                "skill_root": folder,
                "next_cursor": f"{snapshot}:{end}" if end < len(text) else None,
            }
        )


def _offset(raw: object) -> int | None:
    if raw is None:
        return 0
    text = str(raw)
    return int(text) if text.isdigit() else None


async def _stays_inside(reader: SkillFileReader, path: Path, folder: Path) -> bool:
    """False when a symlink takes `path` out of the skill folder (or cannot be checked)."""
    try:
        return (await reader.canonicalize(path)).is_relative_to(await reader.canonicalize(folder))
    except NotImplementedError:
        return not (await reader.stat(path)).is_symlink
