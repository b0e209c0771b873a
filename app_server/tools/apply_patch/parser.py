"""The apply_patch text format, parsed into hunks as Codex 0.169 parses it (lenient mode).

The patch is ``*** Begin Patch``, then hunks (``*** Add File: P`` with ``+`` lines, ``*** Delete File: P``,
``*** Update File: P`` with an optional ``*** Move to: Q`` and chunks of `` ``/``-``/``+`` lines under
``@@`` or ``@@ context`` headers, a chunk optionally closed by ``*** End of File``), then ``*** End Patch``.
Codex's leniencies are kept: surrounding whitespace around the whole text and the begin/end markers, a
heredoc wrapper (``<<EOF``/``<<'EOF'``/``<<"EOF"`` ... ``EOF``) around the patch, a first chunk without
``@@``, blank lines between chunks, and an empty line inside a chunk read as an empty context line.
Refusals carry Codex's texts (``PatchError.message``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "AddFile",
    "DeleteFile",
    "Hunk",
    "Patch",
    "PatchError",
    "UpdateChunk",
    "UpdateFile",
    "parse_patch",
]

BEGIN_PATCH = "*** Begin Patch"
END_PATCH = "*** End Patch"
ADD_FILE = "*** Add File: "
DELETE_FILE = "*** Delete File: "
UPDATE_FILE = "*** Update File: "
MOVE_TO = "*** Move to: "
END_OF_FILE = "*** End of File"
CONTEXT_MARKER = "@@ "
EMPTY_CONTEXT_MARKER = "@@"
_HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')
_EMPTY_CHUNK = "Update hunk does not contain any lines"
# What ends an update hunk's chunks (as written, not trimmed); any other line must be a chunk.
_NEXT_HUNK = (ADD_FILE, DELETE_FILE, UPDATE_FILE, END_PATCH)


class PatchError(Exception):
    """A patch Codex refuses; ``message`` is the text the model is told (without the tool's prefix)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _invalid_patch(message: str) -> PatchError:
    return PatchError(f"invalid patch: {message}")


def _invalid_hunk(message: str, line_number: int) -> PatchError:
    return PatchError(f"invalid hunk at line {line_number}, {message}")


@dataclass(frozen=True)
class AddFile:
    """``*** Add File: path``: the file is written with ``contents`` (every ``+`` line plus a newline)."""

    path: str
    contents: str


@dataclass(frozen=True)
class DeleteFile:
    """``*** Delete File: path``."""

    path: str


@dataclass(frozen=True)
class UpdateChunk:
    """One ``@@`` chunk: ``old_lines`` (context and ``-``) are replaced by ``new_lines`` (context and ``+``).

    ``change_context`` is the ``@@ context`` line sought first; ``is_end_of_file`` anchors ``old_lines``
    at the end of the file (``*** End of File``). ``context_of`` says, for each new line, which old line
    it repeats (a context line: the file's own line is kept, as Codex keeps it), or -1 for an added line.
    """

    change_context: str | None
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]
    is_end_of_file: bool = False
    context_of: tuple[int, ...] = ()


@dataclass(frozen=True)
class UpdateFile:
    """``*** Update File: path`` (optionally ``*** Move to: move_path``) with its chunks, in file order."""

    path: str
    move_path: str | None
    chunks: list[UpdateChunk] = field(default_factory=list)


Hunk = AddFile | DeleteFile | UpdateFile


@dataclass(frozen=True)
class Patch:
    """A parsed patch: its hunks in order and the patch text without any heredoc wrapper."""

    hunks: list[Hunk]
    text: str


def parse_patch(text: str) -> Patch:
    """Parse ``text`` as Codex does in lenient mode; raises ``PatchError`` with Codex's message."""
    lines = _lines(text.strip())
    patch_lines, body = _boundaries_lenient(lines)
    hunks: list[Hunk] = []
    line_number = 2
    pos = 0
    while pos < len(body):
        if body[pos].strip() == END_PATCH:
            # An early end marker ends the patch; only blank lines may follow it.
            if any(line.strip() for line in body[pos + 1 :]):
                raise _invalid_patch("The last line of the patch must be '*** End Patch'")
            break
        hunk, used = _parse_hunk(body, pos, line_number)
        hunks.append(hunk)
        line_number += used
        pos += used
    return Patch(hunks=hunks, text="\n".join(patch_lines))


def _lines(text: str) -> list[str]:
    """Rust's ``str::lines``: split on ``\\n``, drop one ``\\r`` before it, no empty last element."""
    if not text:
        return []
    parts = text.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p[:-1] if p.endswith("\r") else p for p in parts]


