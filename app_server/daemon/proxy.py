"""``pycodex app-server proxy``: stdio bytes to the control socket and back, as Codex's proxy does.

The bytes are not interpreted: the client speaks the socket's protocol (a WebSocket upgrade, then
frames) through stdin and stdout. Without ``--sock`` the daemon's control socket is used, and a daemon
is started when none answers there.

Clients spawn a proxy for every connection, so its start-up is what they wait for before the server can
answer (bench/proxy_bench.py). This module is therefore the whole proxy and imports only ``os``, ``_socket``
and ``select``, all three loaded in well under a millisecond: not ``socket`` (its enums and ``selectors``),
``pathlib``, ``json``, ``typing`` or :mod:`pycodex.transport.unix_paths` (``hashlib`` loads OpenSSL). The
control socket's name is spelled here again for that reason; tests/app_server/test_daemon_proxy.py checks it
against ``unix_paths``, and which modules a proxy loads. The daemon's lifecycle (pathlib, json, subprocess)
is imported only when no daemon answers.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # no stub; the interpreter itself has loaded it
import _socket
import faulthandler
import os
import sys
from select import select

TYPE_CHECKING = False  # not `typing`'s: that module alone costs more than this one (mypy reads it the same)
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["CONTROL_SOCKET", "codex_home", "connect_control_socket", "options", "pipe", "run_proxy"]

#: ``$CODEX_HOME/`` + this: the daemon's control socket (pycodex.transport.unix_paths.default_socket_path).
CONTROL_SOCKET = "app-server-control/app-server-control.sock"
_CHUNK = 64 * 1024
_USAGE = "usage: pycodex app-server proxy [--sock SOCKET_PATH]"


def codex_home() -> str:
    """``$CODEX_HOME``, else ``~/.pycodex``, made absolute against the working directory (as
    ``Path.absolute``: not normalized, so ``..`` after a symlink means what the kernel makes of it)."""
    raw = os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".pycodex")
    return raw if os.path.isabs(raw) else os.path.join(os.getcwd(), raw)


def options(argv: Sequence[str], valued: frozenset[str]) -> tuple[list[str], dict[str, str]]:
    """Positionals and the last value of each valued option (``-c``/``--enable``/``--disable`` are
    accepted and ignored, as the daemon starts with the home's own config). Raises ValueError."""
    words: list[str] = []
    values: dict[str, str] = {}
    items = iter(argv)
    for word in items:
        name, eq, inline = word.partition("=")
        if name in valued or name in ("-c", "--config", "--enable", "--disable"):
            value = inline if eq else next(items, None)
            if value is None:
                raise ValueError(f"a value is required for '{name}'")
            values[name] = value
        elif word.startswith("-"):
            raise ValueError(f"unexpected argument '{word}'")
        else:
            words.append(word)
    return words, values


def connect_control_socket(path: str | os.PathLike[str]) -> _socket.socket:
    """A connected unix socket to ``path`` (the socket a symlink there names: the link's own path may be
    longer than a socket address holds); OSError when nothing listens there."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(os.path.realpath(path) if os.path.islink(path) else os.fspath(path))
    except OSError:
        sock.close()
        raise
    return sock


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def pipe(sock: _socket.socket, stdin: int = 0, stdout: int = 1) -> None:
    """Copy ``stdin`` to ``sock`` and ``sock`` to ``stdout`` until the socket side ends.

    End of stdin half-closes the socket (the server then finishes what it was sending, and closes);
    end of the socket ends the pipe, so the client sees EOF on the proxy's stdout. Two descriptors, both
    small: plain ``select`` (which, unlike ``poll`` on macOS, also takes a terminal as stdin).
    """
    watched = [stdin, sock.fileno()]
    try:
        while True:
            readable, _, _ = select(watched, [], [])
            if stdin in readable:
                data = os.read(stdin, _CHUNK)
                if data:
                    sock.sendall(data)
                else:
                    watched.remove(stdin)
                    sock.shutdown(_socket.SHUT_WR)
            if sock.fileno() in readable:
                data = sock.recv(_CHUNK)
                if not data:
                    return
                _write_all(stdout, data)
    except (BrokenPipeError, ConnectionResetError):
        return
    finally:
        sock.close()


def run_proxy(argv: Sequence[str]) -> int:
    """``pycodex app-server proxy [--sock PATH]``: pipe stdio to the socket (starting the daemon if needed).

    The CLI hands over before any of its own set-up, so what it does for every command is done here too:
    SIGUSR1 dumps stacks instead of ending the process, a ``CODEX_HOME`` that is not a folder is refused,
    and a Ctrl-C ends it with status 130 and no traceback."""
    try:
        _survive_usr1()
        return _run(argv)
    except KeyboardInterrupt:
        return 130  # pycodex.signals.INTERRUPTED_EXIT (that module imports signal's enums)


def _survive_usr1() -> None:
    """pycodex.signals.survive_usr1 without ``signal``, whose enum classes cost more than this whole module."""
    try:
        faulthandler.register(_signal.SIGUSR1, all_threads=True)
    except (AttributeError, ValueError, RuntimeError):  # no SIGUSR1 (Windows), no stderr fd
        pass


def _run(argv: Sequence[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(f"{_USAGE}\n\n"
              "Proxy stdio bytes to the running app-server control socket (the daemon's is started if none runs).")
        return 0
    problem = _home_problem()
    if problem is not None:
        return _fail(f"Error: {problem}", 1)
    try:
        words, values = options(argv, frozenset({"--sock"}))
    except ValueError as exc:
        return _fail(f"error: {exc}", 2)
    if words:
        return _fail(f"error: unexpected argument '{words[0]}'", 2)
    path = values.get("--sock")
    try:
        sock = connect_control_socket(path) if path is not None else _connect_or_start(codex_home())
    except OSError as exc:
        path = path or os.path.join(codex_home(), CONTROL_SOCKET)
        return _fail(f"Error: failed to connect to {path}: {exc.strerror or exc}", 1)
    except Exception as exc:  # the daemon could not start (DaemonError): say why, no traceback
        return _fail(f"Error: {exc}", 1)
    pipe(sock)
    return 0


def _fail(line: str, code: int) -> int:
    print(line, file=sys.stderr)
    return code


def _home_problem() -> str | None:
    """Codex's refusal of a set ``CODEX_HOME`` that names no folder (pycodex.codex_home words it; that module
    is loaded only when the quick check fails)."""
    raw = os.environ.get("CODEX_HOME")
    if not raw or os.path.isdir(os.path.expanduser(raw)):
        return None
    from pycodex.codex_home import codex_home_problem

    return codex_home_problem()


def _connect_or_start(home: str) -> _socket.socket:
    path = os.path.join(home, CONTROL_SOCKET)
    try:
        return connect_control_socket(path)
    except OSError:
        pass
    from app_server.daemon import lifecycle

    lifecycle.start(lifecycle.Layout(home))  # nothing listens: start the daemon (idempotent, locked)
    return connect_control_socket(path)
