"""RolloutWriter: the single appender of one thread's rollout file.

Every append is written with one os.write on an O_APPEND descriptor before the call returns (so a killed process
loses nothing it acknowledged), and fsync'd for the completion records in DURABLE_TYPES when fsync is on (so a
power loss does not either). An flock on the file keeps a second writer, in this process or another, out.
All methods are synchronous, thread-safe, and short; with fsync on an append may wait for the disk (~ms), so an
asyncio caller should run it in asyncio.to_thread.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pycodex.json_types import JsonObj

from . import records as r
from .errors import ThreadLockedError, WriterClosedError
from .layout import fsync_dir
from .rollout_file import encode_line, iter_lines
from .writer_lock import WriterLock

# (thread_id, record type, payload, now_ms, (ordinal, line start, line end)): lets the store keep its indexes
# (and Codex's history projection, which names byte offsets) in step with the rollout.
AppendHook = Callable[[str, str, JsonObj, int, tuple[int, int, int]], None]


def now_ms() -> int:
    """The wall-clock time in milliseconds."""
    return time.time_ns() // 1_000_000


class RolloutWriter:
    """Appends records to one rollout. `path is None` means an ephemeral thread: appends are accepted and dropped."""

    def __init__(
        self,
        thread_id: str,
        path: Path | None,
        fd: int | None,
        *,
        next_ordinal: int,
        fsync: bool,
        hook: AppendHook | None = None,
        writer_lock: WriterLock | None = None,
        size: int = 0,
    ) -> None:
        self.thread_id = thread_id
        self._size = size  # the file's length: where the next line starts
        self._writer_lock = writer_lock  # the cross-program lock; released on close
        self.path = path
        self._fd = fd
        self._next_ordinal = next_ordinal
        self._fsync = fsync
        self._hook = hook
        self._lock = threading.Lock()
        self._closed = False
        # What Codex's turn-end record repeats: each open turn's start time and its last agent message.
        self._turn_starts: dict[str, object] = {}
        self._last_agent_text: dict[str, str] = {}

    # -- construction -------------------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        thread_id: str,
        path: Path,
        meta: JsonObj,
        *,
        fsync: bool,
        hook: AppendHook | None = None,
        writer_lock: WriterLock | None = None,
    ) -> RolloutWriter:
        """Create the file (it must not exist) and write the session_meta line. The writer owns
        ``writer_lock`` from here on, also when this raises."""
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
        except BaseException:
            if writer_lock is not None:
                writer_lock.release()
            raise
        writer = cls(thread_id, path, fd, next_ordinal=0, fsync=fsync, hook=hook, writer_lock=writer_lock)
        try:
            _lock_or_raise(fd, thread_id)
            writer.append(r.SESSION_META, meta)
            if fsync:
                fsync_dir(path.parent)
        except BaseException:
            writer.close()
            raise
        return writer

    @classmethod
    def reopen(
        cls,
        thread_id: str,
        path: Path,
        *,
        fsync: bool,
        hook: AppendHook | None = None,
        writer_lock: WriterLock | None = None,
    ) -> RolloutWriter:
        """Continue an existing rollout (resume). A torn last line left by a crash is cut off first, so the next
        record starts on a line of its own. The writer owns ``writer_lock`` from here on, also when this raises."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except BaseException:
            if writer_lock is not None:
                writer_lock.release()
            raise
        try:
            _lock_or_raise(fd, thread_id)
            with path.open("rb") as f:
                data = f.read()
            good_end = data.rfind(b"\n") + 1
            if good_end < len(data):
                os.ftruncate(fd, good_end)
                os.fsync(fd)
            ordinals = [line.ordinal for line in iter_lines(data[:good_end], path)]
        except BaseException:
            os.close(fd)
            if writer_lock is not None:
                writer_lock.release()
            raise
        next_ordinal = max(ordinals, default=-1) + 1
        return cls(thread_id, path, fd, next_ordinal=next_ordinal, fsync=fsync, hook=hook, writer_lock=writer_lock,
                   size=good_end)  # fmt: skip

    @classmethod
    def ephemeral(cls, thread_id: str) -> RolloutWriter:
        """A writer for an ephemeral thread: it accepts appends and keeps nothing."""
        return cls(thread_id, None, None, next_ordinal=0, fsync=False)

    # -- appending ----------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether the writer is closed (appends then raise)."""
        return self._closed

    @property
    def ephemeral_thread(self) -> bool:
        """Whether this writer keeps nothing (an ephemeral thread)."""
        return self.path is None

    def append(self, type_: str, payload: JsonObj, *, durable: bool | None = None) -> int:
        """Append one record and return its ordinal. `durable` forces (True) or skips (False) the fsync that the
        record type would otherwise get (see DURABLE_TYPES); it has no effect when the store runs without fsync."""
        with self._lock:
            if self._closed:
                raise WriterClosedError(f"rollout writer for thread {self.thread_id} is closed")
            ordinal = self._next_ordinal
            stamp = now_ms()
            start = self._size
            if self._fd is not None:
                line = encode_line(ordinal, type_, payload, stamp, thread_id=self.thread_id)
                _write_all(self._fd, line)
                self._size += len(line)
                want_sync = type_ in r.DURABLE_TYPES if durable is None else durable
                if self._fsync and want_sync:
                    os.fsync(self._fd)
            self._next_ordinal = ordinal + 1
            if self._hook is not None and self._fd is not None:
                self._hook(self.thread_id, type_, payload, stamp, (ordinal, start, self._size))
            return ordinal

    def turn_started(
        self,
        turn_id: str,
        *,
        root_turn_id: str | None = None,
        started_at: int | None = None,
        git_info: JsonObj | None = None,
    ) -> int:
        """Record that a turn started (``started_at`` in seconds; now when not given), with the gitInfo of the
        thread's folder at that moment when it is in a repository."""
        started = started_at if started_at is not None else now_ms() // 1000
        payload: JsonObj = {"turnId": turn_id, "rootTurnId": root_turn_id or turn_id, "startedAt": started}
        if git_info is not None:
            payload["gitInfo"] = git_info
        self._turn_starts[turn_id] = started
        return self.append(r.TURN_STARTED, payload)

    def turn_ended(
        self,
        turn_id: str,
        status: str,
        *,
        error: JsonObj | None = None,
        completed_at: int | None = None,
        duration_ms: int | None = None,
    ) -> int:
        """status: completed | interrupted | failed; error: the TurnError dict of a failed turn."""
        if status not in r.TURN_END_STATUSES:
            raise ValueError(
                f"invalid turn end status {status!r}; expected one of {sorted(r.TURN_END_STATUSES)}"
            )
        payload = {
            "turnId": turn_id,
            "status": status,
            "error": error,
            "completedAt": completed_at if completed_at is not None else now_ms() // 1000,
            "durationMs": duration_ms,
            "startedAt": self._turn_starts.pop(turn_id, None),
            "lastAgentMessage": self._last_agent_text.pop(turn_id, None),
        }
        return self.append(r.TURN_ENDED, payload)

    def item_completed(self, turn_id: str, item: JsonObj) -> int:
        """A completed ThreadItem in wire shape; durable before return, so item/completed may be sent after.
        Stored in its persisted form (``records.persisted_item``)."""
        if not isinstance(item.get("id"), str) or not isinstance(item.get("type"), str):
            raise ValueError("a thread item needs string 'id' and 'type' fields")
        if item.get("type") == "agentMessage" and isinstance(item.get("text"), str):
            self._last_agent_text[turn_id] = item["text"]
        return self.append(r.ITEM_COMPLETED, {"turnId": turn_id, "item": r.persisted_item(item)})

    def response_items(self, items: list[JsonObj], *, durable: bool | None = None) -> None:
        """Model-facing history (Responses input items), in order."""
        for index, item in enumerate(items):
            last = index == len(items) - 1
            self.append(r.RESPONSE_ITEM, item, durable=durable if last else False)

    def compacted(self, replacement_history: list[JsonObj]) -> int:
        """Record that the model history was replaced by ``replacement_history``."""
        return self.append(r.COMPACTED, {"replacementHistory": replacement_history})

    def turns_reverted(
        self, before_turn_id: str, replacement_history: list[JsonObj], *, num_turns: int | None = None
    ) -> None:
        """Drop ``before_turn_id`` and every later turn (``num_turns`` of them: what Codex's record counts);
        the model history goes back to what it was then."""
        payload: JsonObj = {"beforeTurnId": before_turn_id}
        if num_turns is not None:
            payload["numTurns"] = num_turns
        self.append(r.TURNS_REVERTED, payload)
        self.compacted(replacement_history)

    def token_usage(self, turn_id: str | None, token_usage: JsonObj) -> int:
        """token_usage: the wire ThreadTokenUsage {total, last, modelContextWindow}; the last record wins."""
        return self.append(r.TOKEN_USAGE, {"turnId": turn_id, "tokenUsage": token_usage})

    def settings_changed(self, settings: JsonObj) -> int:
        """Sticky per-thread settings (model, cwd, approvalPolicy, sandbox, effort, ...); merged on reload."""
        return self.append(r.THREAD_SETTINGS, {"settings": settings})

    def name_changed(self, name: str | None) -> int:
        """Record the thread's new name (None clears it)."""
        return self.append(r.THREAD_NAME, {"name": name})

    def sync(self) -> None:
        """fsync now (when the store runs with fsync), e.g. after a batch of non-durable appends."""
        with self._lock:
            if self._fd is not None and self._fsync and not self._closed:
                os.fsync(self._fd)

    def close(self) -> None:
        """Flush and close the rollout file; a second close does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._fd is not None:
                try:
                    if self._fsync:
                        os.fsync(self._fd)
                finally:
                    os.close(self._fd)  # releases the flock
                    self._fd = None
            if self._writer_lock is not None:
                self._writer_lock.release()

    def __enter__(self) -> RolloutWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _lock_or_raise(fd: int, thread_id: str) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise ThreadLockedError(thread_id) from None
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
