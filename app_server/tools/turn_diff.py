"""The turn's aggregated diff: every file apply_patch changed since the turn began, as one git-style diff.

Codex 0.169 sends it as ``turn/diff/updated`` after each applied patch. The tracker never rereads the
filesystem: it keeps each path's content from before its first change in the turn (its baseline) and its
content now, follows moves back to the path they started from, and renders each changed file as
``diff --git a/REL b/REL`` (``new file mode``/``deleted file mode``, ``index OLD..NEW`` with git blob ids,
a three-line-context unified diff), paths shown relative to the turn's cwd, files in path order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app_server.tools import line_diff

__all__ = ["TrackedChange", "TurnDiffTracker", "git_blob_oid", "unified_diff"]

ZERO_OID = "0" * 40
DEV_NULL = "/dev/null"
REGULAR_FILE_MODE = "100644"
NO_NEWLINE = "\\ No newline at end of file\n"


@dataclass(frozen=True, slots=True)
class TrackedChange:
    """One applied file change as the tracker needs it (``apply_patch.FileChange`` has these fields)."""

    path: Path
    kind: str  # add | delete | update
    move_path: Path | None
    old_text: str | None  # the file before the change (None: it did not exist)
    new_text: str | None  # the file after it (None for a delete)


def git_blob_oid(text: str) -> str:
    """Git's object id of a blob holding ``text`` (UTF-8)."""
    data = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n" + NO_NEWLINE  # rendered after the last line, as git and similar do
    return lines


def unified_diff(old: str, new: str, old_header: str, new_header: str) -> str:
    """``old`` -> ``new`` as a unified diff with three lines of context (empty when they are equal)."""
    return "".join(line_diff.unified_diff(_lines(old), _lines(new), old_header, new_header, n=3))


class TurnDiffTracker:
    """The net text change of the turn's applied patches, per file."""

    def __init__(self, display_root: Path | None = None) -> None:
        self.display_root = display_root
        self._baseline: dict[Path, str] = {}
        self._current: dict[Path, str] = {}
        self._origin: dict[Path, Path] = {}  # current path of a moved file -> where it was at baseline
        # The rendered diff since the last change: it is reported after every model response of the turn,
        # and rendering a large file's diff again would cost as much as the first time.
        self._rendered: tuple[str | None] | None = None

    def track(self, changes: Iterable[TrackedChange]) -> None:
        """Record the changes of one successfully applied patch, in patch order."""
        self._rendered = None
        for change in changes:
            if change.kind == "add":
                self._add(change.path, change.new_text or "", change.old_text)
            elif change.kind == "delete":
                self._delete(change.path, change.old_text or "")
            else:
                self._update(change)

    def _seen(self, path: Path) -> bool:
        return path in self._current or path in self._baseline

    def _add(self, path: Path, content: str, overwritten: str | None) -> None:
        self._origin.pop(path, None)
        if not self._seen(path) and overwritten is not None:
            self._baseline[path] = overwritten
        self._current[path] = content

    def _delete(self, path: Path, content: str) -> None:
        if self._current.pop(path, None) is None and path not in self._baseline:
            self._baseline[path] = content
        self._origin.pop(path, None)

    def _update(self, change: TrackedChange) -> None:
        source, dest, new = change.path, change.move_path, change.new_text or ""
        if not self._seen(source):
            self._baseline[source] = change.old_text or ""
        if dest is None or dest == source:
            self._current[source] = new
            return
        origin = self._origin.pop(source, source)
        self._current.pop(source, None)
        self._current[dest] = new
        self._origin.pop(dest, None)
        if dest != origin:
            self._origin[dest] = origin

    def _renames(self) -> dict[Path, Path]:
        pairs: dict[Path, Path] = {}
        for dest, origin in self._origin.items():
            if (dest != origin and origin not in self._current and dest in self._current
                    and origin in self._baseline and dest not in self._baseline):
                pairs[origin] = dest
        return pairs

    def display(self, path: Path) -> str:
        """``path`` as the diff shows it: relative to the display root when under it."""
        if self.display_root is not None and path.is_relative_to(self.display_root):
            return path.relative_to(self.display_root).as_posix()
        return path.as_posix()

    def unified_diff(self) -> str | None:
        """The turn's diff so far, or None when the files are back to their baselines."""
        if self._rendered is None:
            self._rendered = (self._render_all(),)
        return self._rendered[0]

    def _render_all(self) -> str | None:
        renames = self._renames()
        destinations = set(renames.values())
        paths = sorted(set(self._baseline) | set(self._current), key=self.display)
        parts: list[str] = []
        for path in paths:
            if path in destinations:
                continue
            dest = renames.get(path, path)
            rendered = self._render(path, self._baseline.get(path), dest, self._current.get(dest))
            if rendered:
                parts.append(rendered if rendered.endswith("\n") else rendered + "\n")
        return "".join(parts) or None

    def _render(self, left: Path, old: str | None, right: Path, new: str | None) -> str | None:
        if old == new or (old is None and new is None):
            return None
        left_name, right_name = self.display(left), self.display(right)
        head = [f"diff --git a/{left_name} b/{right_name}\n"]
        if old is None:
            head.append(f"new file mode {REGULAR_FILE_MODE}\n")
        elif new is None:
            head.append(f"deleted file mode {REGULAR_FILE_MODE}\n")
        old_oid = ZERO_OID if old is None else git_blob_oid(old)
        new_oid = ZERO_OID if new is None else git_blob_oid(new)
        head.append(f"index {old_oid}..{new_oid}\n")
        old_header = DEV_NULL if old is None else f"a/{left_name}"
        new_header = DEV_NULL if new is None else f"b/{right_name}"
        return "".join(head) + unified_diff(old or "", new or "", old_header, new_header)
