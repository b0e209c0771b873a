"""An unusable config.toml fails closed, as on Codex 0.169: the server starts and answers `initialize`,
sends `configWarning` with the cause (file:line:col and range), says so on stderr, and refuses every
thread/start (and thread/fork, and a resume that loads a thread) with -32600 "failed to load
configuration: <cause>" until the file is fixed. It reads the file again per request, so fixing it needs
no restart. A bad `-c` flag stops the process at start-up instead.

The `codex` tests run the same cases against the reference binary and compare code and message.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import AppServerClient, app_server_env, default_argv, write_codex_config
from tests.support.errors import as_codex
from tests.support.fake_model import message, model_config, run_turn

DEAD_URL = "http://127.0.0.1:9/v1"
INVALID = "Invalid configuration; using defaults."
REFUSED = "failed to load configuration: "
PROVIDER = (
    'model_provider = "m"\n[model_providers.m]\nname = "M"\nbase_url = "http://127.0.0.1:9/v1"\n'
    'request_max_retries = "many"\n'
)

Start = Callable[..., Awaitable[AppServerClient]]


@dataclass(frozen=True)
class Case:
    name: str
    text: bytes
    details: str  # `{path}` is config.toml's path
    read: str  # config/read's -32603 message (`{details}` is the warning's details)
    span: tuple[int, int, int] | None = None  # (line, start column, end column) of the `range`
    exact: bool = True  # False: compare the details up to the position only (TOML parser wording differs)


LAYERS = "failed to read configuration layers: {details}"
CASES = [
    Case(
        "model = 5", b"model = 5\n", "{path}:1:9: invalid type: integer `5`, expected a string",
        "invalid configuration: invalid type: integer `5`, expected a string\nin `model`\n", (1, 9, 9),
    ),
    Case("malformed TOML", b'model = "x"\n[oops\n', "{path}:2:6: ", LAYERS, (2, 6, 6), exact=False),
    Case(
        "unknown sandbox_mode",
        b'model = "x"\nsandbox_mode = "bogus"\n',
        "{path}:2:16: unknown variant `bogus`, expected one of `read-only`, `workspace-write`, "
        "`danger-full-access`",
        "invalid configuration: unknown variant `bogus`, expected one of `read-only`, `workspace-write`, "
        "`danger-full-access`\nin `sandbox_mode`\n",
        (2, 16, 22),
    ),
    Case(
        "unknown model_provider", b'model_provider = "nope"\n', "Model provider `nope` not found",
        "failed to resolve feature override precedence: Model provider `nope` not found",
    ),
    Case(
        "bad type in a provider table",
        PROVIDER.encode(),
        '{path}:5:23: invalid type: string "many", expected u64',
        'invalid configuration: invalid type: string "many", expected u64\n'
        "in `model_providers.m.request_max_retries`\n",
        (5, 23, 28),
    ),
    Case(
        "non-UTF-8 bytes",
        b'model = "\xff\xfe"\n',
        "Failed to read config file {path}: invalid utf-8 sequence of 1 bytes from index 9",
        LAYERS,
    ),
]


def _invalid_warning(client: AppServerClient) -> dict[str, Any]:
    found = [n["params"] for n in client.notifications("configWarning") if n["params"]["summary"] == INVALID]
    assert len(found) == 1, client.notifications("configWarning")
    params: dict[str, Any] = found[0]
    return params


def _same(error: dict[str, Any]) -> dict[str, Any]:
    return error


async def _check_case(start: Start, home: Path, case: Case, *, codex: bool = False) -> None:
    expect = as_codex if codex else _same  # Codex 0.169 sends no error codes
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_bytes(case.text)
    details = case.details.format(path=path)
    client = await start(codex_home=home)
    await client.wait_notification("configWarning", lambda p: p["summary"] == INVALID)
    warning = _invalid_warning(client)
    if case.exact:
        assert warning["details"] == details
    else:
        assert warning["details"].startswith(details)
    if case.span is None:
        assert "path" not in warning and "range" not in warning
    else:
        line, first, last = case.span
        assert warning["path"] == str(path)
        assert warning["range"] == {"start": {"line": line, "column": first}, "end": {"line": line, "column": last}}

    for _ in range(2):  # refused every time, not just once
        error = (await client.request("thread/start", {}))["error"]
        assert error == expect({"code": -32600, "data": {"appErrorCode": "config_load_failed"},
                                "message": REFUSED + warning["details"]})
    assert (await client.call("thread/loaded/list", {}))["data"] == []  # still serving, nothing started
    read = (await client.request("config/read", {}))["error"]
    assert read == expect({"code": -32603, "data": {"appErrorCode": "internal_error"},
                           "message": case.read.format(details=warning["details"])})
    assert f"{INVALID} {warning['details']}" in client.stderr_text

    write_codex_config(home, base_url=DEAD_URL)  # fixed: the next thread/start reads it again
    started = await client.call("thread/start", {})
    assert started["model"] == "mock-model" and started["modelProvider"] == "mock_provider"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_a_bad_config_warns_and_refuses_thread_start_until_fixed(
    app_server: Start, tmp_path: Path, case: Case
) -> None:
    await _check_case(app_server, tmp_path / "home", case)


@pytest.mark.codex
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_codex_answers_the_same_bad_config_the_same_way(
    app_server: Start, codex_bin: Path, tmp_path: Path, case: Case
) -> None:
    async def start_codex(**kwargs: Any) -> AppServerClient:
        return await app_server(argv=[str(codex_bin), "app-server"], **kwargs)

    await _check_case(start_codex, tmp_path / "home", case, codex=True)


async def test_sandbox_mode_read_only_is_never_silently_widened(app_server: Start, tmp_path: Path) -> None:
    """The D4 hazard: a typo elsewhere used to drop `sandbox_mode = "read-only"` and run workspace-write."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('sandbox_mode = "read-only"\nmodel = 5\n')
    client = await app_server(codex_home=home)
    error = (await client.request("thread/start", {"sandbox": None}))["error"]
    assert error["message"].startswith(REFUSED)
    assert (await client.call("thread/loaded/list", {}))["data"] == []


