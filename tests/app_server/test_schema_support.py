"""The schema check itself: its method tables, real Codex traffic passing it, broken messages failing it,
the validating client flagging a misbehaving server, and the recorded snapshot matching the live binary."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import pytest

from tests.support.appserver import OMIT, AppServerClient, ProtocolViolation
from tests.support.paths import DATA, MANIFEST, TRANSCRIPTS
from tests.support.schema import (
    BUNDLE_FILE,
    RESPONSE_OVERRIDES,
    SchemaPair,
    SchemaValidator,
    generate_schema,
    snapshot_bundle,
)

CLIENT_DIRS = {"c2s", ">", "to-app-server"}
SERVER_DIRS = {"s2c", "<", "from-app-server"}

THREAD_ID = "01a22acb-b80e-7662-89cd-38bbe9ab3a76"
TURN_ID = "01a22acb-b972-7d02-9694-dc3688786ee2"
FILE_APPROVAL = {
    "threadId": THREAD_ID,
    "turnId": TURN_ID,
    "itemId": "call_p2",
    "startedAtMs": 1796014324174,
    "reason": None,
    "grantRoot": None,
}


def _bundles(pair: SchemaPair) -> list[SchemaValidator]:
    return [pair.stable, pair.experimental]


def test_every_client_method_in_both_bundles_maps_to_an_existing_response_type(
    codex_schemas: SchemaPair,
) -> None:
    for validator in _bundles(codex_schemas):
        assert set(validator.response_types) == set(validator.request_params)
        assert set(validator.response_types.values()) <= validator.definition_names()
    assert len(codex_schemas.stable.response_types) == 109
    assert len(codex_schemas.experimental.response_types) == 184
    assert codex_schemas.stable.response_types["thread/start"] == "ThreadStartResponse"
    assert codex_schemas.stable.response_types["initialize"] == "InitializeResponse"


def test_every_response_definition_is_claimed_by_a_client_or_server_request(
    codex_schemas: SchemaPair,
) -> None:
    for validator in _bundles(codex_schemas):
        claimed = set(validator.response_types.values()) | set(
            validator.server_request_response_types.values()
        )
        defined = {n for n in validator.definition_names() if n.endswith("Response")} - {"JSONRPCResponse"}
        assert defined - claimed == set(), "a response type no method explains: the table is wrong"
    overridden = set(RESPONSE_OVERRIDES)
    assert overridden <= set(codex_schemas.experimental.request_params), "a stale override"


def test_an_unknown_method_fails_loudly_instead_of_passing(codex_schema: SchemaValidator) -> None:
    with pytest.raises(AssertionError, match=r"'bogus/method' is not a known Codex client request"):
        codex_schema.check_response("bogus/method", {})
    with pytest.raises(AssertionError, match="is not in the Codex schema"):
        codex_schema.check_notification("bogus/notification", {})


def _transcript_files() -> list[Path]:
    files = []
    for path in sorted(TRANSCRIPTS.glob("*.jsonl")):
        text = path.read_text()
        # Only app-server traffic: a client that sent `initialize` with clientInfo (exec-server and
        # `codex exec --json` captures use other shapes).
        if '"clientInfo"' in text and any(f'"dir": "{d}"' in text for d in SERVER_DIRS):
            files.append(path)
    return files


def _validate_transcript(path: Path, pair: SchemaPair, counts: Counter[str]) -> None:
    methods: dict[int | str, str] = {}
    experimental = False
    for line in path.read_text().splitlines():
        record = json.loads(line)
        msg = record.get("msg")
        if not isinstance(msg, dict):
            continue
        if record.get("dir") in CLIENT_DIRS and "method" in msg and "id" in msg:
            methods[msg["id"]] = msg["method"]
            if msg["method"] == "initialize":
                experimental = bool(
                    ((msg.get("params") or {}).get("capabilities") or {}).get("experimentalApi")
                )
        elif record.get("dir") in SERVER_DIRS:
            if "result" in msg and msg.get("id") not in methods:
                counts["skipped (request method unknown)"] += 1
                continue
            try:
                counts[pair.for_capability(experimental).check_server_line(msg, methods)] += 1
            except AssertionError as exc:
                raise AssertionError(f"{path.name}: {exc}") from None


def test_every_server_message_in_the_codex_transcripts_validates(codex_schemas: SchemaPair) -> None:
    files = _transcript_files()
    counts: Counter[str] = Counter()
    for path in files:
        _validate_transcript(path, codex_schemas, counts)
    print(f"validated {len(files)} transcripts: {dict(counts)}")
    assert len(files) >= 20
    assert counts["notification"] > 500 and counts["response"] > 100
    assert counts["error"] > 10 and counts["server_request"] > 0
    assert counts["skipped (request method unknown)"] < 10


def _mutants(value: Any) -> list[Any]:
    """``value`` with one thing wrong (or not) at a time: each key dropped, each value of another JSON type,
    recursively into objects and the first element of arrays."""
    others: list[Any] = [None, True, 7, -1, 2**64, 1.5, "x", [], {}, [None]]
    out: list[Any] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            out.append({k: v for k, v in value.items() if k != key})
            out.extend(dict(value, **{key: other}) for other in others if other != inner)
            out.extend(dict(value, **{key: mutant}) for mutant in _mutants(inner))
    elif isinstance(value, list) and value:
        out.extend([mutant, *value[1:]] for mutant in _mutants(value[0]))
    return out


def test_the_rust_precheck_accepts_exactly_what_the_python_validator_accepts(
    codex_schemas: SchemaPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SchemaValidator takes a message the Rust pre-check accepts without asking the Python validator: on
    every transcript message and thousands of one-fault variants of them, the two give the same verdict."""
    seen: dict[tuple[int, str, str], tuple[SchemaValidator, str, Any]] = {}
    original = SchemaValidator.violations

    def recording(self: SchemaValidator, definition: str, instance: object) -> list[Any]:
        seen.setdefault((id(self), definition, json.dumps(instance, sort_keys=True)), (self, definition, instance))
        return original(self, definition, instance)

    monkeypatch.setattr(SchemaValidator, "violations", recording)
    for path in _transcript_files()[:5]:
        _validate_transcript(path, codex_schemas, Counter())
    monkeypatch.undo()
    verdicts: Counter[tuple[bool, bool]] = Counter()
    for validator, definition, instance in seen.values():
        for candidate in [instance, *_mutants(instance)[:25]]:
            fast = validator.accepted_by_precheck(definition, candidate)
            full = not validator.python_violations(definition, candidate)
            assert fast == full, (definition, json.dumps(candidate)[:800])
            verdicts[fast, full] += 1
    print(dict(verdicts))
    assert verdicts[True, True] > 100 and verdicts[False, False] > 500


