"""Recognising a shell command that is really an apply_patch call, as Codex's intercept does.

Codex takes ``apply_patch PATCH`` / ``applypatch PATCH`` as a direct call, and a shell script
(``bash|zsh|sh -c|-lc SCRIPT``, or the script alone) whose only top-level statement is
``apply_patch <<'EOF' ... EOF`` or ``cd DIR && apply_patch <<'EOF' ... EOF``. ``cd`` takes exactly one
argument (a word, ``"..."`` or ``'...'``), the connector must be ``&&``, the heredoc delimiter may be
quoted, and nothing may come before or after (``echo x; ...``, ``... && echo done``,
``apply_patch foo <<EOF`` do not match).
"""

from __future__ import annotations

import os
import re
import shlex

__all__ = ["extract_heredoc_patch"]

_APPLY_NAMES = ("apply_patch", "applypatch")
_SHELLS = ("bash", "zsh", "sh")
_WORD = r"[^\s'\"`$;&|<>()\\]+"
_CD = rf"cd[ \t]+(?:(?P<word>{_WORD})|\"(?P<dq>[^\"\\$`]*)\"|'(?P<sq>[^']*)')[ \t]*&&[ \t]*"
_HEREDOC = re.compile(
    rf"\A\s*(?:{_CD})?(?:apply_patch|applypatch)[ \t]*<<-?[ \t]*"
    r"(?P<q>['\"]?)(?P<delim>[A-Za-z_][A-Za-z0-9_]*)(?P=q)[ \t]*\n"
    r"(?P<body>.*?)^(?P=delim)[ \t]*(?:\n\s*)?\Z",
    re.DOTALL | re.MULTILINE,
)


def _from_script(script: str) -> tuple[str, str | None] | None:
    match = _HEREDOC.match(script)
    if match is None:
        return None
    groups = (match.group("word"), match.group("dq"), match.group("sq"))
    workdir = next((g for g in groups if g is not None), None)
    return match.group("body").rstrip("\n"), workdir


def _shell_script(argv: list[str]) -> str | None:
    if len(argv) != 3:
        return None
    name = os.path.splitext(os.path.basename(argv[0]))[0].lower()
    if name in _SHELLS and argv[1] in ("-c", "-lc"):
        return argv[2]
    return None


def extract_heredoc_patch(argv_or_cmd: str) -> tuple[str, str | None] | None:
    """``(patch_text, workdir or None)`` when the command is an apply_patch call, else None.

    ``patch_text`` is the heredoc body (or the direct argument), not yet parsed; ``workdir`` is the
    ``cd`` target as written (relative to the command's cwd unless absolute).
    """
    found = _from_script(argv_or_cmd)
    if found is not None:
        return found
    try:
        argv = shlex.split(argv_or_cmd)
    except ValueError:
        return None
    if len(argv) == 2 and argv[0] in _APPLY_NAMES:
        return argv[1], None
    script = _shell_script(argv)
    if script is not None:
        return _from_script(script)
    return None
