"""The YAML front matter of a SKILL.md: splitting it off and parsing the small subset skills use.

Supported: top-level `key: value` lines; plain, "double" and 'single' quoted scalars; `>`/`|` block
scalars; indented continuation of plain scalars; one nested level of `key: value` or `- item` under a
key with an empty value; `[a, b]` flow sequences; `#` comments. Anything else is an error with a
line number, never a guess. Error texts for the common failures match Codex's (`missing field ...`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "MAX_NAME_CHARS",
    "FrontMatterError",
    "SkillHeader",
    "flow_sequence",
    "parse_front_matter",
    "parse_skill_header",
    "scalar_value",
    "split_front_matter",
]

MAX_NAME_CHARS = 64
MISSING_FRONT_MATTER = "missing YAML frontmatter delimited by ---"

# A YAML value: a string, a list of strings (sequence) or a one-level mapping of strings.
Value = str | list[str] | dict[str, str]

_KEY_LINE = re.compile(r"^(?P<key>[A-Za-z0-9_][A-Za-z0-9_.\-]*)[ \t]*:(?:[ \t]+(?P<value>.*))?[ \t]*$")
_NULLS = {"", "~", "null", "Null", "NULL"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "/": "/", "0": "\0", " ": " ", "e": "\x1b"}


class FrontMatterError(ValueError):
    """The front matter is missing or malformed; the message is what `skills/list` reports."""


@dataclass(frozen=True, slots=True)
class SkillHeader:
    """The front matter of a SKILL.md that matters: its name, description and short description."""

    name: str | None
    description: str
    short_description: str | None


def split_front_matter(text: str) -> str:
    """The YAML between the opening and closing `---` lines (surrounding spaces on them are allowed)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise FrontMatterError(MISSING_FRONT_MATTER)
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[1:index])
    raise FrontMatterError(MISSING_FRONT_MATTER)


def _invalid(line_no: int, what: str) -> FrontMatterError:
    return FrontMatterError(f"invalid YAML: line {line_no}: {what}")


def _strip_comment(raw: str) -> str:
    """Drop a trailing ` # comment` from a plain scalar (a `#` glued to text is part of it)."""
    match = re.search(r"(^|[ \t])#", raw)
    return (raw[: match.start()] if match else raw).strip()


def _double_quoted(raw: str, line_no: int) -> tuple[str, str]:
    """Parse `"..."` at the start of raw; returns (value, rest after the closing quote)."""
    out: list[str] = []
    i = 1
    while i < len(raw):
        ch = raw[i]
        if ch == '"':
            return "".join(out), raw[i + 1 :]
        if ch == "\\":
            if i + 1 >= len(raw):
                break
            code = raw[i + 1]
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
                i += 2
                continue
            width = {"x": 2, "u": 4, "U": 8}.get(code)
            digits = raw[i + 2 : i + 2 + width] if width else ""
            if width is None or len(digits) != width or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                raise _invalid(line_no, f"unknown escape `\\{code}` in a double-quoted string")
            out.append(chr(int(digits, 16)))
            i += 2 + width
            continue
        out.append(ch)
        i += 1
    raise _invalid(line_no, "unterminated double-quoted string")


def _single_quoted(raw: str, line_no: int) -> tuple[str, str]:
    out: list[str] = []
    i = 1
    while i < len(raw):
        if raw[i] == "'":
            if raw[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), raw[i + 1 :]
        out.append(raw[i])
        i += 1
    raise _invalid(line_no, "unterminated single-quoted string")


def _after_quote(rest: str, line_no: int) -> None:
    if _strip_comment(rest):
        raise _invalid(line_no, "unexpected text after a quoted string")


def scalar_value(raw: str, line_no: int) -> str | None:
    """One inline scalar; None for YAML null."""
    raw = raw.strip()
    if raw.startswith('"'):
        value, rest = _double_quoted(raw, line_no)
        _after_quote(rest, line_no)
        return value
    if raw.startswith("'"):
        value, rest = _single_quoted(raw, line_no)
        _after_quote(rest, line_no)
        return value
    if raw[:1] in ("{", "&", "*", "!", "%", "@", "`"):
        raise _invalid(line_no, f"unsupported YAML syntax `{raw[:1]}`")
    plain = _strip_comment(raw)
    return None if plain in _NULLS else plain


def flow_sequence(raw: str, line_no: int) -> list[str]:
    """A one-line ``[a, b]`` YAML sequence of scalars; raises a front-matter error for anything else."""
    body = _strip_comment(raw)
    if not body.endswith("]"):
        raise _invalid(line_no, "unterminated flow sequence `[`")
    inner = body[1:-1].strip()
    if not inner:
        return []
    items: list[str] = []
    for part in inner.split(","):
        if any(c in part for c in "[]{}"):
            raise _invalid(line_no, "nested flow collections are not supported")
        items.append(scalar_value(part, line_no) or "")
    return items


