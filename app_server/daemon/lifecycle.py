"""Start, stop and inspect the managed app-server, laid out as Codex 0.169 lays out its pid backend.

``CODEX_HOME/app-server-daemon/`` (0700) holds ``daemon.lock`` (serializes lifecycle commands),
``daemon.pid`` (the JSON record ``{"pid", "processStartTime", "processIdentity": {"bootId", "startTicks"}}``)
and ``daemon.stderr.log``. The server is ``pycodex app-server --listen unix://`` in its own session, so
it outlives the command that started it. A record whose process is gone, or whose pid was reused by
another process (the start ticks differ), is stale and replaced.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pycodex import COMPATIBLE_CODEX_VERSION
from pycodex.transport.unix_paths import default_socket_path, owner_only_dir, socket_answers

__all__ = ["DaemonError", "Layout", "start", "status", "stop"]

DAEMON_DIR = "app-server-daemon"
#: A start on a loaded machine can take seconds (the server's imports); stop waits this long for SIGTERM.
START_TIMEOUT_S = 30.0
STOP_GRACE_S = 10.0
_POLL_S = 0.05
Report = dict[str, object]


class DaemonError(Exception):
    """A lifecycle command that could not do its job (exit status 1, one stderr line)."""


class Layout:
    """The daemon's files under one ``CODEX_HOME``."""

    def __init__(self, codex_home: Path | str) -> None:
        self.codex_home = Path(codex_home)
        self.dir = self.codex_home / DAEMON_DIR
        self.lock = self.dir / "daemon.lock"
        self.pid_file = self.dir / "daemon.pid"
        self.log = self.dir / "daemon.stderr.log"
        self.socket = default_socket_path(self.codex_home)

    def base(self, state: str) -> Report:
        """The fields every report carries (Codex's names; pycodex has no managed package to report)."""
        return {"status": state, "backend": "pid", "socketPath": str(self.socket), "cliVersion": COMPATIBLE_CODEX_VERSION}


def _identity(pid: int) -> dict[str, object] | None:
    """The boot id and start ticks of ``pid`` (what tells a live daemon from a reused pid), None if gone."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
        boot_id = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None
    fields = stat_line.rsplit(")", 1)[1].split()
    if fields[0] == "Z":  # a zombie has exited: only its parent has not reaped it yet
        return None
    return {"bootId": boot_id, "startTicks": int(fields[19])}


def _read_record(layout: Layout) -> dict[str, object] | None:
    try:
        record = json.loads(layout.pid_file.read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("pid"), int) else None


def _live_pid(layout: Layout) -> int | None:
    """The daemon's pid when its record names a running process that is still the one recorded."""
    record = _read_record(layout)
    if record is None:
        return None
    pid = record["pid"]
    assert isinstance(pid, int)
    identity = _identity(pid)
    return pid if identity is not None and identity == record.get("processIdentity") else None


@contextmanager
def _locked(layout: Layout) -> Iterator[None]:
    owner_only_dir(layout.dir)
    with open(layout.lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes, even if this process dies
        yield


def _wait(until: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)
    return True


def _server_argv() -> list[str]:
    return [sys.executable, "-m", "pycodex", "app-server", "--listen", "unix://"]


def _spawn(layout: Layout) -> int:
    env = {**os.environ, "CODEX_HOME": str(layout.codex_home)}
    with open(layout.log, "ab") as log:
        os.chmod(layout.log, 0o600)
        child = subprocess.Popen(_server_argv(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                                 env=env, start_new_session=True, close_fds=True)
    identity = _identity(child.pid)
    record = {"pid": child.pid, "processStartTime": time.ctime(), "processIdentity": identity}
    temp = layout.pid_file.with_suffix(".pid.tmp")
    temp.write_text(json.dumps(record))
    temp.replace(layout.pid_file)  # never a half-written record
    if not _wait(lambda: child.poll() is not None or socket_answers(layout.socket), START_TIMEOUT_S):
        child.kill()
        child.wait()
        layout.pid_file.unlink(missing_ok=True)
        raise DaemonError(f"timed out waiting for the app-server to listen on {layout.socket}")
    if child.poll() is not None:
        layout.pid_file.unlink(missing_ok=True)
        tail = layout.log.read_text(errors="replace").strip().splitlines()[-1:]
        raise DaemonError(f"the app-server exited with status {child.returncode}: {' '.join(tail)}")
    return child.pid


def start(layout: Layout) -> Report:
    """Start the daemon unless one runs; returns once it accepts connections on the control socket."""
    with _locked(layout):
        pid = _live_pid(layout)
        if pid is not None:
            if not _wait(lambda: socket_answers(layout.socket), START_TIMEOUT_S):
                raise DaemonError(f"the running app-server {pid} does not answer on {layout.socket}")
            return {**layout.base("alreadyRunning"), "appServerVersion": COMPATIBLE_CODEX_VERSION}
        layout.pid_file.unlink(missing_ok=True)  # stale: its process is gone (a crash, a reboot)
        if socket_answers(layout.socket):  # a server started by hand (`--listen unix://`) holds the socket
            raise DaemonError(f"an app-server that the daemon does not manage is listening on {layout.socket}")
        pid = _spawn(layout)
        return {**layout.base("started"), "pid": pid, "appServerVersion": COMPATIBLE_CODEX_VERSION}


def stop(layout: Layout) -> Report:
    """SIGTERM the daemon, SIGKILL it after the grace period, and remove its record."""
    with _locked(layout):
        pid = _live_pid(layout)
        if pid is None:
            layout.pid_file.unlink(missing_ok=True)
            return layout.base("notRunning")
        os.kill(pid, signal.SIGTERM)
        if not _wait(lambda: _live_pid(layout) is None, STOP_GRACE_S):
            os.kill(pid, signal.SIGKILL)
            if not _wait(lambda: _live_pid(layout) is None, STOP_GRACE_S):
                raise DaemonError(f"timed out waiting for the app-server {pid} to stop")
        layout.pid_file.unlink(missing_ok=True)
        return layout.base("stopped")


def status(layout: Layout) -> Report:
    """``running`` (with the pid) or ``notRunning``: what ``daemon version`` and ``daemon status`` print."""
    pid = _live_pid(layout)
    if pid is None or not socket_answers(layout.socket):
        return layout.base("notRunning")
    return {**layout.base("running"), "pid": pid, "appServerVersion": COMPATIBLE_CODEX_VERSION}
