"""``pycodex relay``: run the development registry and rendezvous (the lead wires the subcommand).

Prints the registry URL (``http://127.0.0.1:PORT``, what ``exec-server --remote`` and
``CODEX_EXEC_SERVER_NOISE_REGISTRY_URL`` take) as the first stdout line and the rendezvous URL as the
second, then serves until SIGINT/SIGTERM. Bearer tokens come from ``PYCODEX_RELAY_TOKEN`` and/or
``--token-file`` (one token per line); they are never printed or logged.

``--control-stdin`` is for a process that owns the relay (an app-server whose environments start their own
boxes, ``app_server/providers/relay_link.py``): it reads one command a line from stdin and answers one line
on stdout, and end of file stops the relay (its owner is gone). Commands: ``grant ENV`` (answer: a new token
for that environment's register and validate only, ``DevRegistry.grant``), ``revoke ENV`` (``ok``),
``connected ENV`` (``yes``/``no``: is its executor on the rendezvous).

``--listen-unix PATH`` also serves both endpoints on a unix socket (``relay/unix_front.py``): an executor
in a box without a network registers with ``--remote unix://PATH``.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import os
import sys
from pathlib import Path

from pycodex.signals import stop_on_signals
from relay.registry import AuthorizationDecision, fixed_policy
from relay.server import RunningRelay, start_relay

__all__ = ["DESCRIPTION", "TOKEN_ENV_VAR", "add_relay_arguments", "run_relay"]

TOKEN_ENV_VAR = "PYCODEX_RELAY_TOKEN"
DESCRIPTION = (
    "Run a DEVELOPMENT environment registry and rendezvous relay for remote exec-servers on loopback. "
    "It keeps state in memory and accepts static bearer tokens: it is a development tool, not a "
    "production control plane."
)


class _UsageError(Exception):
    pass


def add_relay_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``pycodex relay`` options (listen addresses, token file, capture file, validate decision)."""
    parser.description = DESCRIPTION
    parser.add_argument(
        "--listen",
        default="127.0.0.1:0",
        metavar="127.0.0.1:PORT",
        help="loopback address of the registry HTTP endpoint (default: a free port)",
    )
    parser.add_argument(
        "--rendezvous-listen",
        default=None,
        metavar="127.0.0.1:PORT",
        help="loopback address of the rendezvous websocket (default: same host, a free port)",
    )
    parser.add_argument(
        "--token-file",
        action="append",
        default=[],
        metavar="PATH",
        help=f"file with accepted bearer tokens, one per line (also: ${TOKEN_ENV_VAR})",
    )
    parser.add_argument(
        "--capture", default=None, metavar="FILE", help="append every relayed frame to FILE as JSON lines"
    )
    parser.add_argument(
        "--listen-unix",
        default=None,
        metavar="PATH",
        help="also serve registry and rendezvous on this unix socket (for executors without a network)",
    )
    parser.add_argument(
        "--control-stdin",
        action="store_true",
        help="take grant/revoke/connected commands on stdin, one a line; stop at end of file",
    )
    parser.add_argument(
        "--validate-decision",
        choices=[d.value for d in AuthorizationDecision],
        default=AuthorizationDecision.ALLOW.value,
        help="answer of /validate for a correctly authorized harness key (default: allow)",
    )


def _loopback(value: str, flag: str) -> tuple[str, int]:
    host, sep, port_text = value.rpartition(":")
    if not sep or not port_text.isdigit() or int(port_text) > 65535:
        raise _UsageError(f"{flag} must be 127.0.0.1:PORT, got {value!r}")
    try:
        is_loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        is_loopback = False
    if not is_loopback:
        raise _UsageError(f"{flag} must bind a loopback address (development tool), got {host!r}")
    return host.strip("[]"), int(port_text)


def _tokens(files: list[str]) -> list[str]:
    tokens = [t for t in [os.environ.get(TOKEN_ENV_VAR, "").strip()] if t]
    for name in files:
        try:
            text = Path(name).read_text(encoding="utf-8")
        except OSError as exc:
            raise _UsageError(f"cannot read --token-file {name}: {exc.strerror}") from exc
        tokens += [line.strip() for line in text.splitlines() if line.strip()]
    if not tokens:
        raise _UsageError(f"no bearer token configured: set ${TOKEN_ENV_VAR} or pass --token-file")
    return tokens


async def run_relay(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM; returns the exit status (2 for bad options, 1 if binding fails)."""
    try:
        host, port = _loopback(args.listen, "--listen")
        ws_host, ws_port = (
            _loopback(args.rendezvous_listen, "--rendezvous-listen") if args.rendezvous_listen else (host, 0)
        )
        if ws_host != host:
            raise _UsageError("--listen and --rendezvous-listen must use the same host")
        tokens = _tokens(list(args.token_file))
    except _UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    policy = fixed_policy(AuthorizationDecision(args.validate_decision))
    capture = Path(args.capture) if args.capture else None
    try:
        relay = await start_relay(
            tokens, host=host, port=port, rendezvous_port=ws_port, capture=capture, policy=policy,
            unix_path=Path(args.listen_unix) if getattr(args, "listen_unix", None) else None,
        )
    except OSError as exc:
        where = f"{host} / {args.listen_unix}" if getattr(args, "listen_unix", None) else host
        print(f"error: cannot listen on {where}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(relay.registry_url, flush=True)
    print(relay.rendezvous_url, flush=True)
    print(
        f"pycodex relay: development registry {relay.registry_url}, rendezvous {relay.rendezvous_url} "
        "(development tool, not a production control plane)",
        file=sys.stderr,
        flush=True,
    )
    stop = stop_on_signals()
    control = asyncio.create_task(_control(relay, stop)) if getattr(args, "control_stdin", False) else None
    try:
        await stop.wait()
    finally:
        if control is not None:
            control.cancel()
        await relay.close()
    return 0


def _answer(relay: RunningRelay, line: str) -> str:
    command, _, environment_id = line.strip().partition(" ")
    if not environment_id:
        return "error: expected COMMAND ENVIRONMENT_ID"
    if command == "grant":
        return relay.registry.grant(environment_id)
    if command == "revoke":
        relay.registry.revoke(environment_id)
        relay.rendezvous.drop_environment(environment_id)
        return "ok"
    if command == "connected":
        return "yes" if relay.rendezvous.executor_connected(environment_id) else "no"
    return f"error: unknown command {command!r}"


async def _control(relay: RunningRelay, stop: asyncio.Event) -> None:
    """Serve ``--control-stdin`` until end of file, then stop the relay."""
    reader = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        while line := await reader.readline():
            print(_answer(relay, line.decode(errors="replace")), flush=True)
    finally:
        stop.set()


def main(argv: list[str] | None = None) -> int:
    """Run ``pycodex relay`` with ``argv`` (the process's arguments by default); returns the exit status."""
    parser = argparse.ArgumentParser(prog="pycodex relay")
    add_relay_arguments(parser)
    return asyncio.run(run_relay(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
