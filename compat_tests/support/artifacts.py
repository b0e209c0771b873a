"""One folder of artifacts per pair and scenario, so a failing pair can be debugged from files alone.

Written for every run (pass or fail): ``app-server.jsonrpc.jsonl`` (the client transcript),
``exec-server.jsonrpc.jsonl`` (the app-server <-> exec-server transcript where the transport is
plaintext), ``registry-requests.jsonl``, ``relay-frames.txt`` (decoded frame headers, never payloads),
``model-requests.jsonl``, ``NAME.stderr.log`` per process, ``expected.json`` where the scenario knows what
its command must do (support/causes.py), and ``cause.txt`` when the test failed (``symptom.txt`` too
when the transcripts show an earlier divergence than the scenario's symptom).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

from compat_tests.support.causes import Expected, first_divergence
from compat_tests.support.processes import ProcessGroup
from compat_tests.support.relay_capture import FrameError, read_capture

__all__ = ["PairLog"]


class PairLog:
    """The folder of one pair and scenario, and the writers of its artifacts."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def write_lines(self, name: str, lines: Iterable[str]) -> None:
        text = "\n".join(lines)
        (self.folder / name).write_text(text + "\n" if text else "", encoding="utf-8")

    def processes(self, group: ProcessGroup) -> None:
        for handle in group.handles:
            header = f"# {handle.name}: pid {handle.pid}, exit {handle.proc.returncode}"
            self.write_lines(f"{handle.name}.stderr.log", [header, *handle.stderr_lines])

    def model_requests(self, log: Path) -> None:
        if log.exists():
            shutil.copyfile(log, self.folder / "model-requests.jsonl")

    def relay(self, capture: Path) -> None:
        """Registry requests and frame headers (direction, stream, body kind, payload size)."""
        if not capture.exists():
            return
        try:
            frames, events = read_capture(capture)
        except (FrameError, ValueError) as exc:
            self.write_lines("relay-frames.txt", [f"# capture unreadable: {exc}"])
            return
        self.write_lines(
            "registry-requests.jsonl",
            [json.dumps(e) for e in events if e.get("event") == "registry_request"],
        )
        lines = ["# direction stream_id body payload_bytes"]
        lines += [f"{f.direction} {f.stream_id} {f.body} {len(f.payload)}" for f in frames]
        lines += [f"# event {json.dumps(e)}" for e in events if e.get("event") != "registry_request"]
        self.write_lines("relay-frames.txt", lines)

    def expect(self, expected: Expected) -> None:
        """Record what the scenario's command must do, so the folder's transcripts can be judged alone."""
        expected.write(self.folder)

    def divergence(self) -> str | None:
        """The first divergence the transcripts show, where the scenario recorded its expectation."""
        return first_divergence(self.folder) if Expected.read(self.folder) else None

    def cause(self, cause: str) -> None:
        """``cause.txt`` (one line, the table's): the first divergence the transcripts show, else ``cause``
        (the scenario's symptom), which then goes to ``symptom.txt``."""
        found = self.divergence()
        if found and found != cause:
            self.write_lines("symptom.txt", [cause])
        self.write_lines("cause.txt", [found or cause])
