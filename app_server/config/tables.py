"""TOML table plumbing: `-c key=value` parsing, dotted keys, deep merges, and finding a key's line.

tomllib reports no positions for valid documents, so `locate()` scans the text to point an error at
the line (and column) where a key is set.
"""

from __future__ import annotations

import copy
import re
import tomllib
from collections.abc import Mapping

from app_server.config.errors import ConfigError
from pycodex.json_types import JsonObj, JsonValue

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def parse_cli_override(text: str) -> tuple[list[str], JsonValue]:
    """`"a.b=1"` -> `(["a", "b"], 1)`. The value is parsed as TOML, or else kept as a plain string."""
    key, sep, raw = text.partition("=")
    if not sep:
        raise ConfigError(f"error parsing -c overrides: Invalid override (missing '='): {text}")
    key = key.strip()
    if not key:
        raise ConfigError(f"error parsing -c overrides: Invalid override (empty key): {text}")
    path = [part.strip() for part in key.split(".")]
    if any(not part for part in path):
        raise ConfigError(f"error parsing -c overrides: Invalid override (empty key segment): {text}")
    raw = raw.strip()
    try:
        value = tomllib.loads(f"_v_ = {raw}")["_v_"]
    except tomllib.TOMLDecodeError:
        # Like Codex: `-c model=gpt-5` means the string "gpt-5".
        value = raw.strip("'\"") if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" else raw
    return path, value


def nest(path: list[str], value: object) -> JsonObj:
    """``value`` under the nested tables that ``path`` names (``["a", "b"], 1`` -> ``{"a": {"b": 1}}``)."""
    table: JsonObj = {path[-1]: value}
    for part in reversed(path[:-1]):
        table = {part: table}
    return table


def deep_merge(base: Mapping[str, object], top: Mapping[str, object]) -> JsonObj:
    """`top` wins; tables merge key by key. Inputs are not modified."""
    merged: JsonObj = copy.deepcopy(dict(base))
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def expand_dotted(table: Mapping[str, object]) -> JsonObj:
    """A `thread/start.config` dict may use dotted keys (`"a.b": 1`) or nesting; make it nested."""
    result: JsonObj = {}
    for key, value in table.items():
        if not isinstance(key, str) or not key:
            raise ConfigError(f"invalid configuration key {key!r}")
        inner = expand_dotted(value) if isinstance(value, Mapping) else value
        result = deep_merge(result, nest(key.split("."), inner))
    return result


def parse_toml(text: str, path: str) -> JsonObj:
    """tomllib with errors in Codex's `<path>:<line>:<col>: <message>` shape."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        line = col = None
        found = _TOML_POS.search(message)
        if found:
            line, col = int(found.group(1)), int(found.group(2))
            message = message[: found.start()]
        where = f"{path}:{line}:{col}" if line is not None else path
        raise ConfigError(
            f"{where}: {message}", path=path, line=line, column=col, end_column=col, reason=message, phase="read"
        ) from exc


def value_end_column(text: str, line: int, column: int) -> int:
    """The 1-based column of the last character of the TOML value that starts at (line, column).

    Codex reports a bad value's range from its first to its last character (`"bogus"`: 7 columns); a
    string runs to its closing quote, anything else to a comment or the end of the line.
    """
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        return column
    rest = lines[line - 1][column - 1 :]
    if rest[:1] in ("'", '"'):
        close = rest.find(rest[0], 1)
        while close > 0 and rest[0] == '"' and rest[close - 1] == "\\":
            close = rest.find(rest[0], close + 1)
        return column + close if close > 0 else column
    token = rest.split("#", 1)[0].rstrip()
    return column + max(len(token), 1) - 1


def _split_key(text: str) -> list[str] | None:
    """Split a TOML key (`a."b.c".d`) into parts; None if it is not a plain key."""
    parts: list[str] = []
    rest = text.strip()
    while rest:
        if rest[0] in "'\"":
            end = rest.find(rest[0], 1)
            if end == -1:
                return None
            parts.append(rest[1:end])
            rest = rest[end + 1 :].lstrip()
        else:
            match = _BARE_KEY.match(rest)
            if not match:
                return None
            parts.append(match.group(0))
            rest = rest[match.end() :].lstrip()
        if rest.startswith("."):
            rest = rest[1:].lstrip()
        elif rest:
            return None
    return parts


def _inline_value_column(line: str, start: int, inner_path: list[str]) -> int | None:
    """The 1-based column of `inner_path`'s value in the inline table starting at `start` (one level only)."""
    if len(inner_path) != 1:
        return None
    found = re.compile(rf"[{{,]\s*{re.escape(inner_path[0])}\s*=\s*").search(line, start - 1)
    return found.end() + 1 if found else None


def locate(text: str, key_path: list[str], at_value: bool) -> tuple[int, int] | None:
    """1-based (line, column) where `key_path` is assigned; the column of the value or of the key.

    Falls back to the closest enclosing table (header or assignment) when the exact key is not found
    (for example inside an inline table).
    """
    best: tuple[int, tuple[int, int]] | None = None
    prefix: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if stripped.startswith("["):
            inner = stripped.strip("[]").split("#")[0].strip().rstrip("]")
            parts = _split_key(inner)
            prefix = parts if parts is not None else []
            candidate, pos, sep = prefix, (number, indent + 1), ""
        else:
            key_text, sep, value = line.partition("=")
            parts = _split_key(key_text) if sep else None
            if parts is None:
                continue
            candidate = prefix + parts
            value_col = len(key_text) + 1 + (len(value) - len(value.lstrip())) + 1
            pos = (number, value_col if at_value else indent + 1)
        if candidate == key_path:
            return pos
        if sep and at_value and candidate == key_path[: len(candidate)] and len(candidate) < len(key_path):
            inline = _inline_value_column(line, pos[1], key_path[len(candidate) :])
            if inline is not None:  # a key inside an inline table: point at its value, as Codex does
                return (number, inline)
        depth = len(candidate)
        if depth < len(key_path) and key_path[:depth] == candidate and (best is None or depth > best[0]):
            best = (depth, pos)
    return best[1] if best else None
