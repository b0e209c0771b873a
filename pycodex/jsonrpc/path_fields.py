"""Path fields of a request that hold a NUL byte: refused with -32602 naming the field, on both servers.

No file system path can hold NUL, and Codex (which accepts ``thread/start.cwd: "/tmp\\u0000x"``) fails later
and less clearly; a NUL in the middle of a path is also how a checked prefix is made to mean something else
to a C library. A field counts as a path when the last word of its camelCase/snake_case name is one of
:data:`PATH_WORDS` (``cwd``, ``path``, ``writableRoots``, ``extraLogFiles``, ``sourceDir``, ...), at any depth;
other strings (message text, command output) may hold NUL as JSON allows.
"""

from __future__ import annotations

import re

from pycodex.json_types import JsonValue

__all__ = ["PATH_WORDS", "first_nul_path", "is_path_key"]

#: The last word of a key that names a file system path (or a list of them).
PATH_WORDS = frozenset({"cwd", "cwds", "path", "paths", "root", "roots", "dir", "dirs", "directory",
                        "directories", "file", "files", "folder", "folders", "home"})

_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def is_path_key(key: str) -> bool:
    """Whether a params key names a path: its last word is in :data:`PATH_WORDS`."""
    words = _WORDS.findall(key)
    return bool(words) and words[-1].lower() in PATH_WORDS


def first_nul_path(params: JsonValue, where: str = "") -> str | None:
    """The dotted wire path of the first path field holding a NUL byte, or None."""
    if isinstance(params, dict):
        for key, value in params.items():
            inner = f"{where}.{key}" if where else key
            if _holds_nul(value) and is_path_key(key):  # the cheap test first: NUL is rare
                return inner
            found = first_nul_path(value, inner)
            if found is not None:
                return found
    elif isinstance(params, list):
        for index, item in enumerate(params):
            found = first_nul_path(item, f"{where}[{index}]")
            if found is not None:
                return found
    return None


def _holds_nul(value: JsonValue) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(isinstance(item, str) and "\x00" in item for item in value)
    return False
