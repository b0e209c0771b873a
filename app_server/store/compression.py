"""Compressed rollouts, in Codex 0.169's format: ``<rollout>.jsonl.zst`` (zstd level 3) beside where the plain
``.jsonl`` was, the plain file removed once the compressed one is in place.

``compress_cold`` is what ``rollout/compress`` starts (Codex's background pass, seen on the binary and in its
source): under the non-blocking maintenance lock ``.tmp/rollout-maintenance.lock``, it claims the run marker
``.tmp/rollout-compression.lock`` (created exclusively; a marker younger than 6 hours means a pass ran or runs,
so the pass is skipped, and a completed pass leaves it there as the cooldown), then compresses every rollout
of ``archived_sessions/`` and ``sessions/`` last written 7 days ago or more (after removing the temp files a
dead pass left there 6 hours ago or more). A rollout whose thread has a writer
(here or in Codex: the writer lock) or that changes while it is compressed is left as it is.

Reading: ``read_bytes`` reads either form. ``restore`` turns a compressed rollout back into the plain file
before pycodex uses it (``ThreadStore.find_rollout``), as Codex does when it resumes one, so every other
reader and the writer only ever see ``.jsonl``; the restored file keeps the compressed one's modification time.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import zstandard

from .errors import ThreadLockedError
from .layout import ARCHIVED_DIR, SESSIONS_DIR, iter_rollout_files, thread_id_of
from .writer_lock import WriterLock

log = logging.getLogger(__name__)

__all__ = ["COMPRESSED_SUFFIX", "CompressionStats", "compress_cold", "compressed_path", "is_compressed",
           "plain_path", "read_bytes", "restore"]

COMPRESSED_SUFFIX: Final = ".zst"
LEVEL: Final = 3
MIN_AGE_S: Final = 7 * 24 * 3600
MARKER_STALE_S: Final = 6 * 3600
MARKER_FILE: Final = "rollout-compression.lock"
MAINTENANCE_FILE: Final = "rollout-maintenance.lock"
TEMP_PREFIX: Final = "rollout-compress-"


def is_compressed(path: Path) -> bool:
    """Whether ``path`` names a compressed rollout."""
    return path.name.endswith(".jsonl" + COMPRESSED_SUFFIX)


def compressed_path(path: Path) -> Path:
    """Where the compressed form of the plain rollout ``path`` lives."""
    return path.with_name(path.name + COMPRESSED_SUFFIX)


def plain_path(path: Path) -> Path:
    """The plain rollout path of ``path`` (itself when it is plain)."""
    return path.with_name(path.name.removesuffix(COMPRESSED_SUFFIX)) if is_compressed(path) else path


def read_bytes(path: Path) -> bytes:
    """The rollout's JSONL bytes, decompressed when ``path`` is compressed."""
    if not is_compressed(path):
        return path.read_bytes()
    with path.open("rb") as f:
        return zstandard.ZstdDecompressor().stream_reader(f).read()


