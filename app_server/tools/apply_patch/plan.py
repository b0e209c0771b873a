"""From a parsed patch to per-file changes (nothing written), then performing them.

``plan_changes`` reads every file it needs through a callback (so the files may live on a remote
executor), applies the hunks in order against an overlay of what earlier hunks produced, and returns one
``FileChange`` per hunk with the new contents and the diff Codex shows in ``fileChange`` items. Any
failure raises ``PatchError`` before anything is written, as Codex's verification does.
``apply_changes`` then performs the changes through a ``PatchFs`` and returns Codex's success summary.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from app_server.tools.apply_patch.diff import unified_diff
from app_server.tools.apply_patch.parser import AddFile, DeleteFile, Patch, PatchError, UpdateChunk
from app_server.tools.apply_patch.seek import seek_sequence
from app_server.tools.apply_patch.text_file import Replacement, SourceFile

__all__ = ["FileChange", "PatchFs", "apply_changes", "os_error_text", "plan_changes"]

ReadText = Callable[[Path], Awaitable[str]]


@dataclass(frozen=True)
class FileChange:
    """One hunk's effect on one file, computed without writing.

    ``path`` and ``move_path`` are absolute; ``old_text`` is None for an add, ``new_text`` None for a
    delete; ``unified_diff`` is what Codex puts into a fileChange item's ``diff`` (the contents for an
    add, the old contents for a delete, ``@@`` hunks with one line of context for an update).
    ``summary_path`` is the path as written in the patch (the move target for a move), which is how the
    success summary names the file.
    """

    path: str
    kind: Literal["add", "delete", "update"]
    move_path: str | None
    old_text: str | None
    new_text: str | None
    unified_diff: str
    summary_path: str = ""


class PatchFs(Protocol):
    """Where ``apply_changes`` writes: the local disk or a remote executor's file system."""

    async def write_text(self, path: Path, text: str) -> None:
        """Write ``text`` to ``path`` (UTF-8), replacing it."""
        ...

    async def remove(self, path: Path) -> None:
        """Remove the file ``path``."""
        ...

    async def mkdirs(self, path: Path) -> None:
        """Create the directory ``path`` and its parents (no error if it exists)."""
        ...


def os_error_text(exc: OSError, path: Path | None = None) -> str:
    """An OSError as Codex prints it: ``No such file or directory (os error 2)``.

    Reading a directory is Codex's own refusal, ``path `P` is not a file``.
    """
    if isinstance(exc, IsADirectoryError) and path is not None:
        return f"path `{path}` is not a file"
    if exc.errno is not None:
        return f"{os.strerror(exc.errno)} (os error {exc.errno})"
    return str(exc)


def _resolve(cwd: Path, path: str) -> Path:
    return Path(os.path.normpath(cwd / path)) if not os.path.isabs(path) else Path(path)


class _Overlay:
    """The files as the hunks planned so far leave them, over what ``read_text`` returns."""

    def __init__(self, read_text: ReadText) -> None:
        self._read_text = read_text
        self._planned: dict[Path, str | None] = {}

    async def read(self, path: Path) -> str:
        if path in self._planned:
            text = self._planned[path]
            if text is None:
                raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
            return text
        return await self._read_text(path)

    def set(self, path: Path, text: str | None) -> None:
        self._planned[path] = text


async def plan_changes(patch: Patch, cwd: Path, read_text: ReadText) -> list[FileChange]:
    """Every hunk's change (new contents and diff), read through ``read_text``; nothing is written."""
    overlay = _Overlay(read_text)
    changes: list[FileChange] = []
    for hunk in patch.hunks:
        path = _resolve(cwd, hunk.path)
        if isinstance(hunk, AddFile):
            changes.append(
                FileChange(str(path), "add", None, None, hunk.contents, hunk.contents, hunk.path)
            )
            overlay.set(path, hunk.contents)
            continue
        if isinstance(hunk, DeleteFile):
            try:
                old = await overlay.read(path)
            except OSError as exc:
                raise PatchError(f"Failed to read {path}: {os_error_text(exc, path)}") from exc
            changes.append(FileChange(str(path), "delete", None, old, None, old, hunk.path))
            overlay.set(path, None)
            continue
        try:
            old = await overlay.read(path)
        except OSError as exc:
            raise PatchError(f"Failed to read file to update {path}: {os_error_text(exc, path)}") from exc
        new, diff = derive_update(old, path, hunk.chunks)
        move = _resolve(cwd, hunk.move_path) if hunk.move_path is not None else None
        changes.append(
            FileChange(
                str(path),
                "update",
                str(move) if move is not None else None,
                old,
                new,
                diff,
                hunk.move_path if hunk.move_path is not None else hunk.path,
            )
        )
        if move is not None:
            overlay.set(move, new)
            overlay.set(path, None)
        else:
            overlay.set(path, new)
    return changes