async def _bad_flag_exit(argv: list[str], home: Path, cwd: Path) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=app_server_env(home), cwd=str(cwd),
    )
    try:
        _out, err = await asyncio.wait_for(proc.communicate(), 20)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode is not None
    return proc.returncode, err.decode("utf-8", "replace")


FLAGS = [
    ("model=5", "Error: invalid type: integer `5`, expected a string\nin `model`"),
    ("sandbox_mode=bogus", "Error: unknown variant `bogus`, expected one of `read-only`, `workspace-write`, "
                           "`danger-full-access`\nin `sandbox_mode`"),
    ("model_provider=nope", "Error: Model provider `nope` not found"),
    ("foo", "Error: error parsing -c overrides: Invalid override (missing '='): foo"),
]


@pytest.mark.parametrize(("flag", "expected"), FLAGS, ids=[f for f, _ in FLAGS])
async def test_a_bad_config_flag_stops_the_server_at_start_up(
    tmp_path: Path, workspace: Path, flag: str, expected: str
) -> None:
    home = tmp_path / "home"
    write_codex_config(home, base_url=DEAD_URL)
    code, stderr = await _bad_flag_exit(default_argv("-c", flag), home, workspace)
    assert code == 1
    assert stderr.startswith(expected), stderr
    assert "Traceback" not in stderr


@pytest.mark.codex
@pytest.mark.parametrize(("flag", "expected"), FLAGS, ids=[f for f, _ in FLAGS])
async def test_codex_stops_on_the_same_bad_config_flag(
    codex_bin: Path, tmp_path: Path, workspace: Path, flag: str, expected: str
) -> None:
    home = tmp_path / "home"
    write_codex_config(home, base_url=DEAD_URL)
    code, stderr = await _bad_flag_exit([str(codex_bin), "app-server", "-c", flag], home, workspace)
    assert code == 1
    assert f"\n{expected}" in stderr, stderr  # after Codex's note about /tmp


