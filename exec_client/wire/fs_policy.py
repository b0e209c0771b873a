"""Which paths an ``fs/*`` request may read or write under its ``sandbox`` policy (pure decisions).

Codex 0.169.0 runs sandboxed file operations in a helper under bubblewrap; we decide up front instead,
on *resolved* paths (symlinks and ``..`` already followed by the caller, see ``fs_paths``). The model,
as observed on the binary:

* ``permissions.type`` ``disabled``/``external`` and ``file_system.type: unrestricted`` allow everything;
* a ``restricted`` file system grants per entry; the most specific entry covering a path wins, and among
  equally specific ones ``none``/``deny`` beat ``write``, which beats ``read``;
* ``.git``, ``.codex`` and ``.agents`` directly beneath a writable root stay read-only;
* a path no entry covers is invisible (Codex: ``No such file or directory``), a denied one answers
  ``Permission denied`` and a readable but not writable one ``Read-only file system``.

Glob entries are honoured only when they deny (matched with ``fnmatch``); a glob that grants is ignored,
which is stricter, never looser. Nothing here touches the filesystem: ``compile_policy`` takes a
``resolve`` function for the roots, so it is unit-testable with fakes.
"""

from __future__ import annotations

import enum
import fnmatch
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from exec_client.wire.sandbox_context import SandboxEntry, WireFileSystemSandboxContext
from exec_client.wire.uris import uri_to_path

__all__ = [
    "PLATFORM_READ_ROOTS",
    "PROTECTED_NAMES",
    "Denial",
    "FsPolicy",
    "Need",
    "PolicyDenied",
    "Rule",
    "compile_policy",
]

#: What the ``minimal`` special path makes readable (the platform defaults a helper needs).
PLATFORM_READ_ROOTS = ("/bin", "/sbin", "/usr", "/lib", "/lib64", "/etc", "/dev/null")
#: Names kept read-only directly beneath every writable root (as Codex does).
PROTECTED_NAMES = (".git", ".codex", ".agents")

_RANK = {"read": 1, "write": 2, "none": 3}


class Need(enum.Enum):
    """The access a filesystem operation needs on a path."""

    READ = "read"
    WRITE = "write"


class Denial(enum.Enum):
    """Why a path is refused; each maps to the OS error Codex's sandbox would have produced."""

    HIDDEN = "hidden"  # no entry covers it: ENOENT
    DENIED = "denied"  # an explicit none/deny entry: EACCES
    READ_ONLY = "read-only"  # readable, not writable: EROFS


class PolicyDenied(Exception):
    """The sandbox policy refuses ``path``; ``denial`` says how."""

    def __init__(self, denial: Denial, path: str) -> None:
        super().__init__(f"{denial.value}: {path}")
        self.denial = denial
        self.path = path


@dataclass(frozen=True, slots=True)
class Rule:
    """One entry of a compiled policy: a resolved absolute path and its access (read, write or none)."""

    path: str  # absolute and resolved
    access: str  # "read" | "write" | "none"


def _under(path: str, root: str) -> bool:
    return root == "/" or path == root or path.startswith(root.rstrip("/") + "/")


@dataclass(frozen=True, slots=True)
class FsPolicy:
    """``rules is None`` means unrestricted."""

    rules: tuple[Rule, ...] | None
    deny_globs: tuple[str, ...] = ()

    @classmethod
    def unrestricted(cls) -> FsPolicy:
        """A policy that allows everything (no sandbox context)."""
        return cls(None)

    def access(self, path: str) -> str | None:
        """The effective access for a resolved absolute path: read, write, none, or None (uncovered)."""
        if self.rules is None:
            return "write"
        if not os.path.isabs(path) or any(fnmatch.fnmatchcase(path, g) for g in self.deny_globs):
            return "none"
        best: Rule | None = None
        for rule in self.rules:
            if not _under(path, rule.path):
                continue
            if best is None or (len(rule.path), _RANK[rule.access]) > (len(best.path), _RANK[best.access]):
                best = rule
        return None if best is None else best.access

    def check(self, path: str, need: Need) -> None:
        """Raise PolicyDenied unless ``path`` (resolved) may be accessed as ``need`` asks."""
        got = self.access(path)
        if got is None:
            raise PolicyDenied(Denial.HIDDEN, path)
        if got == "none":
            raise PolicyDenied(Denial.DENIED, path)
        if need is Need.WRITE and got != "write":
            raise PolicyDenied(Denial.READ_ONLY, path)

    def check_tree(self, path: str, need: Need) -> None:
        """Like ``check``, and also for every rule strictly beneath ``path`` (recursive copy/remove)."""
        self.check(path, need)
        if self.rules is None:
            return
        for rule in self.rules:
            if rule.path != path and _under(rule.path, path):
                self.check(rule.path, need)
        if self.deny_globs:
            raise PolicyDenied(Denial.DENIED, path)  # a glob may match anything below: fail closed


def _entry_paths(
    entry: SandboxEntry, ctx: WireFileSystemSandboxContext, tmpdir: str | None, cwd: str
) -> list[str]:
    spec = entry.path
    if spec.type == "path" and spec.path is not None:
        return [str(uri_to_path(spec.path))]
    if spec.type != "special" or spec.value is None:
        return []
    kind, sub = spec.value.kind, spec.value.subpath
    if kind == "root":
        return ["/"]
    if kind == "minimal":
        return list(PLATFORM_READ_ROOTS)
    if kind == "current_working_directory":
        bases = [str(uri_to_path(ctx.cwd)) if ctx.cwd else cwd]
    elif kind == "project_roots":
        bases = [str(uri_to_path(u)) for u in ctx.workspace_roots]
    elif kind == "tmpdir":
        bases = [str(uri_to_path(u)) for u in ctx.temporary_directories or []]
        bases = bases or ([tmpdir] if tmpdir else [])
    elif kind == "slash_tmp":
        bases = ["/tmp"]
    else:
        return []  # an unknown special path grants nothing
    return [os.path.join(b, sub) if sub else b for b in bases]


def compile_policy(
    ctx: WireFileSystemSandboxContext | None,
    *,
    resolve: Callable[[str], str],
    tmpdir: str | None,
    cwd: str,
) -> FsPolicy:
    """Turn the wire context into rules on resolved paths. ``resolve`` maps a path to its real path."""
    if ctx is None:
        return FsPolicy.unrestricted()
    perms = ctx.permissions
    fs = perms.file_system
    if perms.type != "managed" or fs is None or fs.type == "unrestricted":
        return FsPolicy.unrestricted()
    rules: list[Rule] = []
    globs: list[str] = []
    for entry in fs.entries or []:
        access = "none" if entry.access in ("none", "deny") else entry.access
        if entry.path.type == "glob_pattern":
            if access == "none" and entry.path.pattern:
                globs.append(entry.path.pattern)
            continue
        for raw in _entry_paths(entry, ctx, tmpdir, cwd):
            if os.path.isabs(raw):
                rules.append(Rule(resolve(raw), access))
    rules.extend(_protected(rules, resolve))
    return FsPolicy(tuple(rules), tuple(globs))


def _protected(rules: Iterable[Rule], resolve: Callable[[str], str]) -> list[Rule]:
    out: list[Rule] = []
    for rule in rules:
        if rule.access == "write" and rule.path != "/":
            out.extend(Rule(resolve(os.path.join(rule.path, name)), "read") for name in PROTECTED_NAMES)
    return out
