"""Who may talk to `app-server --listen ws://...`: the Origin refusal and the `--ws-auth` modes.

Pinned to Codex 0.169.0: a request carrying `Origin` is refused with 403 on every path (the probes
included), before any session exists; with `--ws-auth` a missing or bad bearer token gets 401 with
Codex's body at the upgrade; an unauthenticated non-loopback listener is refused at start. Real
loopback sockets and real `pycodex app-server` subprocesses throughout.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from websockets.datastructures import Headers

from pycodex.transport.base import Outbox
from pycodex.transport.websocket import serve_websocket
from pycodex.transport.ws_auth import SignedBearer, authorize
from tests.support import ServerProcess, WsAppServerClient, app_server_env, default_argv, free_port
from tests.support.http_probe import http_exchange, wait_ready

TOKEN = "cap-token-7f3a9c-DO-NOT-LOG"
SECRET = "s" * 40
EVIL = "Origin: http://evil.example"
INIT = {"clientInfo": {"name": "auth_test", "version": "1"}}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_jwt(claims: dict[str, Any], secret: str = SECRET, alg: str = "HS256") -> str:
    """An HS256 JWT built by hand, independent of the library the server uses to check it."""
    head = _b64(json.dumps({"alg": alg, "typ": "JWT"}).encode())
    body = _b64(json.dumps(claims).encode())
    sig = _b64(hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest())
    return f"{head}.{body}.{sig}"


Spawn = Callable[..., Awaitable[tuple[ServerProcess, int]]]


@pytest.fixture
async def spawn_ws(codex_home: Path, workspace: Path) -> AsyncIterator[Spawn]:
    """`await spawn_ws(*args, env=...)` -> (process, port) once /readyz answers; all stopped at teardown."""
    started: list[ServerProcess] = []

    async def spawn(*args: str, env: dict[str, str | None] | None = None) -> tuple[ServerProcess, int]:
        port = free_port()
        argv = default_argv("--listen", f"ws://127.0.0.1:{port}", *args)
        process = await ServerProcess.spawn(argv, env=app_server_env(codex_home, env), cwd=workspace,
                                            protocol_stdio=False)
        started.append(process)
        await wait_ready(port, exited=lambda: process.returncode is not None)
        return process, port

    yield spawn
    for process in started:
        await process.stop(3.0, eof_first=False)


async def _works(port: int, headers: dict[str, str]) -> None:
    """A client with these headers can initialize and start a thread."""
    client = await WsAppServerClient.connect(f"ws://127.0.0.1:{port}", None, headers=headers, timeout=10.0)
    try:
        await client.request("initialize", INIT)
        started = await client.call("thread/start", {})
        assert started["thread"]["id"]
    finally:
        await client.close()


# -- Origin --------------------------------------------------------------------------------------------

class _Counting:
    """A connection handler that only counts sessions (the transport alone is under test)."""

    def __init__(self) -> None:
        self.sessions = 0

    def __call__(self, outbox: Outbox) -> Any:
        self.sessions += 1

        class Handler:
            async def on_message(self, raw: bytes) -> None:
                await outbox.send(raw)

            async def on_line_too_long(self, size: int) -> None:
                return None

            async def on_close(self) -> None:
                return None

        return Handler()


async def test_a_request_with_origin_is_refused_403_on_every_path_before_any_session() -> None:
    counting = _Counting()
    stop = asyncio.Event()
    port = free_port()
    server = asyncio.create_task(serve_websocket(counting, "127.0.0.1", port, stop=stop))
    try:
        await wait_ready(port, exited=server.done)
        for path, upgrade in (("/", True), ("/any/path", True), ("/readyz", False), ("/healthz", False),
                              ("/readyz", True)):
            answer = await http_exchange(port, path, [EVIL], upgrade=upgrade)
            assert (answer.status, answer.body) == (403, b""), (path, answer)
        assert counting.sessions == 0
        # Without Origin the probes answer 200 with an empty body and an upgrade opens a session.
        assert (await http_exchange(port, "/healthz", upgrade=False)).status == 200
        assert (await http_exchange(port, "/", upgrade=True)).status == 101
        for _ in range(100):
            if counting.sessions:
                break
            await asyncio.sleep(0.01)
        assert counting.sessions == 1
    finally:
        stop.set()
        await asyncio.wait_for(server, 10.0)


async def test_the_cli_server_refuses_a_foreign_origin_and_still_serves_others(spawn_ws: Spawn) -> None:
    _process, port = await spawn_ws()
    answer = await http_exchange(port, "/", [EVIL])
    assert (answer.status, answer.body) == (403, b"")
    await _works(port, {})


# -- capability token ----------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["token-file", "sha256"])
async def test_capability_token_missing_or_bad_is_401_and_the_token_never_reaches_the_log(
    spawn_ws: Spawn, tmp_path: Path, variant: str
) -> None:
    if variant == "token-file":
        token_file = tmp_path / "token"
        token_file.write_text(f"  {TOKEN}\n")  # surrounding whitespace is trimmed, as in Codex
        args = ["--ws-auth", "capability-token", "--ws-token-file", str(token_file)]
    else:
        args = ["--ws-auth", "capability-token", "--ws-token-sha256", hashlib.sha256(TOKEN.encode()).hexdigest()]
    process, port = await spawn_ws(*args, env={"PYCODEX_LOG": "debug", "RUST_LOG": "debug"})
    wrong = "wrong-token-DO-NOT-LOG-2"
    for headers, body in [
        ([], b"missing websocket bearer token"),
        ([f"Authorization: Bearer {wrong}"], b"invalid websocket bearer token"),
        ([f"Authorization: Bearer {TOKEN}x"], b"invalid websocket bearer token"),
        ([f"Authorization: Basic {TOKEN}"], b"invalid authorization header"),
        (["Authorization: Bearer    "], b"invalid authorization header"),
        ([f"Authorization: Bearer {TOKEN}", f"Authorization: Bearer {TOKEN}"], b"invalid authorization header"),
    ]:
        answer = await http_exchange(port, "/", headers)
        assert (answer.status, answer.body) == (401, body), (headers, answer)
    # The probes stay open without a token; Origin is refused before auth is even looked at.
    assert (await http_exchange(port, "/readyz", upgrade=False)).status == 200
    assert (await http_exchange(port, "/", [EVIL, f"Authorization: Bearer {TOKEN}"])).status == 403
    await _works(port, {"Authorization": f"Bearer {TOKEN}"})
    assert (await http_exchange(port, "/", [f"authorization: bearer {TOKEN}"])).status == 101
    await process.stop(3.0, eof_first=False)
    log = process.stderr_text
    assert "DEBUG" in log  # the log really ran at debug level
    assert TOKEN not in log and wrong not in log


# -- signed bearer token (HS256 JWT) -------------------------------------------------------------------

async def test_signed_bearer_token_checks_signature_expiry_issuer_and_audience(
    spawn_ws: Spawn, tmp_path: Path
) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET + "\n")
    process, port = await spawn_ws(
        "--ws-auth", "signed-bearer-token", "--ws-shared-secret-file", str(secret_file),
        "--ws-issuer", "me", "--ws-audience", "you", "--ws-max-clock-skew-seconds", "10",
        env={"PYCODEX_LOG": "debug"},
    )
    now = int(time.time())
    good = make_jwt({"exp": now + 300, "iss": "me", "aud": "you"})
    for token, body in [
        (make_jwt({"exp": now + 300, "iss": "me", "aud": "you"}, secret="x" * 40), b"invalid websocket jwt"),
        (make_jwt({"exp": now + 300, "iss": "me", "aud": "you"}, alg="HS384"), b"invalid websocket jwt"),
        (make_jwt({"iss": "me", "aud": "you"}), b"invalid websocket jwt"),
        ("not.a-jwt", b"invalid websocket jwt"),
        (make_jwt({"exp": now - 120, "iss": "me", "aud": "you"}), b"expired websocket jwt"),
        (make_jwt({"exp": now + 600, "nbf": now + 300, "iss": "me", "aud": "you"}),
         b"websocket jwt is not valid yet"),
        (make_jwt({"exp": now + 300, "iss": "other", "aud": "you"}), b"websocket jwt issuer mismatch"),
        (make_jwt({"exp": now + 300, "iss": "me", "aud": "x"}), b"websocket jwt audience mismatch"),
        (make_jwt({"exp": now + 300, "iss": "me"}), b"websocket jwt audience mismatch"),
    ]:
        answer = await http_exchange(port, "/", [f"Authorization: Bearer {token}"])
        assert (answer.status, answer.body) == (401, body), (token, answer)
    await _works(port, {"Authorization": f"Bearer {good}"})
    listed = make_jwt({"exp": now + 300, "iss": "me", "aud": ["x", "you"]})
    assert (await http_exchange(port, "/", [f"Authorization: Bearer {listed}"])).status == 101
    await process.stop(3.0, eof_first=False)
    assert SECRET not in process.stderr_text and good not in process.stderr_text


def test_jwt_clock_skew_applies_to_exp_and_nbf() -> None:
    auth = SignedBearer(SECRET.encode(), max_clock_skew_s=30)
    now = 1_800_000_000

    def check(claims: dict[str, Any]) -> str | None:
        return authorize(Headers({"Authorization": f"Bearer {make_jwt(claims)}"}), auth, now=now)

    assert check({"exp": now - 30}) is None
    assert check({"exp": now - 31}) == "expired websocket jwt"
    assert check({"exp": now + 60, "nbf": now + 30}) is None
    assert check({"exp": now + 60, "nbf": now + 31}) == "websocket jwt is not valid yet"
    assert check({"exp": "soon"}) == "invalid websocket jwt"
    assert check({"exp": True}) == "invalid websocket jwt"


# -- refused at start ----------------------------------------------------------------------------------

def _run_cli(args: Sequence[str], codex_home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.Popen(default_argv(*args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=app_server_env(codex_home), cwd=cwd,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


NON_LOOPBACK = (
    "Error: refusing to start non-loopback websocket listener 0.0.0.0:{port} without auth; "
    "configure `--ws-auth capability-token` or `--ws-auth signed-bearer-token`"
)
SHA = "a" * 64


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--listen", "ws://0.0.0.0:{port}"], NON_LOOPBACK),
        (["--ws-auth", "capability-token"],
         "Error: `--ws-token-file` or `--ws-token-sha256` is required when `--ws-auth capability-token` is set"),
        (["--ws-auth", "capability-token", "--ws-token-file", "{tmp}/token", "--ws-token-sha256", SHA],
         "Error: `--ws-token-file` and `--ws-token-sha256` are mutually exclusive"),
        (["--ws-auth", "capability-token", "--ws-token-sha256", "abc"],
         "Error: --ws-token-sha256 must be a 64-character hex SHA-256 digest"),
        (["--ws-token-sha256", SHA],
         "Error: websocket auth flags require `--ws-auth capability-token` or `--ws-auth signed-bearer-token`"),
        (["--ws-auth", "capability-token", "--ws-token-file", "{tmp}/token", "--ws-issuer", "x"],
         "Error: `--ws-shared-secret-file`, `--ws-issuer`, `--ws-audience`, and `--ws-max-clock-skew-seconds` "
         "require `--ws-auth signed-bearer-token`"),
        (["--ws-auth", "signed-bearer-token", "--ws-token-sha256", SHA],
         "Error: `--ws-token-file` and `--ws-token-sha256` require `--ws-auth capability-token`, "
         "not `signed-bearer-token`"),
        (["--ws-auth", "signed-bearer-token"],
         "Error: `--ws-shared-secret-file` is required when `--ws-auth signed-bearer-token` is set"),
        (["--ws-auth", "signed-bearer-token", "--ws-shared-secret-file", "{tmp}/short"],
         "Error: signed websocket bearer secret {tmp}/short must be at least 32 bytes"),
        (["--ws-auth", "capability-token", "--ws-token-file", "{tmp}/empty"],
         "Error: websocket auth secret {tmp}/empty must not be empty"),
        (["--ws-auth", "capability-token", "--ws-token-file", "{tmp}/missing"],
         "Error: failed to read websocket auth secret {tmp}/missing: No such file or directory"),
    ],
    ids=["non-loopback", "no-token", "both-tokens", "bad-sha", "flags-without-mode", "signed-flag-on-capability",
         "token-on-signed", "no-secret", "short-secret", "empty-token-file", "missing-token-file"],
)
def test_bad_listener_setups_are_refused_at_start_with_one_line(
    args: list[str], line: str, codex_home: Path, workspace: Path, tmp_path: Path
) -> None:
    (tmp_path / "token").write_text(TOKEN)
    (tmp_path / "short").write_text("short-secret")
    (tmp_path / "empty").write_text("  \n")
    port = free_port()
    full = [a.format(port=port, tmp=tmp_path) for a in args]
    if "--listen" not in full:
        full += ["--listen", f"ws://127.0.0.1:{port}"]
    out = _run_cli(full, codex_home, workspace)
    assert out.returncode == 1, out.stderr
    assert out.stderr.splitlines() == [line.format(port=port, tmp=tmp_path)]
    assert TOKEN not in out.stderr and out.stdout == ""


@pytest.mark.codex
async def test_codex_answers_the_same_upgrade_table(tmp_path: Path, codex_bin: Path) -> None:
    """The statuses and bodies pinned above, asked of the reference binary."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    home = tmp_path / "home"
    home.mkdir()
    port = free_port()
    argv = [str(codex_bin), "app-server", "--listen", f"ws://127.0.0.1:{port}", "--ws-auth", "capability-token",
            "--ws-token-file", str(token_file)]
    process = await ServerProcess.spawn(argv, env=app_server_env(home), cwd=tmp_path, protocol_stdio=False)
    try:
        await wait_ready(port, exited=lambda: process.returncode is not None)
        table = [
            ("/", [EVIL], True, 403, b""),
            ("/readyz", [EVIL], False, 403, b""),
            ("/healthz", [], False, 200, b""),
            ("/", [], True, 401, b"missing websocket bearer token"),
            ("/", ["Authorization: Bearer nope"], True, 401, b"invalid websocket bearer token"),
            ("/", ["Authorization: Basic nope"], True, 401, b"invalid authorization header"),
            ("/", [f"Authorization: Bearer {TOKEN}"], True, 101, b""),
        ]
        for path, headers, upgrade, status, body in table:
            answer = await http_exchange(port, path, headers, upgrade=upgrade)
            assert (answer.status, answer.body) == (status, body), (path, headers, answer)
    finally:
        await process.stop(3.0, eof_first=False)
