"""The proxy module on its own: the control socket it finds (the same as the listener's, though spelled again
so the proxy need not import ``unix_paths``), its argument parser, and the pipe's two ends and their EOFs."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from app_server.daemon import proxy
from app_server.startup import default_codex_home
from pycodex.transport.unix_paths import default_socket_path


@pytest.mark.parametrize("home", ["/abs/home", "rel/home", ""])
def test_the_proxy_finds_the_listeners_home_and_socket(
    home: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("CODEX_HOME", home)
    assert proxy.codex_home() == str(default_codex_home())
    assert os.path.join(proxy.codex_home(), proxy.CONTROL_SOCKET) == str(default_socket_path(default_codex_home()))


def test_options() -> None:
    assert proxy.options(["--sock", "a", "-c", "k=v", "--sock=b"], frozenset({"--sock"})) == (
        [], {"--sock": "b", "-c": "k=v"})
    assert proxy.options(["start"], frozenset()) == (["start"], {})
    with pytest.raises(ValueError, match="a value is required for '--sock'"):
        proxy.options(["--sock"], frozenset({"--sock"}))
    with pytest.raises(ValueError, match="unexpected argument '--nope'"):
        proxy.options(["--nope"], frozenset())


def test_connecting_follows_the_alias_symlink(tmp_path: Path) -> None:
    real, alias = tmp_path / "real.sock", tmp_path / "alias.sock"
    with pytest.raises(OSError):
        proxy.connect_control_socket(alias)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(real))
        server.listen(1)
        alias.symlink_to(real)
        proxy.connect_control_socket(alias).close()


def _read_until_eof(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_the_pipe_carries_both_ways_and_passes_each_eof_on() -> None:
    server, ours = socket.socketpair()
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    server.settimeout(10)
    worker = threading.Thread(target=proxy.pipe, args=(ours, stdin_r, stdout_w), daemon=True)
    worker.start()
    try:
        big = os.urandom(300_000)  # more than one chunk and than a pipe buffer
        writer = threading.Thread(target=lambda: (os.write(stdin_w, big[:1]), os.write(stdin_w, big[1:]),
                                                  os.close(stdin_w)), daemon=True)
        writer.start()
        assert _read_until_eof(server) == big  # stdin's end half-closed the socket
        writer.join(10)
        server.sendall(b"answer")
        server.close()  # the socket's end ends the pipe
        worker.join(10)
        assert not worker.is_alive()
        assert os.read(stdout_r, 100) == b"answer"
    finally:
        for fd in (stdin_r, stdout_r, stdout_w):
            os.close(fd)


def test_the_proxy_refuses_what_the_cli_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(proxy, "_survive_usr1", lambda: None)  # not in pytest's own process
    missing = tmp_path / "typo"
    monkeypatch.setenv("CODEX_HOME", str(missing))
    assert proxy.run_proxy([]) == 1
    assert capsys.readouterr().err == f'Error: CODEX_HOME points to "{missing}", but that path does not exist\n'
    assert not missing.exists()
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    assert proxy.run_proxy(["--sock"]) == 2
    assert capsys.readouterr().err == "error: a value is required for '--sock'\n"
    assert proxy.run_proxy(["extra"]) == 2
    assert capsys.readouterr().err == "error: unexpected argument 'extra'\n"
    assert proxy.run_proxy(["--sock", str(tmp_path / "none.sock")]) == 1
    assert capsys.readouterr().err.startswith(f"Error: failed to connect to {tmp_path / 'none.sock'}: ")