def _block_scalar(indicator: str, body: list[str], line_no: int) -> str:
    if not re.fullmatch(r"[|>][+-]?", indicator):
        raise _invalid(line_no, f"unsupported block scalar header `{indicator}`")
    present = [ln for ln in body if ln.strip()]
    indent = min((len(ln) - len(ln.lstrip(" ")) for ln in present), default=0)
    lines = [ln[indent:] if ln.strip() else "" for ln in body]
    if indicator[0] == "|":
        text = "\n".join(lines)
    else:
        # Folding: single newlines become spaces, blank lines stay as newlines.
        text = ""
        for ln in lines:
            if not ln:
                text += "\n"
            elif text and not text.endswith("\n"):
                text += " " + ln
            else:
                text += ln
    text = text.rstrip("\n")
    if indicator.endswith("+"):
        return text + "\n"
    return text if indicator.endswith("-") else text + "\n"


def _nested(body: list[tuple[int, str]]) -> list[str] | dict[str, str]:
    """An indented block under `key:` with no inline value: a `- item` list or a `k: v` mapping."""
    if body[0][1].lstrip().startswith("- ") or body[0][1].strip() == "-":
        items: list[str] = []
        for line_no, line in body:
            stripped = line.strip()
            if not (stripped.startswith("- ") or stripped == "-"):
                raise _invalid(line_no, "expected `- item` in a list")
            items.append(scalar_value(stripped[1:], line_no) or "")
        return items
    mapping: dict[str, str] = {}
    for line_no, line in body:
        match = _KEY_LINE.match(line.strip())
        if match is None:
            raise _invalid(line_no, "expected `key: value`")
        key = match["key"]
        if key in mapping:
            raise FrontMatterError(f"invalid YAML: duplicate field `{key}`")
        value = match["value"] or ""
        if value.strip()[:1] in ("|", ">", "["):
            raise _invalid(line_no, "nested values must be single-line scalars")
        mapping[key] = scalar_value(value, line_no) or ""
    return mapping


def parse_front_matter(yaml_text: str) -> dict[str, Value | None]:
    """Parse the front matter subset described in the module docstring."""
    lines = yaml_text.split("\n")
    result: dict[str, Value | None] = {}
    i = 0
    while i < len(lines):
        line_no, line = i + 2, lines[i]  # +2: 1-based, after the opening `---`
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            raise _invalid(line_no, "unexpected indentation")
        match = _KEY_LINE.match(line)
        if match is None:
            raise _invalid(line_no, "expected `key: value`")
        key, raw = match["key"], (match["value"] or "").strip()
        if key in result:
            raise FrontMatterError(f"invalid YAML: duplicate field `{key}`")
        # The indented lines that belong to this key (blank lines inside are kept).
        block: list[tuple[int, str]] = []
        while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
            block.append((i + 2, lines[i]))
            i += 1
        while block and not block[-1][1].strip():
            block.pop()
        if "\t" in "".join(ln[: len(ln) - len(ln.lstrip())] for _, ln in block):
            raise _invalid(block[0][0], "tabs are not allowed in indentation")
        value: Value | None
        if raw[:1] in ("|", ">"):
            value = _block_scalar(_strip_comment(raw), [ln for _, ln in block], line_no)
        elif raw.startswith("["):
            if block:
                raise _invalid(block[0][0], "multi-line flow sequences are not supported")
            value = flow_sequence(raw, line_no)
        elif not raw or raw.startswith("#"):
            value = _nested(block) if block else None
        else:
            value = scalar_value(raw, line_no)
            if block:
                if raw[:1] in ('"', "'"):
                    raise _invalid(block[0][0], "multi-line quoted strings are not supported")
                parts = [value or ""] + [_strip_comment(ln) for _, ln in block if ln.strip()]
                value = " ".join(parts)
        result[key] = value
    return result


def _text_field(fields: dict[str, Value | None], key: str) -> str | None:
    value = fields.get(key)
    if value is None:
        return None
    if isinstance(value, list):
        raise FrontMatterError(f"invalid YAML: {key}: invalid type: sequence, expected a string")
    if isinstance(value, dict):
        raise FrontMatterError(f"invalid YAML: {key}: invalid type: map, expected a string")
    # Codex shows names and descriptions on one line, whitespace runs collapsed.
    return " ".join(value.split())


def parse_skill_header(text: str) -> SkillHeader:
    """Name, description and legacy short description of a SKILL.md; FrontMatterError when unusable."""
    fields = parse_front_matter(split_front_matter(text))
    name = _text_field(fields, "name") or None
    description = _text_field(fields, "description")
    if not description:
        raise FrontMatterError("missing field `description`")
    if name is not None and len(name) > MAX_NAME_CHARS:
        raise FrontMatterError(f"invalid name: exceeds maximum length of {MAX_NAME_CHARS} characters")
    short = None
    metadata = fields.get("metadata")
    if isinstance(metadata, dict):
        short = " ".join(metadata.get("short-description", "").split()) or None
    return SkillHeader(name=name, description=description, short_description=short)