BROKEN: list[tuple[str, dict[str, Any], dict[int | str, str], str]] = [
    (
        "response missing a required field",
        {"id": 1, "result": {"thread": {}}},
        {1: "thread/start"},
        "thread/start",
    ),
    (
        "notification with a wrongly typed field",
        {
            "method": "thread/status/changed",
            "params": {"threadId": THREAD_ID, "status": {"type": "busy"}},
            "emittedAtMs": 1,
        },
        {},
        r"\$\.status",
    ),
    (
        "notification without emittedAtMs",
        {"method": "thread/name/updated", "params": {"threadId": THREAD_ID}},
        {},
        "keys",
    ),
    (
        "notification of an unknown method",
        {"method": "thread/exploded", "params": {}, "emittedAtMs": 1},
        {},
        "exploded",
    ),
    (
        "response carrying jsonrpc",
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {1: "account/logout"},
        "jsonrpc",
    ),
    ("response to an id never sent", {"id": 9, "result": {}}, {1: "account/logout"}, "never used"),
    ("error without a message", {"id": 1, "error": {"code": -32600}}, {}, "message"),
    ("error with a string code", {"id": 1, "error": {"code": "bad", "message": "m"}}, {}, r"\$\.error\.code"),
    (
        "server request with a string id",
        {"method": "item/fileChange/requestApproval", "id": "x", "params": FILE_APPROVAL},
        {},
        "integer",
    ),
    (
        "server request with params of the wrong shape",
        {"method": "item/fileChange/requestApproval", "id": 0, "params": {"threadId": THREAD_ID}},
        {},
        "FileChangeRequestApprovalParams",
    ),
    ("message of no known shape", {"id": 1}, {}, "neither"),
]


@pytest.mark.parametrize(("case", "msg", "methods", "expected"), BROKEN, ids=[c[0] for c in BROKEN])
def test_a_broken_server_message_fails_with_a_precise_reason(
    codex_schema: SchemaValidator,
    case: str,
    msg: dict[str, Any],
    methods: dict[int | str, str],
    expected: str,
) -> None:
    with pytest.raises(AssertionError, match=expected):
        codex_schema.check_server_line(msg, methods)


def test_the_same_messages_pass_when_well_formed(codex_schema: SchemaValidator) -> None:
    notification = {"method": "thread/name/updated", "params": {"threadId": THREAD_ID}, "emittedAtMs": 1}
    assert codex_schema.check_server_line(notification, {}) == "notification"
    request = {"method": "item/fileChange/requestApproval", "id": 0, "params": FILE_APPROVAL}
    assert codex_schema.check_server_line(request, {}) == "server_request"
    assert codex_schema.check_server_line({"id": 1, "result": {}}, {1: "account/logout"}) == "response"
    assert codex_schema.check_server_line({"id": "a", "error": {"code": -1, "message": "m"}}, {}) == "error"
    codex_schema.check_client_response("item/fileChange/requestApproval", {"decision": "accept"})
    with pytest.raises(AssertionError, match="decision"):
        codex_schema.check_client_response("item/fileChange/requestApproval", {"decision": "maybe"})


