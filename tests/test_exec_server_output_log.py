"""The per-process event log as plain data (no processes): sequence numbers and ``process/read`` slices."""

from __future__ import annotations

import pytest

from exec_server.output_log import OutputLog


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
