"""Shell words the way Codex writes and reads them: the ``command`` text of a commandExecution item.

Codex joins a command's argv with the shlex crate's ``quote`` (so ``echo 'hi'`` shows as
``"echo 'hi'"``, where Python's ``shlex.join`` would write ``'echo '"'"'hi'"'"''``); the same text must come
out of pycodex for the same argv, in live items and in stored ones. Hand-written: no maintained Python
library reproduces that crate's choice of quoting per run of characters.
"""

from __future__ import annotations

import re

_UNQUOTED_OK = frozenset("+-./:@]_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _quote_word(word: str) -> str:
    """One argv word as the shlex crate's `quote` writes it (Codex joins argv with it for `command`)."""
    if not word:
        return "''"
    out, i = [], 0
    while i < len(word):
        # The longest prefix one strategy covers: bare, '...' or "..." (the crate's quoting_strategy).
        ok, start = ({"bare", "single", "double"}, i)
        if word[i] == "^":
            ok, i = {"single"}, i + 1
        while i < len(word):
            c = word[i]
            cur = set(ok)
            if ord(c) >= 0x80 or c not in _UNQUOTED_OK:
                cur.discard("bare")
            if c in "'^\\":
                cur.discard("single")
            if c in "`$!^":
                cur.discard("double")
            if not cur:
                break
            ok, i = cur, i + 1
        chunk = word[start:i]
        if "bare" in ok:
            out.append(chunk)
        elif "single" in ok:
            out.append(f"'{chunk}'")
        else:
            out.append('"' + re.sub(r'([$`"\\])', r"\\\1", chunk) + '"')
    return "".join(out)


def join_argv(argv: list[str]) -> str:
    """A commandExecution's `command` text for ``argv``, exactly as Codex 0.169 shows it."""
    return " ".join(_quote_word(word) for word in argv)


def split_command(command: str) -> list[str]:
    """The argv a POSIX shell reads in ``command`` (quotes and backslashes; no expansion, no comments).

    Reads both Codex's quoting and Python's ``shlex.join`` (pycodex's), so a v2 item from either splits back
    to its argv."""
    words: list[str] = []
    word: list[str] | None = None
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c in " \t\n":
            if word is not None:
                words.append("".join(word))
                word = None
            i += 1
            continue
        word = [] if word is None else word
        if c == "'":
            end = command.find("'", i + 1)
            end = n if end < 0 else end
            word.append(command[i + 1 : end])
            i = end + 1
        elif c == '"':
            i += 1
            while i < n and command[i] != '"':
                if command[i] == "\\" and i + 1 < n and command[i + 1] in '$`"\\\n':
                    i += 1
                word.append(command[i])
                i += 1
            i += 1
        elif c == "\\" and i + 1 < n:
            word.append(command[i + 1])
            i += 2
        else:
            word.append(c)
            i += 1
    if word is not None:
        words.append("".join(word))
    return words