def test_integer_formats_are_range_checked(codex_schema: SchemaValidator) -> None:
    codex_schema.check_request_params("thread/list", {"limit": 2**32 - 1})
    with pytest.raises(AssertionError, match=r"\$\.limit"):
        codex_schema.check_request_params("thread/list", {"limit": 2**32})


FAKE_SERVER = textwrap.dedent(
    """
    import json, sys
    script = json.loads(sys.argv[1])
    for line in sys.stdin:
        msg = json.loads(line)
        sys.stderr.write("got " + json.dumps(msg) + "\\n")
        for out in script.get(msg.get("method") or "<response>", []):
            sys.stdout.write(out.replace("$ID", json.dumps(msg.get("id"))) + "\\n")
        sys.stdout.flush()
    """
)


async def _fake(tmp_path: Path, pair: SchemaPair, script: dict[str, list[str]]) -> AppServerClient:
    argv = [sys.executable, "-c", FAKE_SERVER, json.dumps(script)]
    return await AppServerClient.spawn(pair, codex_home=tmp_path, cwd=tmp_path, argv=argv, label="fake")


async def test_the_client_raises_violations_once_at_the_next_call_after_bad_lines(
    tmp_path: Path, codex_schemas: SchemaPair
) -> None:
    script = {
        "account/logout": ['{"id":$ID,"result":{}}'],
        "go": ["not json", '{"method":"x/y","params":{},"emittedAtMs":5}', '{"id":NaN,"result":{}}'],
    }
    client = await _fake(tmp_path, codex_schemas, script)
    assert (await client.request("account/logout", OMIT))["result"] == {}
    await client.notify("go")
    for _ in range(400):  # wait (bounded) until both lines have been read
        if len(client.arrivals) >= 4:
            break
        await asyncio.sleep(0.025)
    with pytest.raises(ProtocolViolation) as raised:
        await client.next_message(timeout=1)
    assert "is not JSON" in str(raised.value) and "'x/y' is not in the Codex schema" in str(raised.value)
    assert "NaN is not valid JSON" in str(raised.value)
    assert (await client.wait_notification("x/y", timeout=1))["emittedAtMs"] == 5
    assert await client.close() == 0  # already raised: close does not raise them again
    assert [a.kind for a in client.arrivals] == ["response", "invalid", "notification", "invalid"]


async def test_the_client_routes_server_requests_and_sends_answers(
    tmp_path: Path, codex_schemas: SchemaPair
) -> None:
    request = json.dumps({"method": "item/fileChange/requestApproval", "id": 0, "params": FILE_APPROVAL})
    client = await _fake(tmp_path, codex_schemas, {"go": [request]})
    await client.notify("go")
    got = await client.wait_server_request("item/fileChange/requestApproval", timeout=5)
    await client.respond(got["id"], {"decision": "accept"})
    assert await client.close() == 0
    assert '"decision": "accept"' in client.stderr_text


async def test_close_stops_a_server_that_ignores_stdin_eof(tmp_path: Path, codex_schemas: SchemaPair) -> None:
    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    client = await AppServerClient.spawn(codex_schemas, codex_home=tmp_path, cwd=tmp_path, argv=argv)
    rc = await client.close(timeout=0.5)
    assert rc < 0 and client.process.returncode is not None


def test_the_recorded_data_is_what_the_manifest_says() -> None:
    """Catches hand edits and half-finished re-recordings of tests/data (scripts/record_reference.py)."""
    manifest = json.loads(MANIFEST.read_text())
    assert "0.169.0" in manifest["codex_version"]
    recorded = {
        p.relative_to(DATA).as_posix() for p in DATA.rglob("*") if p.is_file() and p != MANIFEST
    }
    assert recorded == set(manifest["sha256"])
    for name, digest in manifest["sha256"].items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


@pytest.mark.codex
@pytest.mark.parametrize("flavour", ["stable", "experimental"])
def test_the_schema_snapshot_equals_what_the_live_codex_generates(
    codex_bin: Path, tmp_path: Path, flavour: Literal["stable", "experimental"]
) -> None:
    out = generate_schema(codex_bin, tmp_path, experimental=flavour == "experimental")
    live = json.loads((out / BUNDLE_FILE).read_text())
    assert live == snapshot_bundle(flavour), "re-record with scripts/record_reference.py"
