"""What the app-server needs before it is built: CODEX_HOME, the fatal start-up error, and the stdio
fast path that answers ``initialize`` first.

Building the ``AppServer`` imports pydantic, the config schema and the stores, several times the CPU
Codex spends before it answers. So the stdio server first reads its opening line itself, with nothing but
the standard library and the sans-IO JSON-RPC codec loaded. When that line is an ``initialize`` whose
params no model is needed to judge, and nothing in the config could stop the server from starting, it
writes the response the handler would write and only then builds the server. The line is then replayed
through the real handler with its response held back (``AppConnection(early_answer=...)``), so the
session's state and the config warnings that follow the response come from the one real code path.

Everything else (another method, params that might not validate, a config that may be fatal) is handed
to the full path untouched: its answers, errors included, stay exactly what they were.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from pycodex import COMPATIBLE_CODEX_VERSION, __version__
from pycodex.jsonrpc.codec import RequestReceived, classify, encode

__all__ = ["CAPABILITY_KEYS", "EarlyStart", "StartupError", "answer_early", "default_codex_home", "initialize_result",
           "plain_client_info", "read_opening", "user_agent"]

#: The fast path gives up on an opening line longer than this (the full path reads on from there).
FIRST_LINE_LIMIT = 1 << 20
_READ_CHUNK = 1 << 16
#: InitializeCapabilities' wire keys and JSON types; null means the default for every one.
CAPABILITY_KEYS = {
    "experimentalApi": bool, "optOutNotificationMethods": list, "requestAttestation": bool,
    "requiredHumanApproval": bool, "extensions": dict, "explicitGatewayOauth": bool,
    "mcpServerOpenaiFormElicitation": bool,
}
#: Text in config.toml that may make loading it fatal (`approval_policy = "untrusted"`).
_FATAL_CONFIG_WORDS = (b"untrusted",)


class StartupError(Exception):
    """A fatal configuration problem; reported on stderr as ``Error: ...`` with exit status 1."""


class EarlyStart(NamedTuple):
    """What the fast path leaves for the full server."""

    #: Every byte already read from stdin, the opening line included: the server reads these first.
    pending: bytes
    #: The initialize response already written (the replayed request's answer is held back), or None.
    answered: bytes | None


def default_codex_home() -> Path:
    """``$CODEX_HOME``, else ``~/.pycodex``, as an absolute path."""
    raw = os.environ.get("CODEX_HOME")
    home = Path(raw) if raw else Path.home() / ".pycodex"
    return home.absolute()


def _os_description() -> str:
    try:
        release = platform.freedesktop_os_release()
        name = release.get("ID", "linux").capitalize()
        version = release.get("VERSION_ID", platform.release())
        return f"{name} {version}"
    except OSError:
        return f"{platform.system()} {platform.release()}"


def user_agent(client_name: str, client_version: str) -> str:
    """``<client>/<compatible Codex version> (pycodex <ver>; <os>; <arch>) <terminal> (<client>; <ver>)``.

    SDKs split the agent at the first ``/`` and read the runtime version from the next word, so that
    word must be the Codex version whose protocol we speak; our own version sits in the parenthetical.
    """
    terminal = os.environ.get("TERM_PROGRAM") or os.environ.get("TERM") or "unknown"
    return (
        f"{client_name}/{COMPATIBLE_CODEX_VERSION} (pycodex {__version__}; {_os_description()}; "
        f"{platform.machine() or 'unknown'}) {terminal} ({client_name}; {client_version})"
    )


def initialize_result(client_name: str, client_version: str, codex_home: Path) -> dict[str, str]:
    """The fields of InitializeResponse, in its wire order."""
    return {
        "userAgent": user_agent(client_name, client_version),
        "codexHome": str(codex_home),
        "platformFamily": "windows" if sys.platform == "win32" else "unix",
        "platformOs": {"linux": "linux", "darwin": "macos", "win32": "windows"}.get(sys.platform, sys.platform),
    }


def plain_client_info(params: Any) -> tuple[str, str] | None:
    """(client name, version) when ``params`` certainly validate as InitializeParams, else None.

    Conservative: wire keys only, exact JSON types, nothing the model would coerce or might refuse; a
    None sends the request down the full path, which judges (and words any error) as it always has.
    """
    if not isinstance(params, dict) or not params.keys() <= {"clientInfo", "capabilities"}:
        return None
    info, caps = params.get("clientInfo"), params.get("capabilities")
    if not isinstance(info, dict) or not info.keys() <= {"name", "title", "version"}:
        return None
    name, version, title = info.get("name"), info.get("version"), info.get("title")
    if not isinstance(name, str) or not isinstance(version, str) or not isinstance(title, str | None):
        return None
    if caps is not None:
        if not isinstance(caps, dict) or not caps.keys() <= CAPABILITY_KEYS.keys():
            return None
        for key, value in caps.items():
            if value is not None and type(value) is not CAPABILITY_KEYS[key]:
                return None
        methods = caps.get("optOutNotificationMethods") or []
        if not all(isinstance(method, str) for method in methods):
            return None
    return name, version


def _config_cannot_be_fatal(codex_home: Path, environ: Mapping[str, str]) -> bool:
    """True when building the server cannot end in a StartupError (the caller already ruled out `-c`
    flags and --strict-config): CODEX_HOME is usable, config.toml cannot hold the one fatal value, and
    no environments.toml or Noise relay variables pick a remote environment that could be misconfigured."""
    if environ.get("CODEX_EXEC_SERVER_NOISE_REGISTRY_URL"):
        return False
    try:
        codex_home.mkdir(parents=True, exist_ok=True)
        if (codex_home / "environments.toml").exists():
            return False
        text = (codex_home / "config.toml").read_bytes()
    except FileNotFoundError:
        return True
    except OSError:
        return False  # the full path says what is wrong, before answering anything
    return not any(word in text for word in _FATAL_CONFIG_WORDS)


def read_opening(fd: int) -> bytes:
    """Bytes from ``fd`` up to the first LF (perhaps more), or all of them at EOF or past the limit."""
    chunks: list[bytes] = []
    size = 0
    while size < FIRST_LINE_LIMIT:
        try:
            chunk = os.read(fd, _READ_CHUNK)
        except BlockingIOError:  # a non-blocking stdin: the event loop reads it
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if b"\n" in chunk:
            break
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def answer_early(pending: bytes, stdout_fd: int, codex_home: Path, environ: Mapping[str, str]) -> EarlyStart:
    """Answer the opening line of ``pending`` (what ``read_opening`` gave) here when it is a plain
    ``initialize`` (see the module doc)."""
    line, newline, _ = pending.partition(b"\n")
    if not newline:
        return EarlyStart(pending, None)
    message = classify(line.removesuffix(b"\r"))
    if not isinstance(message, RequestReceived) or message.method != "initialize":
        return EarlyStart(pending, None)
    client = plain_client_info(message.params)
    if client is None or not _config_cannot_be_fatal(codex_home, environ):
        return EarlyStart(pending, None)
    answer = encode({"id": message.id, "result": initialize_result(*client, codex_home)})
    _write_all(stdout_fd, answer + b"\n")
    return EarlyStart(pending, answer)
