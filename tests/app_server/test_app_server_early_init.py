"""The stdio start-up fast path (app_server/startup.py): a plain ``initialize`` is answered before the server
is built, and nothing a client can see differs from the full path: the same answer, the same errors for
params the fast path declines, the same session afterwards; a fatal config still stops the server before
it answers; SIGTERM during start-up still ends it gracefully."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app_server.protocol.initialize import ClientInfo, InitializeCapabilities, InitializeParams
from app_server.startup import CAPABILITY_KEYS, plain_client_info
from tests.support.appserver_process import app_server_env, default_argv

_INFO = {"name": "t", "version": "1"}


@pytest.mark.parametrize(
    ("params", "plain"),
    [
        ({"clientInfo": _INFO}, True),
        ({"clientInfo": {**_INFO, "title": None}, "capabilities": None}, True),
        ({"clientInfo": _INFO, "capabilities": {"experimentalApi": True, "optOutNotificationMethods": ["a"],
                                                "extensions": {}, "requestAttestation": None}}, True),
        ({"clientInfo": {"name": 5, "version": "1"}}, False),  # the model's error, worded by the full path
        ({"client_info": _INFO}, False),  # a Python field name: pydantic decides
        ({"clientInfo": _INFO, "capabilities": {"experimentalApi": "yes"}}, False),
        ({"clientInfo": _INFO, "capabilities": {"optOutNotificationMethods": [1]}}, False),
        ({"clientInfo": _INFO, "capabilities": {"somethingNew": True}}, False),
        ({"clientInfo": {**_INFO, "extra": 1}}, False),
        (None, False),
        ([], False),
    ],
)
def test_only_params_that_certainly_validate_are_plain(params: Any, plain: bool) -> None:
    assert (plain_client_info(params) is not None) == plain


def test_the_fast_path_knows_every_field_of_the_params_models() -> None:
    def wire_keys(model: type[Any]) -> set[str]:
        return {field.alias or name for name, field in model.model_fields.items()}

    assert wire_keys(InitializeParams) == {"clientInfo", "capabilities"}
    assert wire_keys(ClientInfo) == {"name", "title", "version"}
    assert wire_keys(InitializeCapabilities) == set(CAPABILITY_KEYS)
    # every capability is optional, so the fast path may take its absence (or null) as the default
    assert not [name for name, field in InitializeCapabilities.model_fields.items() if field.is_required()]


def _serve(home: Path, stdin: bytes, *flags: str) -> tuple[list[Any], str]:
    """Run a stdio server over ``stdin`` until EOF: its stdout messages (timestamps dropped) and stderr."""
    proc = subprocess.run(default_argv(*flags), input=stdin, capture_output=True, timeout=60,
                          env=app_server_env(home, {"PYCODEX_LOG": "warn"}))
    messages = [json.loads(line) for line in proc.stdout.splitlines()]
    for message in messages:
        message.pop("emittedAtMs", None)
    return messages, proc.stderr.decode()


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


_TITLED = {"id": "a", "method": "initialize", "params": {
    "clientInfo": {**_INFO, "title": "T"}, "capabilities": {"experimentalApi": True}}}


@pytest.mark.parametrize(
    "stdin",
    [
        # answered early; the replay sets the session up (a second initialize is refused), CRLF framing
        _line(_TITLED).replace(b"\n", b"\r\n") + _line({**_TITLED, "id": 2}),
        # declined by the fast path: the full path's errors
        _line({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": 5, "version": "1"}}}),
        _line({"id": 1, "method": "initialize", "params": {"client_info": _INFO}}) + _line({**_TITLED, "id": 2}),
        _line({"id": 1, "method": "thread/list", "params": {}}) + _line(_TITLED),
        _line(_TITLED).rstrip(b"\n"),  # no LF before EOF
    ],
    ids=["early", "bad-params", "python-name", "not-initialize-first", "unterminated"],
)
def test_the_fast_path_answers_as_the_full_path_does(tmp_path: Path, stdin: bytes) -> None:
    fast, fast_err = _serve(tmp_path / "home", stdin)
    # --strict-config changes nothing here (no config.toml) but always takes the full path.
    full, _ = _serve(tmp_path / "home", stdin, "--strict-config")
    assert fast == full and fast, (fast, full)
    assert "early answer" not in fast_err


def test_a_fatal_config_is_reported_before_initialize_is_answered(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('approval_policy = "untrusted"\n')
    proc = subprocess.run(default_argv(), input=_line(_TITLED), capture_output=True, timeout=60,
                          env=app_server_env(home, {"PYCODEX_LOG": "error"}))
    assert (proc.returncode, proc.stdout) == (1, b""), proc.stderr
    assert proc.stderr.decode().startswith('Error: approval_policy = "untrusted"'), proc.stderr


def test_sigterm_while_the_server_is_still_being_built_ends_it_gracefully(tmp_path: Path) -> None:
    with subprocess.Popen(default_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          env=app_server_env(tmp_path / "home", {"PYCODEX_LOG": "error"})) as proc:
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(_line(_TITLED))
            proc.stdin.flush()
            assert json.loads(proc.stdout.readline())["id"] == "a"
            proc.send_signal(signal.SIGTERM)  # the server is (most likely) still importing its modules
            assert proc.wait(timeout=60) == 0
        finally:
            proc.kill()
