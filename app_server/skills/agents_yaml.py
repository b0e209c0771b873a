"""A skill's optional `agents/openai.yaml`: UI interface, tool dependencies and the invocation policy.

Codex reads this file next to SKILL.md and silently ignores it when it is unusable; so do we. The YAML
is parsed with a small indentation-based subset (nested mappings, `- ` sequences of scalars or mappings,
scalars as in the front matter parser); anything outside it makes the whole file be ignored.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from pycodex.json_types import JsonObj, JsonValue

from .frontmatter import FrontMatterError, flow_sequence, scalar_value

__all__ = ["AgentsMetadata", "parse_agents_yaml"]

_KEY = re.compile(r"^(?P<key>[A-Za-z0-9_][A-Za-z0-9_.\-]*)[ \t]*:(?:[ \t]+(?P<value>.*))?$")
_INTERFACE_KEYS = (
    ("displayName", "display_name"),
    ("shortDescription", "short_description"),
    ("iconSmall", "icon_small"),
    ("iconLarge", "icon_large"),
    ("iconSmallUrl", None),  # filled from a plugin catalog in Codex; never from the file
    ("iconLargeUrl", None),
    ("brandColor", "brand_color"),
    ("defaultPrompt", "default_prompt"),
)
_DEPENDENCY_KEYS = ("type", "value", "description", "transport", "command", "url")


@dataclass(frozen=True, slots=True)
class AgentsMetadata:
    """What a skill's ``agents/openai.yaml`` adds: interface, dependencies, whether it may be implicit."""

    interface: JsonObj | None = None  # wire `SkillInterface`, every key present
    dependencies: JsonObj | None = None  # wire `SkillDependencies`
    allow_implicit_invocation: bool = True


class _Unsupported(ValueError):
    pass


def _lines(text: str) -> list[tuple[int, int, str]]:
    """(line number, indent, content) for every meaningful line."""
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if raw[indent : indent + 1] == "\t":
            raise _Unsupported("tab indentation")
        out.append((number, indent, stripped))
    return out


def _value(raw: str, number: int) -> JsonValue:
    return flow_sequence(raw, number) if raw.startswith("[") else scalar_value(raw, number)


def _block(lines: list[tuple[int, int, str]], i: int, indent: int) -> tuple[JsonValue, int]:
    """Parse the mapping or sequence whose lines sit at exactly `indent`, starting at line index i."""
    if lines[i][2] == "-" or lines[i][2].startswith("- "):
        items: list[JsonValue] = []
        while (
            i < len(lines) and lines[i][1] == indent and (lines[i][2] == "-" or lines[i][2].startswith("- "))
        ):
            number, _, text = lines[i]
            rest = text[1:].strip()
            if not rest:
                if i + 1 < len(lines) and lines[i + 1][1] > indent:
                    value, i = _block(lines, i + 1, lines[i + 1][1])
                    items.append(value)
                else:
                    items.append(None)
                    i += 1
            elif _KEY.match(rest):
                # `- key: v` opens a mapping whose keys line up with `key`.
                inner = indent + (len(text) - len(rest))
                lines[i] = (number, inner, rest)
                value, i = _block(lines, i, inner)
                items.append(value)
            else:
                items.append(_value(rest, number))
                i += 1
        return items, i
    mapping: JsonObj = {}
    while i < len(lines) and lines[i][1] == indent:
        number, _, text = lines[i]
        match = _KEY.match(text)
        if match is None:
            raise _Unsupported(f"line {number}")
        key, raw = match["key"], (match["value"] or "").strip()
        if key in mapping:
            raise _Unsupported(f"duplicate key {key}")
        i += 1
        if raw and not raw.startswith("#"):
            if raw[:1] in ("|", ">"):
                raise _Unsupported("block scalars")
            mapping[key] = _value(raw, number)
        elif i < len(lines) and (
            lines[i][1] > indent or (lines[i][1] == indent and lines[i][2].startswith("- "))
        ):
            mapping[key], i = _block(lines, i, lines[i][1])
        else:
            mapping[key] = None
    return mapping, i


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _icon(value: object, skill_dir: str) -> str | None:
    """Icon paths are relative to the skill folder; one that climbs out of it is dropped."""
    if not isinstance(value, str) or not value:
        return None
    resolved = posixpath.normpath(posixpath.join(skill_dir, value))
    return resolved if resolved.startswith(skill_dir.rstrip("/") + "/") else None


def parse_agents_yaml(text: str, skill_dir: str) -> AgentsMetadata | None:
    """The file's metadata, or None when it cannot be used (as Codex, without an error entry)."""
    try:
        lines = _lines(text)
        if not lines:
            return AgentsMetadata()
        if lines[0][1] != 0:
            return None
        root, end = _block(lines, 0, 0)
        if end != len(lines) or not isinstance(root, dict):
            return None
    except (_Unsupported, FrontMatterError):
        return None
    interface = None
    raw_interface = root.get("interface")
    if isinstance(raw_interface, dict):
        interface = {}
        for wire, key in _INTERFACE_KEYS:
            value = raw_interface.get(key) if key else None
            interface[wire] = _icon(value, skill_dir) if key in ("icon_small", "icon_large") else _text(value)
    dependencies = None
    raw_deps = root.get("dependencies")
    if isinstance(raw_deps, dict) and isinstance(raw_deps.get("tools"), list):
        tools = []
        for tool in raw_deps["tools"]:
            if not isinstance(tool, dict) or not _text(tool.get("type")) or not _text(tool.get("value")):
                return None
            tools.append({k: tool[k] for k in _DEPENDENCY_KEYS if isinstance(tool.get(k), str)})
        dependencies = {"tools": tools}
    allow = True
    policy = root.get("policy")
    if isinstance(policy, dict):
        allow = str(policy.get("allow_implicit_invocation", "true")).lower() != "false"
    return AgentsMetadata(interface=interface, dependencies=dependencies, allow_implicit_invocation=allow)