def derive_new_contents(original: str, path: Path, chunks: list[UpdateChunk]) -> str:
    """The file's contents after the chunks, line endings kept as Codex keeps them."""
    return derive_update(original, path, chunks)[0]


def derive_update(original: str, path: Path, chunks: list[UpdateChunk]) -> tuple[str, str]:
    """The new contents and the unified diff from ``original`` to them."""
    source = SourceFile.parse(original)
    replacements = compute_replacements(source.texts, path, chunks)
    new_lines, regions = source.apply(replacements)
    return "".join(new_lines), unified_diff(source.old_lines(), new_lines, regions)


def compute_replacements(lines: list[str], path: Path, chunks: list[UpdateChunk]) -> list[Replacement]:
    """``(start, old_len, new_lines)`` for each chunk, in file order, or ``PatchError``."""
    replacements: list[Replacement] = []
    line_index = 0
    for chunk in chunks:
        if chunk.change_context is not None:
            idx = seek_sequence(lines, [chunk.change_context], line_index, False)
            if idx is None:
                raise PatchError(f"Failed to find context '{chunk.change_context}' in {path}")
            line_index = idx + 1
        if not chunk.old_lines:
            replacements.append((len(lines), 0, list(chunk.new_lines)))
            continue
        pattern: tuple[str, ...] = chunk.old_lines
        new_slice: tuple[str, ...] = chunk.new_lines
        found = seek_sequence(lines, pattern, line_index, chunk.is_end_of_file)
        if found is None and pattern[-1] == "":
            pattern = pattern[:-1]
            if new_slice and new_slice[-1] == "":
                new_slice = new_slice[:-1]
            found = seek_sequence(lines, pattern, line_index, chunk.is_end_of_file)
        if found is None:
            old = "\n".join(chunk.old_lines)
            raise PatchError(f"Failed to find expected lines in {path}:\n{old}")
        replacements.append((found, len(pattern), _segment(chunk, new_slice, found, len(pattern))))
        line_index = found + len(pattern)
    replacements.sort(key=lambda r: r[0])
    return replacements


def _segment(chunk: UpdateChunk, new_slice: tuple[str, ...], found: int, matched: int) -> list[str | int]:
    """The replacement lines: context lines as indexes of the file's matched lines, added lines as text."""
    segment: list[str | int] = []
    for k, text in enumerate(new_slice):
        old_index = chunk.context_of[k] if k < len(chunk.context_of) else -1
        segment.append(found + old_index if 0 <= old_index < matched else text)
    return segment


async def apply_changes(changes: list[FileChange], fs: PatchFs) -> str:
    """Perform ``changes`` in order and return Codex's summary (``Success. Updated the following files:``)."""
    if not changes:
        raise PatchError("No files were modified.")
    added: list[str] = []
    modified: list[str] = []
    deleted: list[str] = []
    for change in changes:
        shown = change.summary_path or change.move_path or change.path
        path = Path(change.path)
        if change.kind == "delete":
            await _guard(fs.remove(path), f"Failed to delete file {path}")
            deleted.append(shown)
            continue
        target = Path(change.move_path) if change.move_path is not None else path
        if change.kind == "add" or change.move_path is not None:
            await _guard(fs.mkdirs(target.parent), f"Failed to create parent directories for {target}")
        await _guard(fs.write_text(target, change.new_text or ""), f"Failed to write file {target}")
        if change.kind == "add":
            added.append(shown)
            continue
        if change.move_path is not None:
            await _guard(fs.remove(path), f"Failed to remove original {path}")
        modified.append(shown)
    lines = ["Success. Updated the following files:"]
    lines += [f"A {p}" for p in added] + [f"M {p}" for p in modified] + [f"D {p}" for p in deleted]
    return "\n".join(lines) + "\n"


async def _guard(step: Awaitable[None], context: str) -> None:
    try:
        await step
    except OSError as exc:
        raise PatchError(context) from exc
