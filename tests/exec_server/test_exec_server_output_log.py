"""The per-process event log as plain data (no processes): sequence numbers and ``process/read`` slices."""

from __future__ import annotations

import pytest

from exec_server.output_log import PAGE_BYTES, OutputLog, RetentionBudget


def _log() -> OutputLog:
    log = OutputLog()
    log.append_output("stdout", b"out1\n")
    log.append_output("stderr", b"err1\n")
    log.append_output("stdout", b"out2\n")
    return log


def test_output_exit_and_close_share_one_counter_starting_at_one() -> None:
    log = _log()
    assert log.mark_exited(3) == 4
    assert log.mark_closed() == 5
    assert (log.exited, log.exit_code, log.closed) == (True, 3, True)


def test_a_full_read_points_next_seq_past_the_last_event_including_exit_and_close() -> None:
    log = _log()
    log.mark_exited(3)
    log.mark_closed()
    got = log.read(None, None)
    assert [c.seq for c in got.chunks] == [1, 2, 3]
    assert got.next_seq == 6


def test_max_bytes_is_soft_and_stops_next_seq_after_the_last_returned_chunk() -> None:
    log = _log()
    log.mark_exited(0)
    one = log.read(1, 1)
    assert [c.seq for c in one.chunks] == [2] and one.next_seq == 3
    zero = log.read(2, 0)
    assert [c.seq for c in zero.chunks] == [3] and zero.next_seq == 4


def test_reading_past_the_end_returns_no_chunks_and_the_true_next_seq() -> None:
    log = _log()
    got = log.read(99, None)
    assert got.chunks == [] and got.next_seq == 4
    assert OutputLog().read(None, None).next_seq == 1


def test_retention_drops_the_oldest_chunks_but_keeps_the_newest() -> None:
    log = OutputLog(retain_bytes=10)
    for i in range(5):
        log.append_output("stdout", bytes([65 + i]) * 4)
    got = log.read(0, None)
    assert [c.seq for c in got.chunks] == [4, 5]
    assert log.dropped_bytes == 12 and got.next_seq == 6


def test_news_is_any_event_after_the_given_seq() -> None:
    log = _log()
    assert not log.has_news(3)
    log.mark_exited(0)
    assert log.has_news(3)


def test_events_after_close_or_a_second_exit_are_bugs() -> None:
    log = _log()
    log.mark_exited(0)
    with pytest.raises(ValueError):
        log.mark_exited(1)
    log.mark_closed()
    with pytest.raises(ValueError):
        log.append_output("stdout", b"late")


def test_a_read_is_logged_as_chunks_of_the_wire_size_with_consecutive_seqs() -> None:
    log = OutputLog()
    log.append_output("stdout", b"first")
    data = bytes(range(256)) * 80  # 20480 bytes: two full 8 KiB chunks and a rest
    assert log.append_read("stderr", memoryview(data), 8192) == 2
    assert log.append_read("stdout", b"", 8192) == 5  # an empty read is still one (empty) chunk
    got = log.read(1, None).chunks
    assert [(c.seq, c.stream, len(c.data)) for c in got] == [
        (2, "stderr", 8192),
        (3, "stderr", 8192),
        (4, "stderr", 4096),
        (5, "stdout", 0),
    ]
    assert b"".join(c.data for c in got) == data
    assert log.retained_bytes == len(b"first") + len(data)


def test_freed_pages_go_to_the_session_pool_up_to_its_size_and_are_reused() -> None:
    budget = RetentionBudget(pool_pages=2)
    logs = [OutputLog(budget=budget) for _ in range(3)]
    for i, log in enumerate(logs):
        log.append_read("stdout", bytes([i]) * PAGE_BYTES, 8192)
    assert budget.pages.free_bytes == 0
    for log in logs:
        log.release()
    assert budget.pages.free_bytes == 2 * PAGE_BYTES  # bounded: the third page was unmapped
    writer = OutputLog(retain_bytes=PAGE_BYTES, budget=budget)
    for i in range(4):  # each read fills a page; the window keeps the newest, the older one is freed
        writer.append_read("stdout", bytes([i]) * PAGE_BYTES, 8192)
    assert budget.pages.free_bytes == PAGE_BYTES  # pages were taken from the pool and given back
    assert [c.data for c in writer.read(0, None).chunks] == [bytes([3]) * 8192] * 8
    budget.pages.clear()
    assert budget.pages.free_bytes == 0
