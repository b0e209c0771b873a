"""Table of bad config.toml contents and bad request params for the thread and turn methods.

Each row pins the exact answer, then checks that the server still serves and that nothing under
sessions/ changed (byte for byte). One server is shared by the table; config rows rewrite config.toml
before their request (the server reads it again for every thread/start, as Codex does) and restore it
after. Rows already covered by tests/app_server/test_app_server_errors.py are not repeated here.

The same table runs against the reference Codex binary (`codex` mark); `codex=` pins its answer where
it differs from ours (pycodex reports bad params as -32602 and names the field).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.support import AppServerClient, SchemaPair, write_codex_config
from tests.support.tools import require_codex

DEAD_URL = "http://127.0.0.1:9/v1"
NOT_LOADED = "019a0000-0000-7000-8000-000000000000"
LOAD = "failed to load configuration: "
UUID_CODEX = "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1"
SAME: dict[str, Any] = {}
APPROVALS = "expected one of `untrusted`, `on-request`, `never`"


@dataclass(frozen=True)
class Row:
    name: str
    method: str
    params: dict[str, Any]  # "{thread}" in a value is the loaded thread's id
    reply: dict[str, Any]  # the exact error; "{path}" is config.toml's path
    config: str | None = None  # written to config.toml before the request
    prefix: bool = False  # the message is compared up to its length only
    codex: dict[str, Any] | None = None  # Codex's answer when it differs; None skips the row for Codex


def err(code: int, message: str) -> dict[str, Any]:
    return {"code": code, "message": message}


def bad_param(message: str, codex: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return err(-32602, f"Invalid request: {message}"), err(-32600, f"Invalid request: {codex}")


def _param_row(name: str, method: str, params: dict[str, Any], ours: str, theirs: str) -> Row:
    reply, codex = bad_param(ours, theirs)
    return Row(name, method, params, reply, codex=codex)


TEXT = [{"type": "text", "text": "x"}]

CONFIG_ROWS = [
    Row("config: unknown approval_policy", "thread/start", {},
        err(-32600, LOAD + "{path}:1:19: unknown variant `bogus`, expected one of `untrusted`, `on-failure`, "
            "`on-request`, `granular`, `never`"),
        config='approval_policy = "bogus"\n', codex=SAME),
    Row("config: unknown reasoning effort", "thread/start", {},
        err(-32600, LOAD + "{path}:1:26: unknown variant `huge`, expected one of "), prefix=True,
        config='model_reasoning_effort = "huge"\n', codex=None),  # Codex 0.169 accepts any effort name
    Row("config: model_providers is not a table", "thread/start", {},
        err(-32600, LOAD + "{path}:1:19: invalid type: integer `5`, expected a map"),
        config="model_providers = 5\n", codex=SAME),
    Row("config: model_provider is not a string", "thread/start", {},
        err(-32600, LOAD + "{path}:1:18: invalid type: integer `5`, expected a string"),
        config="model_provider = 5\n", codex=SAME),
    Row("config: project_root_markers is not a list", "thread/start", {},
        err(-32600, LOAD + '{path}:1:24: invalid type: string "x", expected a sequence'),
        config='project_root_markers = "x"\n', codex=SAME),
    Row("config: reasoning summary is not a string", "thread/start", {},
        err(-32600, LOAD + "{path}:1:27: invalid type: integer `1`, expected a string"),
        config="model_reasoning_summary = 1\n", codex=err(-32600, LOAD + "{path}:1:27: wanted string or table")),
    Row("config: a provider header that is not a string", "thread/start", {},
        err(-32600, LOAD + "{path}:4:22: invalid type: integer `1`, expected a string"),
        config='[model_providers.m]\nname = "M"\nbase_url = "http://127.0.0.1:9/v1"\nhttp_headers = { a = 1 }\n',
        codex=SAME),
    Row("config: selected provider without base_url", "thread/start", {},
        err(-32600, LOAD + "{path}:2:1: missing field `base_url`"),
        config='model_provider = "m"\n[model_providers.m]\nname = "M"\n',
        codex=None),  # Codex 0.169 starts the thread (on the default OpenAI URL); pycodex refuses
    Row("config: a key set twice", "thread/start", {},
        err(-32600, LOAD + "{path}:2:"), prefix=True,
        config='model = "a"\nmodel = "b"\n', codex=SAME),
    Row("config: the retired chat wire_api", "thread/start", {},
        err(-32600, LOAD + '{path}:4:12: `wire_api = "chat"` is no longer supported.\nHow to fix: set '
            '`wire_api = "responses"` in your provider config.\nMore info: '
            "https://github.com/openai/codex/discussions/7782"),
        config='[model_providers.m]\nname = "M"\nbase_url = "http://127.0.0.1:9/v1"\nwire_api = "chat"\n',
        codex=SAME),
    Row("config: unknown wire_api", "thread/start", {},
        err(-32600, LOAD + "{path}:4:12: unknown variant `grpc`, expected `responses`"),
        config='[model_providers.m]\nname = "M"\nbase_url = "http://127.0.0.1:9/v1"\nwire_api = "grpc"\n',
        codex=SAME),
]

PARAM_ROWS = [
    _param_row("thread/start: unknown approvalPolicy", "thread/start", {"approvalPolicy": "bogus"},
               f"unknown variant `bogus` for `approvalPolicy`, {APPROVALS}",
               "unknown variant `bogus`, expected one of `untrusted`, `on-request`, `granular`, `never`"),
    _param_row("thread/start: cwd is a number", "thread/start", {"cwd": 5},
               "invalid type: integer `5` for `cwd`, expected a string",
               "invalid type: integer `5`, expected a string"),
    Row("thread/start: config override of the wrong type", "thread/start", {"config": {"model": 5}},
        err(-32600, LOAD + "invalid type: integer `5`, expected a string\nin `model`\n"), codex=SAME),
    Row("thread/start: config override with an unknown sandbox_mode", "thread/start",
        {"config": {"sandbox_mode": "bogus"}},
        err(-32600, LOAD + "unknown variant `bogus`, expected one of `read-only`, `workspace-write`, "
            "`danger-full-access`\nin `sandbox_mode`\n"), codex=SAME),
    Row("thread/start: config override naming an unknown provider", "thread/start",
        {"config": {"model_provider": "nope"}}, err(-32600, LOAD + "Model provider `nope` not found"), codex=SAME),
    _param_row("thread/start: config is not an object", "thread/start", {"config": "x"},
               'invalid type: string "x" for `config`, expected a map', 'invalid type: string "x", expected a map'),
    Row("thread/start: unknown modelProvider", "thread/start", {"modelProvider": "nope"},
        err(-32600, LOAD + "Model provider `nope` not found"), codex=SAME),
    _param_row("thread/start: ephemeral is a string", "thread/start", {"ephemeral": "yes"},
               'invalid type: string "yes" for `ephemeral`, expected a boolean',
               'invalid type: string "yes", expected a boolean'),
    _param_row("thread/start: baseInstructions is a number", "thread/start", {"baseInstructions": 5},
               "invalid type: integer `5` for `baseInstructions`, expected a string",
               "invalid type: integer `5`, expected a string"),
    Row("thread/resume: id that is not a UUID", "thread/resume", {"threadId": "not-a-uuid"},
        err(-32600, "invalid thread id: 'not-a-uuid' is not a UUID"),
        codex=err(-32600, f"invalid session id: {UUID_CODEX}")),
    Row("thread/resume: no such thread", "thread/resume", {"threadId": NOT_LOADED},
        err(-32600, f"no rollout found for thread id {NOT_LOADED}"), codex=SAME),
    _param_row("thread/resume: threadId is a number", "thread/resume", {"threadId": 5},
               "invalid type: integer `5` for `threadId`, expected a string",
               "invalid type: integer `5`, expected a string"),
    _param_row("thread/resume: threadId missing", "thread/resume", {},
               "missing field `threadId`", "missing field `threadId`"),
    Row("thread/fork: no such thread", "thread/fork", {"threadId": NOT_LOADED},
        err(-32600, f"no rollout found for thread id {NOT_LOADED}"), codex=SAME),
    Row("thread/fork: id that is not a UUID", "thread/fork", {"threadId": "not-a-uuid"},
        err(-32600, "invalid thread id: 'not-a-uuid' is not a UUID"),
        codex=err(-32600, f"invalid session id: {UUID_CODEX}")),
    _param_row("turn/start: input missing", "turn/start", {"threadId": "{thread}"},
               "missing field `input`", "missing field `input`"),
    _param_row("turn/start: input is a string", "turn/start", {"threadId": "{thread}", "input": "hi"},
               'invalid type: string "hi" for `input`, expected a sequence',
               'invalid type: string "hi", expected a sequence'),
    Row("turn/start: id that is not a UUID", "turn/start", {"threadId": "not-a-uuid", "input": []},
        err(-32600, "invalid thread id: 'not-a-uuid' is not a UUID"),
        codex=err(-32600, f"invalid thread id: {UUID_CODEX}")),
    _param_row("turn/start: cwd is a number", "turn/start", {"threadId": "{thread}", "input": TEXT, "cwd": 7},
               "invalid type: integer `7` for `cwd`, expected a string",
               "invalid type: integer `7`, expected path string"),
    _param_row("turn/start: unknown approvalPolicy", "turn/start",
               {"threadId": "{thread}", "input": TEXT, "approvalPolicy": "bogus"},
               f"unknown variant `bogus` for `approvalPolicy`, {APPROVALS}",
               "unknown variant `bogus`, expected one of `untrusted`, `on-request`, `granular`, `never`"),
    Row("thread/archive: no such thread", "thread/archive", {"threadId": NOT_LOADED},
        err(-32600, f"no rollout found for thread id {NOT_LOADED}"), codex=SAME),
    Row("thread/unarchive: no such thread", "thread/unarchive", {"threadId": NOT_LOADED},
        err(-32600, f"no rollout found for thread id {NOT_LOADED}"),
        codex=err(-32600, f"no archived rollout found for thread id {NOT_LOADED}")),
    Row("thread/turns/list: no such thread", "thread/turns/list", {"threadId": NOT_LOADED},
        err(-32600, f"thread not loaded: {NOT_LOADED}"), codex=SAME),
    _param_row("thread/list: unknown sortKey", "thread/list", {"sortKey": "bogus"},
               "unknown variant `bogus` for `sortKey`, expected one of `created_at`, `updated_at`, `recency_at`, "
               "`section_position`",
               "unknown variant `bogus`, expected one of `created_at`, `updated_at`, `recency_at`, "
               "`section_position`"),
    Row("thread/list: a cursor this server never made", "thread/list", {"cursor": "garbage"},
        err(-32600, "invalid cursor: garbage"), codex=SAME),
    Row("thread/name/set: no such thread", "thread/name/set", {"threadId": NOT_LOADED, "name": "x"},
        err(-32600, f"no rollout found for thread id {NOT_LOADED}"), codex=SAME),
    Row("turn/interrupt: no such thread", "turn/interrupt", {"threadId": NOT_LOADED, "turnId": "t"},
        err(-32600, f"thread not found: {NOT_LOADED}"), codex=SAME),
    Row("thread/unsubscribe: id that is not a UUID", "thread/unsubscribe", {"threadId": "not-a-uuid"},
        err(-32600, "invalid thread id: 'not-a-uuid' is not a UUID"),
        codex=err(-32600, f"invalid thread id: {UUID_CODEX}")),
]

ROWS = CONFIG_ROWS + PARAM_ROWS


@dataclass
class Server:
    client: AppServerClient
    home: Path
    thread_id: str
    target: str


def snapshot(home: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for top in ("sessions", "archived_sessions")
        for p in sorted((home / top).rglob("*"))
        if p.is_file()
    }


@pytest_asyncio.fixture(
    scope="module", loop_scope="module", params=["pycodex", pytest.param("codex", marks=pytest.mark.codex)]
)
async def server(
    request: pytest.FixtureRequest, codex_schemas: SchemaPair, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Server]:
    target: str = request.param
    argv = None
    if target == "codex":
        found = require_codex()
        argv = [str(found), "app-server"]
    root = tmp_path_factory.mktemp(f"bad_inputs_{target}")
    home, cwd = root / "home", root / "cwd"
    write_codex_config(home, base_url=DEAD_URL)
    cwd.mkdir()
    client = await AppServerClient.spawn(codex_schemas, codex_home=home, cwd=cwd, argv=argv, label=target)
    try:
        await client.initialize()
        thread_id = (await client.call("thread/start", {}))["thread"]["id"]
        yield Server(client, home, thread_id, target)
    finally:
        await asyncio.wait_for(client.close(), 20.0)


def _fill(value: Any, thread_id: str) -> Any:
    if value == "{thread}":
        return thread_id
    if isinstance(value, dict):
        return {k: _fill(v, thread_id) for k, v in value.items()}
    return value


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
async def test_each_bad_input_is_refused_with_its_pinned_answer(server: Server, row: Row) -> None:
    expected = row.reply
    if server.target == "codex":
        if row.codex is None:
            pytest.skip("pycodex-only row (Codex checks this setting elsewhere or not at all)")
        expected = row.codex or row.reply
    client, home = server.client, server.home
    config_path = home / "config.toml"
    good_config = config_path.read_bytes()
    loaded_before = (await client.call("thread/loaded/list", {}))["data"]
    before = snapshot(home)
    if row.config is not None:
        config_path.write_text(row.config)
    try:
        reply = await client.request(row.method, _fill(row.params, server.thread_id))
    finally:
        config_path.write_bytes(good_config)

    message = expected["message"].format(path=config_path) if row.config is not None else expected["message"]
    assert set(reply) == {"id", "error"}, reply
    assert reply["error"]["code"] == expected["code"], reply
    if row.prefix:
        assert reply["error"]["message"].startswith(message), reply
    else:
        assert reply["error"]["message"] == message, reply
    # Still serving, nothing loaded or stored by the refused request.
    assert (await client.call("thread/loaded/list", {}))["data"] == loaded_before
    assert snapshot(home) == before


def test_the_table_has_at_least_20_config_and_param_rows() -> None:
    assert len({r.name for r in ROWS}) == len(ROWS)
    assert len(CONFIG_ROWS) >= 8 and len(PARAM_ROWS) >= 20
