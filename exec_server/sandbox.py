"""Confining a started process as the harness asks (``process/start.sandbox``), with Linux Landlock.

Codex 0.169.0 confines such commands with bubblewrap + seccomp and reports ``sandboxType:
"linuxSeccomp"``. We apply what Landlock can express, in the child between fork and exec:

* writes only beneath the writable entries of ``permissions.file_system`` (``project_roots`` →
  ``workspaceRoots``, ``slash_tmp``, ``tmpdir``, explicit paths), plus ``/dev``; a writable ``root``
  lifts the restriction. Reads and execution stay unrestricted.
* ``network: "restricted"`` denies TCP connect/bind where Landlock has ABI ≥ 4 (best effort: older
  kernels get the filesystem part only); UDP and Unix sockets stay open.

Not expressible (a deliberate, documented gap): read-only carve-outs inside writable roots (Codex keeps
``.git`` read-only), and non-TCP network. A policy shape we do not understand, or a kernel without
Landlock, is refused (fail closed) unless the server runs with ``--allow-unsandboxed``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

from exec_client.wire.protocol import uri_to_path
from pycodex.json_types import JsonObj
from pycodex.platform.landlock import confinement, landlock_abi

__all__ = ["SANDBOX_TYPE", "SandboxPlan", "UnsupportedSandbox", "landlock_abi", "plan_sandbox", "preexec_for"]

#: What Codex reports for a confined Linux process.
SANDBOX_TYPE = "linuxSeccomp"


class UnsupportedSandbox(Exception):
    """The requested policy cannot be applied here; the message says why."""


@dataclass(frozen=True, slots=True)
class SandboxPlan:
    """What a sandbox policy asks of a process: writable roots (None: unrestricted) and network off."""

    #: None: writes are not restricted.
    writable: tuple[str, ...] | None
    restrict_network: bool

    @property
    def restricts_anything(self) -> bool:
        """The plan restricts writes or the network (so a confinement must be applied)."""
        return self.writable is not None or self.restrict_network


def _special(value: JsonObj, roots: list[str]) -> list[str] | None:
    """Paths for a ``special`` entry; None means "everything" (the root)."""
    kind = value.get("kind")
    subpath = value.get("subpath")
    if kind == "root":
        return None
    if kind == "project_roots":
        base = roots
    elif kind == "slash_tmp":
        base = ["/tmp"]
    elif kind == "tmpdir":
        base = [os.environ.get("TMPDIR") or tempfile.gettempdir()]
    else:
        return []  # an unknown writable kind grants nothing: stricter, never looser
    return [os.path.join(b, subpath) if isinstance(subpath, str) else b for b in base]


def plan_sandbox(sandbox: JsonObj) -> SandboxPlan:
    """Translate Codex's ``sandbox`` object into what we enforce; UnsupportedSandbox if we cannot."""
    perms = sandbox.get("permissions")
    if not isinstance(perms, dict) or perms.get("type") != "managed":
        kind = perms.get("type") if isinstance(perms, dict) else perms
        raise UnsupportedSandbox(f"unsupported sandbox permissions {kind!r}")
    try:
        roots = [str(uri_to_path(u)) for u in sandbox.get("workspaceRoots") or []]
    except ValueError as exc:
        raise UnsupportedSandbox(f"invalid workspaceRoots: {exc}") from exc
    fs = perms.get("file_system") or {}
    writable: list[str] | None = None
    if fs.get("type") == "restricted":
        writable = ["/dev"]
        for entry in fs.get("entries") or []:
            if entry.get("access") != "write":
                continue  # reads are never restricted here
            path = entry.get("path") or {}
            if path.get("type") == "special":
                paths = _special(path.get("value") or {}, roots)
            elif path.get("type") == "path" and isinstance(path.get("value"), str):
                paths = [path["value"]]
            else:
                raise UnsupportedSandbox(f"unsupported sandbox path entry {path!r}")
            if paths is None:
                writable = None
                break
            writable.extend(paths)
    elif fs.get("type") not in (None, "unrestricted"):
        raise UnsupportedSandbox(f"unsupported file_system policy {fs.get('type')!r}")
    plan = SandboxPlan(
        None if writable is None else tuple(dict.fromkeys(writable)),
        perms.get("network") == "restricted",
    )
    if plan.restricts_anything and landlock_abi() == 0:
        raise UnsupportedSandbox("this kernel has no Landlock, so the sandbox cannot be applied")
    return plan


def preexec_for(plan: SandboxPlan) -> Callable[[], None] | None:
    """The function that confines the child right before exec (None if nothing to restrict)."""
    if not plan.restricts_anything:
        return None
    return confinement(plan.writable, restrict_network=plan.restrict_network)