async def _lifecycle(start: Start, fake_model: Callable[..., Awaitable[Any]], home: Path, *, codex: bool = False) -> None:
    model = await fake_model({"responses": [{"output": [message("hi")]}], "when_exhausted": "repeat_last"})
    model_config(home, model.url)
    client = await start(codex_home=home)
    thread_id = (await client.call("thread/start", {}))["thread"]["id"]
    await run_turn(client, thread_id, "hello")

    (home / "config.toml").write_text("model = 5\n")
    refused = {"code": -32600, "data": {"appErrorCode": "config_load_failed"},
               "message": f"{REFUSED}{home / 'config.toml'}:1:9: invalid type: integer `5`, expected a string"}
    if codex:  # Codex 0.169 sends no error codes
        refused = as_codex(refused)
    assert (await client.request("thread/start", {}))["error"] == refused
    assert (await client.request("thread/fork", {"threadId": thread_id}))["error"] == refused
    # A loaded thread keeps its settings: joining it and running a turn need no config.
    assert (await client.call("thread/resume", {"threadId": thread_id}))["thread"]["id"] == thread_id
    assert (await run_turn(client, thread_id, "again"))["status"] == "completed"
    await client.close()

    fresh = await start(codex_home=home)
    assert (await fresh.request("thread/resume", {"threadId": thread_id}))["error"] == refused
    assert (await fresh.request("thread/fork", {"threadId": thread_id}))["error"] == refused
    assert (await fresh.call("thread/read", {"threadId": thread_id}))["thread"]["id"] == thread_id
    model_config(home, model.url)
    assert (await fresh.call("thread/resume", {"threadId": thread_id}))["thread"]["id"] == thread_id


async def test_a_broken_config_refuses_fork_and_cold_resume_but_not_a_loaded_thread(
    app_server: Start, fake_model: Callable[..., Awaitable[Any]], tmp_path: Path
) -> None:
    await _lifecycle(app_server, fake_model, tmp_path / "home")


@pytest.mark.codex
async def test_codex_refuses_fork_and_cold_resume_the_same_way(
    app_server: Start, codex_bin: Path, fake_model: Callable[..., Awaitable[Any]], tmp_path: Path
) -> None:
    async def start_codex(**kwargs: Any) -> AppServerClient:
        return await app_server(argv=[str(codex_bin), "app-server"], **kwargs)

    await _lifecycle(start_codex, fake_model, tmp_path / "home", codex=True)


# -- the scripted model's script ------------------------------------------------------------------------

SCRIPT_CASES = [
    ("missing file", None, "cannot read model script {path}: No such file or directory"),
    ("not JSON", b"[{oops", "model script {path}: invalid JSON at line 1: "),
    ("empty list", b"[]", "model script {path}: expected a non-empty list of responses"),
    ("unknown item type", b'[[{"type": "bogus"}]]', "model script {path}: response 0 item 0: unknown item type"),
    ("non-UTF-8", b'["\xff"]', "model script {path}: not valid UTF-8 (byte 2)"),
]


@pytest.mark.parametrize(("name", "content", "cause"), SCRIPT_CASES, ids=[c[0] for c in SCRIPT_CASES])
async def test_a_bad_model_script_is_reported_at_start_up_and_refuses_thread_start(
    app_server: Start, tmp_path: Path, name: str, content: bytes | None, cause: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('model_provider = "scripted"\n')  # the offline model, asked for by name
    script = tmp_path / "script.json"
    if content is not None:
        script.write_bytes(content)
    cause = cause.format(path=script)
    client = await app_server(codex_home=home, env={"PYCODEX_SCRIPT": str(script)})
    note = await client.wait_notification("configWarning", lambda p: bool(p.get("details")))
    assert note["params"]["details"].startswith(cause)
    error = (await client.request("thread/start", {}))["error"]
    assert error["code"] == -32600
    assert error["message"] == REFUSED + note["params"]["details"]
    assert "\n" not in error["message"]
    assert note["params"]["details"] in client.stderr_text
    assert "Traceback" not in client.stderr_text

    script.write_text('[["fixed"]]')  # no restart needed
    thread_id = (await client.call("thread/start", {}))["thread"]["id"]
    turn = await run_turn(client, thread_id, "hi")
    assert turn["status"] == "completed"
    assert [i["text"] for i in turn["items"] if i["type"] == "agentMessage"] == ["fixed"]


async def test_a_script_broken_after_start_up_fails_thread_start_not_the_process(
    app_server: Start, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "script.json"
    script.write_text('[["ok"]]')
    client = await app_server(codex_home=home, env={"PYCODEX_SCRIPT": str(script)})
    assert (await client.call("thread/start", {"modelProvider": "scripted"}))["model"]
    os.unlink(script)
    # The running scripted client keeps its script; a fresh provider table (new config) re-checks it.
    (home / "config.toml").write_text(f'[model_providers.scripted]\nscript = "{script}"\n')
    error = (await client.request("thread/start", {"modelProvider": "scripted"}))["error"]
    assert error == {"code": -32600, "data": {"appErrorCode": "config_load_failed"},
                     "message": f"{REFUSED}cannot read model script {script}: "
                                                 "No such file or directory"}
    assert (await client.call("thread/loaded/list", {}))["data"]
