"""``fs/copy``: regular files, symlinks (copied as links) and, with ``recursive``, directory trees.

As in Codex 0.169.0: a directory needs ``recursive: true``, a directory cannot be copied into itself,
fifos, sockets and devices are refused at the top (``fs/copy only supports regular files,
directories, and symlinks``) and skipped inside a tree. Sources are opened without following a
swapped-in symlink and without blocking on a fifo; destinations are never written through a
pre-existing symlink. One request copies at most ``MAX_COPY_BYTES`` (4 GiB; Codex has no cap), so a
huge or sparse source cannot fill the disk unasked.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass

from exec_client.wire.fs_paths import entry_path, policy_for, real_path
from exec_client.wire.fs_policy import Need
from exec_client.wire.protocol import FsCopyParams
from exec_server.fs_service import open_for_write, request_path, run_fs
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["MAX_COPY_BYTES", "copy"]

MAX_COPY_BYTES = 4 * 1024**3
_UNSUPPORTED = "fs/copy only supports regular files, directories, and symlinks"


@dataclass
class _Budget:
    left: int
    #: Under a sandbox policy: hard-linked destinations are refused (see ``open_for_write``).
    sandboxed: bool = True

    def take(self, size: int) -> None:
        if size > self.left:
            raise InvalidRequest(f"fs/copy source is too large: limit is {MAX_COPY_BYTES} bytes")
        self.left -= size


def _copy_file(src: str, dst: str, budget: _Budget) -> None:
    fin = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fin)
        if not stat.S_ISREG(st.st_mode):
            raise InvalidRequest(_UNSUPPORTED)
        budget.take(st.st_size)
        fout = open_for_write(dst, dst, sandboxed=budget.sandboxed, mode=stat.S_IMODE(st.st_mode))
        try:
            copied = 0
            while copied < st.st_size:  # a file growing meanwhile is copied as it was when opened
                sent = os.sendfile(fout, fin, copied, min(st.st_size - copied, 1 << 24))
                if sent == 0:
                    break
                copied += sent
            os.fchmod(fout, stat.S_IMODE(st.st_mode))
        finally:
            os.close(fout)
    finally:
        os.close(fin)


def _copy_tree(src: str, dst: str, budget: _Budget) -> None:
    if os.path.islink(dst):
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), dst)
    os.makedirs(dst, exist_ok=True)
    with os.scandir(src) as it:
        children = list(it)
    for child in children:
        target = os.path.join(dst, child.name)
        if child.is_dir(follow_symlinks=False):
            _copy_tree(child.path, target, budget)
        elif child.is_symlink():
            os.symlink(os.readlink(child.path), target)
        elif child.is_file(follow_symlinks=False):
            _copy_file(child.path, target, budget)
        # fifos, sockets and devices inside a tree are skipped, as Codex does


async def copy(p: FsCopyParams) -> JsonObj:
    """``fs/copy``: copy a file, or a directory tree with ``recursive``, within the sandbox policy."""
    src, dst = request_path(p.source_path), request_path(p.destination_path)

    def work() -> None:
        policy = policy_for(p.sandbox)
        source = entry_path(src)
        policy.check(source, Need.READ)
        st = os.lstat(source)
        budget = _Budget(MAX_COPY_BYTES, sandboxed=policy.rules is not None)
        if stat.S_ISDIR(st.st_mode):
            if not p.recursive:
                raise InvalidRequest("fs/copy requires recursive: true when sourcePath is a directory")
            destination = real_path(dst)
            if destination == source or destination.startswith(source.rstrip("/") + "/"):
                raise InvalidRequest("fs/copy cannot copy a directory to itself or one of its descendants")
            policy.check_tree(source, Need.READ)
            policy.check_tree(destination, Need.WRITE)
            _copy_tree(source, destination, budget)
        elif stat.S_ISLNK(st.st_mode):
            destination = entry_path(dst)
            policy.check(destination, Need.WRITE)
            os.symlink(os.readlink(source), destination)
        elif stat.S_ISREG(st.st_mode):
            destination = real_path(dst)
            policy.check(destination, Need.WRITE)
            _copy_file(source, destination, budget)
        else:
            raise InvalidRequest(_UNSUPPORTED)

    await run_fs(work)
    return {}
