"""Command-line handling of ``python -m exec_server``: bad options fail fast with a specific message."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.execserver import STEP, readline_with_deadline, server_argv, server_env


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--listen", "http://127.0.0.1:1"], "--listen must be ws://IP:PORT, stdio or stdio://"),
        (["--listen", "ws://127.0.0.1"], "--listen must be ws://IP:PORT, stdio or stdio://"),
        (["--ws-token-file", "/x"], "need --ws-auth capability-token"),
        (["--ws-auth", "capability-token"], "exactly one of --ws-token-file or --ws-token-sha256"),
        (["--ws-auth", "capability-token", "--ws-token-file", "rel/tok"], "must be an absolute path"),
        (["--ws-auth", "capability-token", "--ws-token-sha256", "abc"], "must be 64 hex digits"),
        (
            ["--ws-auth", "capability-token", "--ws-token-file", "/nonexistent/tok"],
            "cannot read --ws-token-file",
        ),
        (["--concurrent-requests", "0"], "--concurrent-requests must be at least 1"),
        # Unauthenticated off loopback is remote command execution for anyone who can reach the port.
        (["--listen", "ws://0.0.0.0:0"], "refusing to start non-loopback websocket listener 0.0.0.0:0 without auth"),
        (["--listen", "ws://[::]:0"], "refusing to start non-loopback websocket listener [::]:0 without auth"),
        (["--listen", "ws://example.invalid:0"], "non-loopback websocket listener example.invalid:0 without auth"),
    ],
)
def test_bad_options_exit_2_with_a_specific_message(args: list[str], message: str, tmp_path: Path) -> None:
    done = subprocess.run(
        server_argv("pycodex", *args),
        capture_output=True,
        env=server_env(tmp_path),
        timeout=STEP,
        check=False,
    )
    assert done.returncode == 2
    assert message in done.stderr.decode()
    assert done.stdout == b""


def test_an_empty_token_file_is_refused(tmp_path: Path) -> None:
    token = tmp_path / "tok"
    token.write_text("\n")
    args = ["--ws-auth", "capability-token", "--ws-token-file", str(token)]
    done = subprocess.run(
        server_argv("pycodex", *args),
        capture_output=True,
        env=server_env(tmp_path),
        timeout=STEP,
        check=False,
    )
    assert done.returncode == 2 and b"is empty" in done.stderr


def test_a_non_loopback_listener_with_a_capability_token_starts(tmp_path: Path) -> None:
    """The refusal is about auth, not the address: with a token, 0.0.0.0 listens (its URL is printed)."""
    args = ["--listen", "ws://0.0.0.0:0", "--ws-auth", "capability-token", "--ws-token-sha256", "ab" * 32]
    with subprocess.Popen(server_argv("pycodex", *args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          env=server_env(tmp_path), start_new_session=True) as proc:
        try:
            assert readline_with_deadline(proc, STEP).startswith("ws://0.0.0.0:")
        finally:
            proc.kill()
            proc.wait(STEP)
