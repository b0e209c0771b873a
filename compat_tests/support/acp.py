"""The ``acp`` scenario's tooling: the pinned codex-acp adapter, a minimal ACP client, the adapter's log.

``@agentclientprotocol/codex-acp`` (an Agent Client Protocol agent) spawns ``$CODEX_PATH app-server`` and
translates ACP to the app-server's JSON-RPC. :func:`install_adapter` puts the pinned release into the
compat cache with ``npm install --omit=optional`` (its ``@openai/codex`` dependency would otherwise pull
another Codex platform binary; the adapter only runs that one when ``CODEX_PATH`` is unset, which it
never is here), under a file lock. :class:`AcpClient` is the client side of ACP: newline-delimited
JSON-RPC 2.0 over the adapter's stdio, answering ``session/request_permission`` itself.
:func:`read_adapter_log` splits the log the adapter writes when ``APP_SERVER_LOGS`` is set into the
app-server's JSON-RPC traffic and its stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compat_tests.support.builds import Build, BuildError, cache_lock
from compat_tests.support.processes import STOP_TIMEOUT, ProcessHandle
from compat_tests.support.rpc import STEP, ScenarioError

__all__ = [
    "ADAPTER_PACKAGE",
    "ADAPTER_VERSION",
    "AcpClient",
    "AdapterLog",
    "PermissionPolicy",
    "describe_error",
    "install_adapter",
    "read_adapter_log",
    "started_pids",
    "stop_app_servers",
    "write_codex_wrapper",
]

ADAPTER_PACKAGE = "@agentclientprotocol/codex-acp"
ADAPTER_VERSION = "2.6.0"
_NPM_TIMEOUT = 600.0
_POLL = 0.05
#: The longest error text a cause line quotes (a dead app-server's stderr tail can be long).
_CAUSE_LIMIT = 400
#: JSON-RPC's "method not found": the answer to agent requests for capabilities the client did not offer.
_NO_METHOD = -32601
#: One entry of the adapter's log: ``2026-12-03 07:27:16,488 [OUT] TEXT {"pid":N}`` (TEXT may span lines).
_LOG_ENTRY = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \[([A-Z_][A-Z_ -]*)\] ?", re.MULTILINE)
_LOG_CONTEXT = re.compile(r'\s?\{"pid":\d+[^\n]*\}\s*$')

#: The client's answer to one ``session/request_permission`` (its params): the ACP ``outcome`` object.
PermissionPolicy = Callable[[dict[str, Any]], dict[str, Any]]




def _installed_version(prefix: Path) -> str:
    package = prefix / "node_modules" / ADAPTER_PACKAGE / "package.json"
    return str(json.loads(package.read_text()).get("version", "")) if package.is_file() else ""


def install_adapter() -> list[str]:
    """The argv that runs the pinned adapter (``node .../dist/index.js``), installing it into the cache first.

    Raises :class:`BuildError` with the whole reason (no node, no npm, npm's error output).
    """
    node = shutil.which("node")
    if node is None:
        raise BuildError(f"{ADAPTER_PACKAGE}@{ADAPTER_VERSION}: node is not on PATH")
    with cache_lock(f"codex-acp-{ADAPTER_VERSION}") as prefix:
        entry = prefix / "node_modules" / ADAPTER_PACKAGE / "dist" / "index.js"
        # Written last: an npm run that was killed halfway leaves no record, so it is installed again.
        record = prefix / "installed.json"
        if not record.is_file():
            _npm_install(prefix)
            got = _installed_version(prefix)
            if not entry.is_file() or got != ADAPTER_VERSION:
                shutil.rmtree(prefix, ignore_errors=True)
                raise BuildError(
                    f"npm installed {got or 'nothing'} instead of {ADAPTER_PACKAGE}@{ADAPTER_VERSION} ({entry})"
                )
            record.write_text(json.dumps({"package": ADAPTER_PACKAGE, "version": got}) + "\n")
    return [node, str(entry)]


def _npm_install(prefix: Path) -> None:
    spec = f"{ADAPTER_PACKAGE}@{ADAPTER_VERSION}"
    argv = ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--omit=optional"]
    argv += ["--prefix", str(prefix), spec]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_NPM_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(prefix, ignore_errors=True)
        raise BuildError(f"{spec}: {shlex.join(argv)}: {exc}") from None
    if done.returncode != 0:
        shutil.rmtree(prefix, ignore_errors=True)  # a failed install must not look like a cache entry
        output = (done.stderr.strip() or done.stdout.strip() or "(no output)").replace("\n", "\n    ")
        raise BuildError(f"{spec}: npm install failed (exit {done.returncode}):\n    {output}")


def write_codex_wrapper(build: Build, path: Path, pids: Path) -> Path:
    """An executable for ``CODEX_PATH`` (the adapter runs one file) that runs ``build``.

    It appends its PID to ``pids`` before it ``exec``s the build, so every app-server the adapter starts
    is counted (a restart after a crash shows) and can be stopped by its PID.
    """
    command = shlex.join(build.command())
    path.write_text(f'#!/bin/sh\necho $$ >> {shlex.quote(str(pids))}\nexec {command} "$@"\n')
    path.chmod(0o755)
    return path


@dataclass
class AdapterLog:
    """What one adapter's ``APP_SERVER_LOGS`` file says about the app-server behind it."""

    #: (direction, timestamp, message): ">" adapter to app-server, "<" app-server to adapter.
    traffic: list[tuple[str, str, Any]] = field(default_factory=list)
    stderr_lines: list[str] = field(default_factory=list)

    def transcript_lines(self, process: str) -> list[str]:
        return [json.dumps({"process": process, "dir": d, "t": t, "msg": m}) for d, t, m in self.traffic]


def read_adapter_log(path: Path) -> AdapterLog:
    """Parse the adapter's log: ``[IN]``/``[OUT]`` chunks of app-server JSON-RPC, ``[ERR]`` its stderr."""
    log = AdapterLog()
    if not path.is_file():
        return log
    text = path.read_text(encoding="utf-8", errors="replace")
    starts = list(_LOG_ENTRY.finditer(text))
    # A chunk is whatever one pipe read returned: lines are joined across chunks of one direction.
    pending = {"IN": "", "OUT": "", "ERR": ""}
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        tag, stamp = match[1], match[0][:23]
        body = _LOG_CONTEXT.sub("", text[match.end() : end])
        if tag not in pending:
            continue
        *lines, pending[tag] = (pending[tag] + body).split("\n")
        for line in lines:
            if tag == "ERR":
                log.stderr_lines.append(line)
            elif line.strip():
                try:
                    message: Any = json.loads(line)
                except json.JSONDecodeError:
                    message = {"unparsed": line}
                log.traffic.append((">" if tag == "IN" else "<", stamp, message))
    if pending["ERR"]:
        log.stderr_lines.append(pending["ERR"])  # the last line before the log ended, unterminated
    return log


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie has exited: it only waits for its reaper)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return fields[0] != "Z"