def restore(path: Path) -> Path:
    """The plain rollout for ``path``: a compressed one is decompressed next to it (atomically, its mtime kept)
    and removed. When the plain file is already there (restored by another reader), that one is used."""
    if not is_compressed(path):
        return path
    plain = plain_path(path)
    if plain.exists():
        return plain
    stat = path.stat()
    temp = _temp_beside(plain)
    try:
        with path.open("rb") as source, temp.open("wb") as out:
            zstandard.ZstdDecompressor().copy_stream(source, out)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, stat.st_mode & 0o777)
        os.utime(temp, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        with contextlib.suppress(FileExistsError):  # someone restored it meanwhile: theirs is the same
            os.link(temp, plain)
    finally:
        temp.unlink(missing_ok=True)
    path.unlink(missing_ok=True)
    return plain


@dataclass
class CompressionStats:
    """What one pass did (``ran`` is False when another pass holds the locks or ran recently)."""

    ran: bool = False
    compressed: int = 0
    skipped: int = 0
    failed: int = 0


def compress_cold(codex_home: Path, *, now: float | None = None) -> CompressionStats:
    """One compression pass over ``codex_home``'s rollouts (see the module docstring)."""
    stats = CompressionStats()
    tmp = codex_home / ".tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    with _maintenance_lock(tmp / MAINTENANCE_FILE) as held:
        if not held or not _claim_marker(tmp / MARKER_FILE):
            return stats
        stats.ran = True
        try:
            _compress_all(codex_home, time.time() if now is None else now, stats)
        except BaseException:
            (tmp / MARKER_FILE).unlink(missing_ok=True)  # an interrupted pass leaves no cooldown
            raise
    log.info("rollout compression: compressed=%d skipped=%d failed=%d", stats.compressed, stats.skipped,
             stats.failed)
    return stats


def _compress_all(codex_home: Path, now: float, stats: CompressionStats) -> None:
    # Archived first, as Codex: those are the coldest.
    roots = (codex_home / ARCHIVED_DIR, codex_home / SESSIONS_DIR)
    _remove_stale_temps(roots, now)
    files = sorted(iter_rollout_files(codex_home), key=lambda item: not item[1])
    for path, _archived in files:
        if is_compressed(path) or not any(root in path.parents for root in roots):
            continue
        try:
            if _compress_one(codex_home, path, now):
                stats.compressed += 1
            else:
                stats.skipped += 1
        except (OSError, zstandard.ZstdError) as exc:
            stats.failed += 1
            log.warning("rollout compression failed for %s: %s", path, exc)


def _compress_one(codex_home: Path, path: Path, now: float) -> bool:
    """Compress one cold rollout; False when it is not cold, has a writer, changed, or is compressed already."""
    thread_id = thread_id_of(path)
    try:
        before = path.stat()
    except FileNotFoundError:
        return False
    target = compressed_path(path)
    if thread_id is None or now - before.st_mtime < MIN_AGE_S or target.exists():
        return False
    temp = _temp_beside(target)
    try:
        with path.open("rb") as source, temp.open("wb") as out:
            zstandard.ZstdCompressor(level=LEVEL).copy_stream(source, out, size=before.st_size)
            out.flush()
            os.fsync(out.fileno())
        _verify(temp)
        if not _unchanged(path, before):
            return False
        os.chmod(temp, before.st_mode & 0o777)
        os.utime(temp, ns=(before.st_atime_ns, before.st_mtime_ns))
        try:
            lock = WriterLock.acquire(codex_home, thread_id)
        except ThreadLockedError:
            return False  # a thread open here or in Codex keeps its plain rollout
        try:
            if not _unchanged(path, before):
                return False
            try:
                os.link(temp, target)
            except FileExistsError:
                return False
            if not _unchanged(path, before):
                target.unlink(missing_ok=True)
                return False
            path.unlink()
        finally:
            lock.release()
    finally:
        temp.unlink(missing_ok=True)
    return True


def _remove_stale_temps(roots: tuple[Path, ...], now: float) -> None:
    """Temp files a pass or a restore left behind when its process died (older than the marker's 6 hours)."""
    for pattern in (f"{TEMP_PREFIX}*.tmp", f"*/*/*/{TEMP_PREFIX}*.tmp"):
        for root in roots:
            for temp in root.glob(pattern):
                with contextlib.suppress(OSError):
                    if now - temp.stat().st_mtime >= MARKER_STALE_S:
                        temp.unlink()


def _verify(path: Path) -> None:
    """Decode the whole compressed file (zstandard.ZstdError when it does not decode)."""
    with path.open("rb") as f:
        reader = zstandard.ZstdDecompressor().stream_reader(f)
        while reader.read(1 << 20):
            pass


def _unchanged(path: Path, before: os.stat_result) -> bool:
    try:
        now = path.stat()
    except FileNotFoundError:
        return False
    return (now.st_size, now.st_mtime_ns, now.st_mode) == (before.st_size, before.st_mtime_ns, before.st_mode)


def _temp_beside(path: Path) -> Path:
    fd, name = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(name)


def _claim_marker(marker: Path) -> bool:
    """Create the run marker; False when a fresh one (a pass running, or one within 6 hours) is there."""
    for _ in range(2):
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            try:
                age = time.time() - marker.stat().st_mtime
            except FileNotFoundError:
                continue
            if age < MARKER_STALE_S:
                return False
            marker.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as f:
            f.write(f"pid={os.getpid()} started_at={time.time():.3f}\n")
        return True
    return False


@contextlib.contextmanager
def _maintenance_lock(path: Path) -> Iterator[bool]:
    """Hold the maintenance flock for the block when free (True), or do nothing (False): Codex's lock too."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
