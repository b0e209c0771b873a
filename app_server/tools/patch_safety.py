"""Whether a patch may be applied as is, must be approved first, or is refused: Codex 0.169's rules.

A patch is *constrained* when every path it writes (each added, deleted or updated file and each move
destination) is writable under the sandbox: anything under ``danger-full-access``; nothing under
``read-only``; under ``workspace-write`` a path beneath the cwd, a configured writable root, ``/tmp`` or
``$TMPDIR``, but never beneath a protected ``.git``, ``.codex`` or ``.agents`` directory of any of those
roots. Paths are normalised lexically (``..`` resolved without touching the filesystem), and then
checked once more as the filesystem resolves them: a symlink inside the workspace that points outside
the roots, or a hard link of a file whose inode other names share (which may lie outside), is not
writable. (Codex applies patches inside its OS sandbox, which refuses the symlink and writes through the
hard link.)

Then, by approval policy: ``untrusted`` always asks; a constrained patch (or any patch under
``on-failure``) is applied without asking; otherwise ``never`` refuses it with Codex's reason and the
other policies ask the user.
"""

from __future__ import annotations

import os
import stat
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


def _as_resolved(path: Path, real_roots: list[Path]) -> bool:
    """Whether ``path`` stays writable once symlinks are followed (``real_roots``: the roots resolved), and
    is not a shared (hard-linked) inode."""
    real = Path(os.path.realpath(path))
    if not is_writable(real, real_roots):
        return False
    try:
        st = os.stat(real)
    except OSError:  # a file the patch creates
        return True
    return not stat.S_ISREG(st.st_mode) or st.st_nlink <= 1


def assess_patch(
    targets: Iterable[Path], *, approval_policy: str, sandbox_mode: str, cwd: Path, extra_roots: Sequence[str],
) -> Safety:
    """The verdict for a patch writing ``targets`` (absolute paths, move destinations included)."""
    if approval_policy == "untrusted":
        return Safety("ask")
    roots = writable_roots(sandbox_mode, cwd, extra_roots)
    # Checked as written, then as the filesystem resolves it (the roots resolved once for every target).
    real_roots = None if roots is None else [Path(os.path.realpath(root)) for root in roots]
    if approval_policy == "on-failure" or all(
        is_writable(t, roots) and (real_roots is None or _as_resolved(t, real_roots)) for t in targets
    ):
        return Safety("auto")
    if approval_policy == "never":
        return Safety("reject", READ_ONLY_REASON if roots == [] else OUTSIDE_PROJECT_REASON)
    return Safety("ask")