def started_pids(pids: Path) -> list[int]:
    """The PIDs :func:`write_codex_wrapper`'s script recorded, in start order."""
    text = pids.read_text() if pids.is_file() else ""
    return [int(word) for word in text.split() if word.isdigit()]


async def stop_app_servers(pids: Path) -> list[int]:
    """Wait (bounded) for every app-server recorded in ``pids`` to end; SIGKILL any left. Those it killed.

    The adapter stops its app-server when its own stdin closes; one that outlives the adapter is still a
    process this test started, so it is ended here by its PID.
    """
    killed = []
    for pid in started_pids(pids):
        for _ in range(int(STOP_TIMEOUT / _POLL)):
            if not _running(pid):
                break
            await asyncio.sleep(_POLL)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


class AcpClient:
    """The client side of ACP over one adapter process's stdio; keeps updates, agent requests, a transcript.

    ``permission`` answers ``session/request_permission``; any other agent request (a capability this
    client did not offer) is refused with "method not found" and kept in :attr:`refused`.
    """

    def __init__(self, handle: ProcessHandle, permission: PermissionPolicy) -> None:
        self.handle = handle
        self.permission = permission
        #: ``session/update`` params, in order of arrival.
        self.updates: list[dict[str, Any]] = []
        self.permission_requests: list[dict[str, Any]] = []
        self.refused: list[str] = []
        #: (direction, time, message): ">" client to adapter, "<" adapter to client.
        self.transcript: list[tuple[str, float, Any]] = []
        self._next_id = 1
        self._started = time.monotonic()

    async def _send(self, message: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", **message}
        self.transcript.append((">", time.monotonic() - self._started, message))
        try:
            await self.handle.write_line(json.dumps(message))
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ScenarioError(await self._exited(str(message.get("method", "a response")))) from exc

    async def _exited(self, during: str) -> str:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.handle.proc.wait(), 5.0)
        return f"{self.handle.name} exited rc={self.handle.proc.returncode} during {during}"

    async def _receive(self, waiting_for: str) -> dict[str, Any]:
        try:
            line = await self.handle.readline(STEP)
        except TimeoutError:
            raise ScenarioError(f"no {waiting_for} from {self.handle.name} within {STEP:.0f}s") from None
        except AssertionError:  # stdout closed
            raise ScenarioError(await self._exited(waiting_for)) from None
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            raise ScenarioError(
                f"{self.handle.name} wrote a non-JSON line to stdout: {line[:120]!r}"
            ) from None
        if not isinstance(message, dict):
            raise ScenarioError(
                f"{self.handle.name} wrote a JSON-RPC message that is not an object: {line[:120]}"
            )
        self.transcript.append(("<", time.monotonic() - self._started, message))
        return message

    async def _serve(self, message: dict[str, Any]) -> None:
        """Keep a notification; answer an agent request."""
        method = message.get("method")
        if "id" not in message:
            if method == "session/update" and isinstance(message.get("params"), dict):
                self.updates.append(message["params"])
            return
        if method == "session/request_permission":
            params = message.get("params") or {}
            self.permission_requests.append(params)
            await self._send({"id": message["id"], "result": {"outcome": self.permission(params)}})
            return
        self.refused.append(str(method))
        error = {"code": _NO_METHOD, "message": f"the compat client does not offer {method}"}
        await self._send({"id": message["id"], "error": error})

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request and serve the agent until its answer; ScenarioError naming an error answer."""
        request_id = self._next_id
        self._next_id += 1
        await self._send({"id": request_id, "method": method, "params": params})
        for _ in range(100_000):  # bounded: each iteration reads one message within STEP
            message = await self._receive(f"answer to {method}")
            if "method" in message:
                await self._serve(message)
                continue
            if message.get("id") != request_id:
                continue
            if "error" in message:
                raise ScenarioError(f"{method} failed: {describe_error(message['error'])}")
            result = message.get("result")
            if not isinstance(result, dict):
                raise ScenarioError(f"{method} answered without a result object: {json.dumps(message)[:200]}")
            return result
        raise ScenarioError(f"no answer to {method}")

    async def wait_for_update(self, what: str, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The first ``update`` (seen already or read on, serving the agent) that ``predicate`` accepts."""
        for _ in range(100_000):  # bounded: each iteration reads one message within STEP
            for params in self.updates:
                update = params.get("update")
                if isinstance(update, dict) and predicate(update):
                    return update
            message = await self._receive(what)
            if "method" in message:
                await self._serve(message)
        raise ScenarioError(f"no {what}")

    def updates_of(self, kind: str) -> list[dict[str, Any]]:
        """The ``update`` objects of every ``session/update`` whose ``sessionUpdate`` is ``kind``."""
        found = [u.get("update") for u in self.updates]
        return [u for u in found if isinstance(u, dict) and u.get("sessionUpdate") == kind]

    def agent_text(self) -> str:
        """Every ``agent_message_chunk`` text so far, concatenated."""
        chunks = [u.get("content") or {} for u in self.updates_of("agent_message_chunk")]
        return "".join(str(c.get("text", "")) for c in chunks if isinstance(c, dict))

    def transcript_lines(self, process: str) -> list[str]:
        return [
            json.dumps({"process": process, "dir": d, "t": round(t, 3), "msg": m})
            for d, t, m in self.transcript
        ]


def describe_error(error: Any) -> str:
    """``CODE MESSAGE (DETAILS)`` of a JSON-RPC error object on one line (at most :data:`_CAUSE_LIMIT` chars).

    The adapter puts the app-server's own reason in ``data.details``, and the tail of a dead app-server's
    stderr under its message.
    """
    if not isinstance(error, dict):
        return _one_line(str(error))
    text = f"{error.get('code', '?')} {error.get('message', '')}".strip()
    data = error.get("data")
    details = data.get("details") if isinstance(data, dict) else data
    return _one_line(f"{text} ({details})" if details else text)


def _one_line(text: str) -> str:
    line = " / ".join(part.strip() for part in text.splitlines() if part.strip())
    return line if len(line) <= _CAUSE_LIMIT else line[: _CAUSE_LIMIT - 3] + "..."