def _boundaries_strict(lines: list[str]) -> tuple[list[str], list[str]]:
    first = lines[0].strip() if lines else None
    last = lines[-1].strip() if lines else None
    if first == BEGIN_PATCH and last == END_PATCH:
        return lines, lines[1 : len(lines) - 1]
    if first is not None and first != BEGIN_PATCH:
        raise _invalid_patch("The first line of the patch must be '*** Begin Patch'")
    raise _invalid_patch("The last line of the patch must be '*** End Patch'")


def _boundaries_lenient(lines: list[str]) -> tuple[list[str], list[str]]:
    try:
        return _boundaries_strict(lines)
    except PatchError as original:
        if len(lines) >= 4 and lines[0] in _HEREDOC_OPENERS and lines[-1].endswith("EOF"):
            return _boundaries_strict(lines[1:-1])
        raise original from None


def _parse_hunk(lines: list[str], pos: int, line_number: int) -> tuple[Hunk, int]:
    """One hunk starting at ``lines[pos]``: the hunk and how many lines it took."""
    first = lines[pos].strip()
    if first.startswith(ADD_FILE):
        path = first[len(ADD_FILE) :]
        parts: list[str] = []
        i = pos + 1
        while i < len(lines) and lines[i].startswith("+"):
            parts.append(lines[i][1:])
            parts.append("\n")
            i += 1
        return AddFile(path=path, contents="".join(parts)), i - pos
    if first.startswith(DELETE_FILE):
        return DeleteFile(path=first[len(DELETE_FILE) :]), 1
    if first.startswith(UPDATE_FILE):
        return _parse_update(lines, pos, line_number, first[len(UPDATE_FILE) :])
    raise _invalid_hunk(
        f"'{first}' is not a valid hunk header. Valid hunk headers: "
        "'*** Add File: {path}', '*** Delete File: {path}', '*** Update File: {path}'",
        line_number,
    )


def _parse_update(lines: list[str], pos: int, line_number: int, path: str) -> tuple[Hunk, int]:
    i = pos + 1
    move_path: str | None = None
    if i < len(lines) and lines[i].startswith(MOVE_TO):
        move_path = lines[i][len(MOVE_TO) :]
        i += 1
    chunks: list[UpdateChunk] = []
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith(_NEXT_HUNK):
            break
        chunk, used = _parse_chunk(lines, i, line_number + (i - pos), not chunks)
        chunks.append(chunk)
        i += used
    if not chunks:
        raise _invalid_hunk(f"Update file hunk for path '{path}' is empty", line_number)
    return UpdateFile(path=path, move_path=move_path, chunks=chunks), i - pos


def _parse_chunk(lines: list[str], pos: int, line_number: int, first_chunk: bool) -> tuple[UpdateChunk, int]:
    head = lines[pos]
    context: str | None = None
    start = pos + 1
    if head == EMPTY_CONTEXT_MARKER:
        pass
    elif head.startswith(CONTEXT_MARKER):
        context = head[len(CONTEXT_MARKER) :]
    elif first_chunk:
        start = pos
    else:
        raise _invalid_hunk(
            f"Expected update hunk to start with a @@ context marker, got: '{head}'", line_number
        )
    if start >= len(lines):
        raise _invalid_hunk(_EMPTY_CHUNK, line_number + 1)
    old: list[str] = []
    new: list[str] = []
    context_of: list[int] = []
    eof = False
    parsed = 0
    for j in range(start, len(lines)):
        line = lines[j]
        if line == END_OF_FILE:
            if parsed == 0:
                raise _invalid_hunk(_EMPTY_CHUNK, line_number + 1)
            eof = True
            parsed += 1
            break
        if line == "" or line[0] == " ":
            context_of.append(len(old))
            old.append(line[1:])
            new.append(line[1:])
        elif line[0] == "+":
            context_of.append(-1)
            new.append(line[1:])
        elif line[0] == "-":
            old.append(line[1:])
        else:
            if parsed == 0:
                raise _invalid_hunk(
                    f"Unexpected line found in update hunk: '{line}'. Every line should start with "
                    "' ' (context line), '+' (added line), or '-' (removed line)",
                    line_number + 1,
                )
            break
        parsed += 1
    chunk = UpdateChunk(
        change_context=context,
        old_lines=tuple(old),
        new_lines=tuple(new),
        is_end_of_file=eof,
        context_of=tuple(context_of),
    )
    return chunk, parsed + (start - pos)
