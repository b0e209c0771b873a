"""Whether a patch may be applied as is, must be approved first, or is refused: Codex 0.169's rules.

A patch is *constrained* when every path it writes (each added, deleted or updated file and each move
destination) is writable under the sandbox: anything under ``danger-full-access``; nothing under
``read-only``; under ``workspace-write`` a path beneath the cwd, a configured writable root, ``/tmp`` or
``$TMPDIR``, but never beneath a protected ``.git``, ``.codex`` or ``.agents`` directory of any of those
roots. Paths are normalised lexically (``..`` resolved without touching the filesystem).

Then, by approval policy: ``untrusted`` always asks; a constrained patch (or any patch under
``on-failure``) is applied without asking; otherwise ``never`` refuses it with Codex's reason and the
other policies ask the user.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "OUTSIDE_PROJECT_REASON", "PROTECTED_NAMES", "READ_ONLY_REASON", "Safety", "assess_patch", "is_writable",
    "writable_roots",
]

READ_ONLY_REASON = "writing is blocked by read-only sandbox; rejected by user approval settings"
OUTSIDE_PROJECT_REASON = "writing outside of the project; rejected by user approval settings"
#: Directories of a writable root that stay read-only (the repository, Codex's and agents' own state).
PROTECTED_NAMES = (".git", ".codex", ".agents")


@dataclass(frozen=True, slots=True)
class Safety:
    """The verdict: ``auto`` (apply now), ``ask`` (request approval) or ``reject`` (with ``reason``)."""

    verdict: str
    reason: str | None = None


def _normalise(path: Path) -> Path:
    return Path(os.path.normpath(path))


def writable_roots(sandbox_mode: str, cwd: Path, extra_roots: Sequence[str]) -> list[Path] | None:
    """The roots a patch may write under for ``sandbox_mode`` (None: everywhere, [] nowhere)."""
    if sandbox_mode == "danger-full-access":
        return None
    if sandbox_mode == "read-only":
        return []
    roots = [cwd, *(Path(r) for r in extra_roots), Path("/tmp")]
    tmpdir = os.environ.get("TMPDIR") or tempfile.gettempdir()
    roots.append(Path(tmpdir))
    return list(dict.fromkeys(_normalise(root) for root in roots if root.is_absolute()))


def is_writable(path: Path, roots: list[Path] | None) -> bool:
    """Whether the sandbox lets a patch write ``path`` (absolute).

    A protected directory of any root wins over every root containing it (the more specific entry), so
    ``CWD/.git`` stays read-only even when ``/tmp`` holds the cwd.
    """
    if roots is None:
        return True
    path = _normalise(path)
    if any(path.is_relative_to(root / name) for root in roots for name in PROTECTED_NAMES):
        return False
    return any(path.is_relative_to(root) for root in roots)


def assess_patch(
    targets: Iterable[Path], *, approval_policy: str, sandbox_mode: str, cwd: Path, extra_roots: Sequence[str],
) -> Safety:
    """The verdict for a patch writing ``targets`` (absolute paths, move destinations included)."""
    if approval_policy == "untrusted":
        return Safety("ask")
    roots = writable_roots(sandbox_mode, cwd, extra_roots)
    if approval_policy == "on-failure" or all(is_writable(t, roots) for t in targets):
        return Safety("auto")
    if approval_policy == "never":
        return Safety("reject", READ_ONLY_REASON if roots == [] else OUTSIDE_PROJECT_REASON)
    return Safety("ask")
