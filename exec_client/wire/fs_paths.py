"""Resolving request paths for the sandbox check, and the policy of one ``fs/*`` request.

Checks are made on resolved paths and the operation then acts on that same resolved path, so a
symlink (``W/link_out -> /O``) or ``W/../O`` cannot lead it somewhere the check did not look. A
concurrent rename between check and use is not covered (that needs ``openat2(RESOLVE_BENEATH)``).
"""

from __future__ import annotations

import os
from pathlib import Path

from exec_client.wire.errors import NotFound
from exec_client.wire.fs_policy import Denial, FsPolicy, PolicyDenied, compile_policy
from exec_client.wire.sandbox_context import WireFileSystemSandboxContext
from pycodex.jsonrpc.errors import InternalError, InvalidRequest, RpcError

__all__ = ["denial_error", "entry_path", "policy_for", "real_path"]


def real_path(path: Path) -> str:
    """Every symlink and ``..`` followed; missing trailing components are kept as written."""
    return os.path.realpath(path)


def entry_path(path: Path) -> str:
    """The directory entry itself: the parent resolved, the last component not followed (lstat)."""
    if path.name in ("", ".", ".."):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(path.parent), path.name)


def policy_for(ctx: WireFileSystemSandboxContext | None) -> FsPolicy:
    """The filesystem policy of a request's ``sandbox`` context, paths resolved on this machine."""
    # ``tmpdir`` means $TMPDIR only when it is set (Codex grants nothing otherwise).
    tmpdir = os.environ.get("TMPDIR") or None
    return compile_policy(ctx, resolve=os.path.realpath, tmpdir=tmpdir, cwd=os.getcwd())


def denial_error(exc: PolicyDenied) -> RpcError:
    """The error Codex's sandboxed helper reports for the same refusal."""
    if exc.denial is Denial.HIDDEN:
        return NotFound("No such file or directory (os error 2)")
    if exc.denial is Denial.DENIED:
        return InvalidRequest("Permission denied (os error 13)")
    return InternalError("Read-only file system (os error 30)")
