"""A thread's ``gitInfo`` ({sha, branch, originUrl}) for its working folder, read from the ``.git`` files.

Codex records it when a turn starts (``thread/start`` answers null; a read after the first turn has it), and
so does pycodex. Reading the files rather than spawning ``git`` keeps a turn start free of subprocesses; what
this does not cover (reftables, exotic layouts) reads as unknown fields, never as an error.
"""

from __future__ import annotations

import re
from pathlib import Path

from pycodex.git_repo import DOT_GIT, git_repo_root
from pycodex.json_types import JsonObj

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def read_git_info(cwd: str | None) -> JsonObj | None:
    """The gitInfo of the repository holding ``cwd``, or None when it is not in one. Honours
    ``GIT_CEILING_DIRECTORIES`` like git does."""
    if not cwd:
        return None
    git_dir = _find_git_dir(Path(cwd))
    if git_dir is None:
        return None
    head = _read(git_dir / "HEAD")
    branch: str | None = None
    sha: str | None = None
    if head.startswith("ref:"):
        ref = head[4:].strip()
        branch = ref.removeprefix("refs/heads/")
        common = _common_dir(git_dir)
        sha = _resolve(common, ref) or _resolve(git_dir, ref)
    elif _SHA.match(head):
        sha = head
    return {"sha": sha, "branch": branch, "originUrl": _origin_url(_common_dir(git_dir))}


def _find_git_dir(start: Path) -> Path | None:
    """The git folder of the repository holding ``start`` (the product's one repository check finds it), or
    None when there is none or its ``.git`` link leads nowhere readable."""
    root = git_repo_root(start)
    if root is None:
        return None
    dot = root / DOT_GIT
    if dot.is_dir():
        return dot
    text = _read(dot)  # a worktree or submodule: "gitdir: <path>"
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[7:].strip())
    target = target if target.is_absolute() else (root / target).resolve()
    return target if (target / "HEAD").is_file() else None


def _common_dir(git_dir: Path) -> Path:
    common = _read(git_dir / "commondir")
    if not common:
        return git_dir
    path = Path(common)
    return path if path.is_absolute() else (git_dir / path).resolve()


def _resolve(git_dir: Path, ref: str) -> str | None:
    direct = _read(git_dir / ref)
    if _SHA.match(direct):
        return direct
    for line in _read(git_dir / "packed-refs").splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and _SHA.match(sha):
            return sha
    return None


def _origin_url(git_dir: Path) -> str | None:
    in_origin = False
    for raw in _read(git_dir / "config").splitlines():
        line = raw.strip()
        if line.startswith("["):
            in_origin = line.replace(" ", "").lower() in ('[remote"origin"]',)
            continue
        if in_origin and line.split("=", 1)[0].strip().lower() == "url":
            return line.split("=", 1)[1].strip()
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace").strip()
    except OSError:
        return ""
