"""Reading a rollout only when it is intact: its head must be this thread's ``session_meta`` record, and
the thread must rebuild from its records; anything else is :class:`RolloutCorruptError`, naming the file,
the line and the cause (a damaged line after the head is skipped with a warning by ``iter_records``)."""

from __future__ import annotations

from pathlib import Path

from . import records as r
from . import rollout_file
from .errors import RolloutCorruptError
from .reconstruct import LoadedThread, reconstruct

__all__ = ["check_head", "head_error", "read_intact", "rebuild"]


def head_error(thread_id: str, path: Path, data: bytes) -> RolloutCorruptError | None:
    """Why ``data`` (a rollout's first bytes) is not the head of ``thread_id``'s rollout, or None."""
    problem = rollout_file.head_problem(data)
    if problem is None:
        head = rollout_file.read_session_meta_bytes(data)
        if head is not None and head.get("id") != thread_id:
            return RolloutCorruptError(thread_id, str(path), f"its session_meta record names thread {head.get('id')}", 1)
        return None
    line, cause = problem
    return RolloutCorruptError(thread_id, str(path), cause, line)


def check_head(thread_id: str, path: Path) -> None:
    """Raise RolloutCorruptError unless the rollout starts with this thread's session_meta record."""
    with path.open("rb") as f:
        first = f.readline(rollout_file.MAX_META_BYTES)
    error = head_error(thread_id, path, first)
    if error is not None:
        raise error


def read_intact(thread_id: str, path: Path) -> list[r.Record]:
    """All records of a rollout whose head is intact (later damaged lines are skipped with a warning)."""
    data = path.read_bytes()
    error = head_error(thread_id, path, data)
    if error is not None:
        raise error
    return list(rollout_file.iter_records(data, path))


def rebuild(thread_id: str, path: Path, records: list[r.Record], archived: bool) -> LoadedThread:
    """The thread ``records`` hold; records of a shape no writer makes are RolloutCorruptError."""
    try:
        return reconstruct(records, path=path, archived=archived)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:  # records of a shape no writer makes
        raise RolloutCorruptError(thread_id, str(path), f"cannot rebuild the thread ({exc!r})") from exc
