"""Tests of the Codex v2 protocol models in app_server.protocol.

Real Codex traffic (the captured transcripts) is parsed into our models and serialized back; the
result must be the identical JSON text (same keys, same order, same nulls). Our outputs are also
validated against the JSON Schema the real Codex 0.169.0 binary generates (the snapshot in tests/data).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema  # type: ignore[import-untyped]
import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from app_server.protocol import (
    CODEX_CLIENT_METHODS,
    EXPERIMENTAL_METHODS,
    EXPERIMENTAL_NOTIFICATIONS,
    NOTIFICATIONS,
    SERVER_REQUESTS,
    UNKNOWN_METHOD_VARIANTS,
    USER_INPUT_VARIANTS,
    codex_error_message,
    experimental_fields_present,
    notification_envelope,
    to_wire,
    unknown_variant_message,
)
from app_server.protocol.approvals import (
    CommandExecutionRequestApprovalParams,
    CommandExecutionRequestApprovalResponse,
    FileChangeRequestApprovalParams,
    FileChangeRequestApprovalResponse,
)
from app_server.protocol.base import ParamsModel
from app_server.protocol.common import (
    ActiveThreadStatus,
    IdleThreadStatus,
    ThreadTokenUsage,
    TokenUsageBreakdown,
    TurnError,
    WorkspaceWriteSandboxPolicy,
)
from app_server.protocol.initialize import InitializeParams
from app_server.protocol.items import (
    AgentMessageItem,
    KnownThreadItem,
    TextUserInput,
    ThreadItem,
    UnknownThreadItem,
    UnknownUserInput,
    UserInput,
    UserMessageItem,
)
from app_server.protocol.method_table import DECLARATIONS
from app_server.protocol.methods import experimental_field_names
from app_server.protocol.notifications import (
    ItemCompletedNotification,
    TurnCompletedNotification,
)
from app_server.protocol.schema_export import BUNDLE_NAME, exported_models, write_json_schema
from app_server.protocol.threads import (
    Thread,
    ThreadEnvironment,
    ThreadForkParams,
    ThreadListParams,
    ThreadLoadedListParams,
    ThreadReadParams,
    ThreadResumeParams,
    ThreadStartParams,
    ThreadStartResponse,
)
from app_server.protocol.turns import Turn, TurnInterruptParams, TurnStartParams, TurnSteerParams
from tests.support.paths import TRANSCRIPTS
from tests.support.schema import SchemaValidator, snapshot_bundle

APP_SERVER_TRANSCRIPTS = [
    "lifecycle_a.jsonl",
    "lifecycle_b.jsonl",
    "basic_exec.jsonl",
    "approvals.jsonl",
    "approvals_pending.jsonl",
    "interrupt.jsonl",
    "errors.jsonl",
    "file_change.jsonl",
    "skills.jsonl",
    "streaming.jsonl",
    "model_errors.jsonl",
    "config_probe.jsonl",
    "instructions_probe.jsonl",
    "client_openai_codex.jsonl",
]

#: The required subset of the served methods (the original twenty, less ``initialized``): their declarations'
#: params and result models, by method, as the transcript checks below use them.
REQUIRED_METHODS = (
    "initialize", "thread/start", "thread/resume", "thread/fork", "thread/list", "thread/read",
    "thread/archive", "thread/unarchive", "thread/name/set", "thread/loaded/list", "thread/unsubscribe",
    "thread/turns/list", "turn/start", "turn/interrupt", "turn/steer", "skills/list", "config/read",
    "model/list", "account/read",
)


class _Spec(NamedTuple):
    params: type[BaseModel]
    response: type[BaseModel]
    experimental: bool


def _required_specs() -> dict[str, _Spec]:
    found: dict[str, _Spec] = {}
    for decl in DECLARATIONS:
        params, result = decl.params_model(), decl.result_model()
        if decl.name in REQUIRED_METHODS and params is not None and result is not None:
            found[decl.name] = _Spec(params, result, decl.experimental)
    return found


METHODS = _required_specs()


# ---- helpers ----------------------------------------------------------------------------------


def _model_for(message: dict[str, Any], pending: dict[Any, str]) -> tuple[str, type[BaseModel] | None, Any]:
    if "method" in message and "id" in message:
        pair = SERVER_REQUESTS.get(message["method"])
        return "request " + message["method"], pair[0] if pair else None, message.get("params")
    if "method" in message:
        return (
            "notification " + message["method"],
            NOTIFICATIONS.get(message["method"]),
            message.get("params"),
        )
    method = pending.get(message.get("id"))
    spec = METHODS.get(method) if method else None
    return f"response {method}", spec.response if spec else None, message.get("result")


def server_messages(name: str) -> Iterator[tuple[str, type[BaseModel], Any]]:
    """(label, model, payload) for every server message of a transcript that one of our models covers."""
    pending: dict[Any, str] = {}
    with (TRANSCRIPTS / name).open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            message = record.get("msg")
            if not isinstance(message, dict):
                continue
            if record.get("dir") == "c2s" and "method" in message and "id" in message:
                pending[message["id"]] = message["method"]
            if record.get("dir") != "s2c" or "error" in message:
                continue
            label, model, payload = _model_for(message, pending)
            if model is not None:
                yield label, model, payload


def client_requests(name: str) -> Iterator[dict[str, Any]]:
    with (TRANSCRIPTS / name).open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            message = record.get("msg")
            if record.get("dir") == "c2s" and isinstance(message, dict) and "method" in message:
                yield message


def codex_error_text(name: str, request_id: Any) -> str:
    """The `message` Codex answered for a request id in a transcript, without `Invalid request: `."""
    with (TRANSCRIPTS / name).open(encoding="utf-8") as lines:
        for line in lines:
            message = json.loads(line).get("msg")
            if isinstance(message, dict) and message.get("id") == request_id and "error" in message:
                return str(message["error"]["message"]).removeprefix("Invalid request: ")
    raise AssertionError(f"no error for id {request_id} in {name}")


def schema_errors(schema: SchemaValidator, name: str, instance: object) -> list[str]:
    """Violations of Codex definition `name` (v1 or v2) by `instance`; empty when it conforms."""
    return [f"{v.path}: {v.message}" for v in schema.violations(name, instance)]


def v2_definition(bundle: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = bundle["definitions"]["v2"][name]
    return found


def sample_thread() -> Thread:
    return Thread(
        id="01a22ac8-a5ce-72f0-8997-201852327224",
        environments=[ThreadEnvironment(environment_id="local", cwd="/w", runtime_workspace_roots=["/w"])],
        session_id="01a22ac8-a5ce-72f0-8997-201852327224",
        history_mode="paginated",
        model_provider="mock_provider",
        model="mock-model",
        created_at=1796014122,
        updated_at=1796014122,
        recency_at=1796014122,
        status=IdleThreadStatus(),
        cwd="/w",
        cli_version="0.169.0",
        originator="pycodex_test",
        can_accept_direct_input=True,
    )


# ---- round trips of real Codex traffic --------------------------------------------------------


@pytest.mark.parametrize("transcript", APP_SERVER_TRANSCRIPTS)
def test_codex_server_messages_round_trip_to_identical_json(transcript: str) -> None:
    seen = 0
    for label, model, payload in server_messages(transcript):
        out = to_wire(model.model_validate(payload))
        assert json.dumps(out) == json.dumps(payload), label
        seen += 1
    assert seen > 0


def test_round_trips_cover_threads_turns_items_and_the_notifications_of_a_turn() -> None:
    labels: Counter[str] = Counter()
    item_types: Counter[str] = Counter()
    for transcript in APP_SERVER_TRANSCRIPTS:
        for label, _model, payload in server_messages(transcript):
            labels[label] += 1
            if label in ("notification item/started", "notification item/completed"):
                item_types[payload["item"]["type"]] += 1
    for needed in (
        "response thread/start",
        "response thread/resume",
        "response thread/fork",
        "response thread/read",
        "response thread/list",
        "response turn/start",
        "notification thread/started",
        "notification turn/started",
        "notification turn/completed",
        "notification item/agentMessage/delta",
        "notification thread/tokenUsage/updated",
        "notification error",
        "request item/commandExecution/requestApproval",
        "request item/fileChange/requestApproval",
    ):
        assert labels[needed] > 0, needed
    assert set(item_types) >= {
        "userMessage",
        "agentMessage",
        "reasoning",
        "commandExecution",
        "fileChange",
        "contextCompaction",
    }


def test_outbound_models_emit_codex_key_order_and_explicit_nulls() -> None:
    response = ThreadStartResponse(
        thread=sample_thread(),
        model="mock-model",
        model_provider="mock_provider",
        cwd="/w",
        approval_policy="never",
        approvals_reviewer="user",
        sandbox=WorkspaceWriteSandboxPolicy(),
    )
    wire = to_wire(response)
    assert list(wire) == [
        "thread",
        "model",
        "modelProvider",
        "serviceTier",
        "disabledPluginIds",
        "cwd",
        "runtimeWorkspaceRoots",
        "instructionSources",
        "approvalPolicy",
        "approvalsReviewer",
        "sandbox",
        "activePermissionProfile",
        "reasoningEffort",
        "multiAgentMode",
    ]
    assert wire["serviceTier"] is None and wire["activePermissionProfile"] is None
    assert list(wire["thread"])[:4] == ["id", "environments", "extra", "sessionId"]
    assert list(wire["thread"])[-1] == "turns"
    assert wire["sandbox"] == {
        "type": "workspaceWrite",
        "writableRoots": [],
        "networkAccess": False,
        "excludeTmpdirEnvVar": False,
        "excludeSlashTmp": False,
    }
    turn = to_wire(Turn(id="t", items_view="notLoaded", status="inProgress"))
    assert list(turn) == [
        "id",
        "rootTurnId",
        "items",
        "itemsView",
        "status",
        "error",
        "startedAt",
        "completedAt",
        "durationMs",
    ]


def test_agent_message_item_keeps_codex_odd_key_order() -> None:
    wire = to_wire(AgentMessageItem(id="msg_1", text="done"))
    assert list(wire) == [
        "type",
        "moderation",
        "id",
        "text",
        "phase",
        "memoryCitation",
        "delivery",
        "questions",
        "startedAtMs",
        "completedAtMs",
    ]


def test_text_input_echo_uses_snake_case_text_elements() -> None:
    item = UserMessageItem(id="u", content=[TextUserInput(text="hi")])
    assert to_wire(item)["content"] == [{"type": "text", "text": "hi", "text_elements": []}]


def test_command_approval_leaves_out_unset_reason_while_file_approval_sends_nulls() -> None:
    params = CommandExecutionRequestApprovalParams(
        thread_id="th",
        turn_id="tu",
        item_id="call_1",
        started_at_ms=1,
        environment_id="local",
        command="/bin/bash -lc 'ls'",
        cwd="/w",
        command_actions=[{"type": "unknown", "command": "ls"}],
        proposed_execpolicy_amendment=["/bin/bash", "-lc", "ls"],
        available_decisions=["accept", "cancel"],
    )
    wire = to_wire(params)
    assert "reason" not in wire and "approvalId" not in wire
    assert list(wire)[:6] == ["kind", "threadId", "turnId", "itemId", "startedAtMs", "environmentId"]
    file_wire = to_wire(
        FileChangeRequestApprovalParams(thread_id="th", turn_id="tu", item_id="c", started_at_ms=1)
    )
    assert file_wire == {
        "threadId": "th",
        "turnId": "tu",
        "itemId": "c",
        "startedAtMs": 1,
        "reason": None,
        "grantRoot": None,
    }


def test_approval_decisions_accept_every_codex_form_and_reject_others() -> None:
    for decision in (
        "accept",
        "acceptForSession",
        "decline",
        "cancel",
        {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["ls"]}},
        {"applyNetworkPolicyAmendment": {"network_policy_amendment": {"host": "h", "action": "allow"}}},
    ):
        parsed = CommandExecutionRequestApprovalResponse.model_validate({"decision": decision})
        assert to_wire(parsed) == {"decision": decision}
    with pytest.raises(ValidationError):
        CommandExecutionRequestApprovalResponse.model_validate({"decision": "maybe"})
    with pytest.raises(ValidationError):
        FileChangeRequestApprovalResponse.model_validate(
            {"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": []}}}
        )


def test_notification_envelope_puts_emitted_at_after_params() -> None:
    envelope = notification_envelope("thread/archived", NOTIFICATIONS["thread/archived"](thread_id="x"), 5)
    assert list(envelope) == ["method", "params", "emittedAtMs"]
    assert envelope["params"] == {"threadId": "x"}


# ---- inbound params: tolerance and errors -----------------------------------------------------


def test_every_client_request_codex_accepted_parses_and_every_rejected_one_fails() -> None:
    checked = 0
    for transcript in APP_SERVER_TRANSCRIPTS:
        rejected = {
            message["id"]
            for message in (
                json.loads(line).get("msg") for line in (TRANSCRIPTS / transcript).read_text().splitlines()
            )
            if isinstance(message, dict)
            and "error" in message
            and "Invalid request" in message["error"]["message"]
        }
        for message in client_requests(transcript):
            spec = METHODS.get(message["method"])
            if spec is None or not isinstance(message.get("params"), dict):
                continue
            if message.get("id") in rejected:
                with pytest.raises(ValidationError):
                    spec.params.model_validate(message["params"])
            else:
                spec.params.model_validate(message["params"])
            checked += 1
    assert checked > 50


def test_unknown_param_fields_are_ignored() -> None:
    assert ThreadLoadedListParams.model_validate({"bogus": 1}) == ThreadLoadedListParams()
    parsed = TypeAdapter(UserInput).validate_python(
        {"type": "text", "text": "x", "textElements": [{"no": 1}]}
    )
    assert to_wire(parsed) == {"type": "text", "text": "x", "text_elements": []}


def test_explicit_nulls_are_accepted_for_optional_params() -> None:
    nulls = {name: None for name in ThreadStartParams.model_fields}
    camel_nulls = {(f.alias or n): None for n, f in ThreadStartParams.model_fields.items()}
    assert ThreadStartParams.model_validate(camel_nulls) == ThreadStartParams.model_validate(nulls)
    assert ThreadStartParams.model_validate(camel_nulls).experimental_raw_events is False
    read = ThreadReadParams.model_validate({"threadId": "t", "includeTurns": None})
    assert read.include_turns is False
    turn = TurnStartParams.model_validate(
        {
            "threadId": "t",
            "input": [{"type": "text", "text": "x", "text_elements": None}],
            "cwd": None,
            "model": None,
        }
    )
    assert isinstance(turn.input[0], TextUserInput) and turn.input[0].text_elements == []
    listed = ThreadListParams.model_validate({"limit": None, "useStateDbOnly": None, "cwd": None})
    assert listed.use_state_db_only is False


def test_bad_values_give_messages_that_name_the_field() -> None:
    with pytest.raises(ValidationError) as bad_cwd:
        ThreadStartParams.model_validate({"cwd": 123})
    assert bad_cwd.value.errors()[0]["loc"] == ("cwd",)
    with pytest.raises(ValidationError) as bad_limit:
        ThreadListParams.model_validate({"limit": "ten"})
    assert "limit" in str(bad_limit.value)
    with pytest.raises(ValidationError) as bad_thread:
        TurnStartParams.model_validate({"input": []})
    assert bad_thread.value.errors()[0]["loc"] == ("threadId",)


@pytest.mark.parametrize(
    ("model", "params", "request_id"),
    [
        (ThreadStartParams, {"cwd": 123}, 6),
        (TurnStartParams, {"threadId": "x"}, 8),
        (TurnStartParams, {"threadId": "x", "input": [{"type": "nope"}]}, 9),
        (ThreadStartParams, {"sandbox": "bogus"}, 16),
        (InitializeParams, {"capabilities": {"experimentalApi": True}}, 2),
    ],
)
def test_validation_errors_render_like_codex(
    model: type[BaseModel], params: dict[str, Any], request_id: int
) -> None:
    with pytest.raises(ValidationError) as error:
        model.model_validate(params)
    assert codex_error_message(error.value) == codex_error_text("errors.jsonl", request_id)


# (params model, params, message the Codex 0.169.0 binary answered after "Invalid request: ")
CODEX_PARAM_ERRORS: list[tuple[type[ParamsModel], dict[str, Any], str]] = [
    (ThreadListParams, {"limit": "ten"}, 'invalid type: string "ten", expected u32'),
    (ThreadListParams, {"limit": -1}, "invalid value: integer `-1`, expected u32"),
    (ThreadListParams, {"limit": 1.5}, "invalid type: floating point `1.5`, expected u32"),
    (
        ThreadReadParams,
        {"threadId": "x", "includeTurns": "x"},
        'invalid type: string "x", expected a boolean',
    ),
    (TurnStartParams, {"threadId": "x", "input": "hi"}, 'invalid type: string "hi", expected a sequence'),
    (TurnStartParams, {"threadId": "x", "input": [{"type": "text"}]}, "missing field `text`"),
    (TurnStartParams, {"threadId": "x", "input": [{"text": "x"}]}, "missing field `type`"),
    (ThreadStartParams, {"config": []}, "invalid type: sequence, expected a map"),
    (ThreadStartParams, {"model": 5}, "invalid type: integer `5`, expected a string"),
    (TurnInterruptParams, {"threadId": "x", "turnId": None}, "invalid type: null, expected a string"),
    (
        ThreadStartParams,
        {"approvalPolicy": "bogus"},
        "unknown variant `bogus`, expected one of `untrusted`, `on-request`, `granular`, `never`",
    ),
]


@pytest.mark.parametrize(("model", "params", "expected"), CODEX_PARAM_ERRORS)
def test_param_errors_read_like_the_codex_binary(
    model: type[ParamsModel], params: dict[str, Any], expected: str
) -> None:
    with pytest.raises(ValidationError) as error:
        model.model_validate(params)
    assert codex_error_message(error.value, model) == expected


@pytest.mark.codex
def test_param_error_table_still_matches_the_live_codex_binary(codex_bin: Path, tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        'model = "mock-model"\nmodel_provider = "m"\napproval_policy = "never"\n'
        '[model_providers.m]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\nwire_api = "responses"\n'
    )
    lines = [{"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "1"}}}]
    for index, (model, params, _expected) in enumerate(CODEX_PARAM_ERRORS, start=1):
        lines.append({"id": index, "method": model.METHOD, "params": params})
    env = {**os.environ, "CODEX_HOME": str(tmp_path), "RUST_LOG": "off", "CODEX_API_KEY": "dummy"}
    answers: dict[int, Any] = {}
    with subprocess.Popen(
        [str(codex_bin), "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp_path,
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        proc.stdin.flush()
        # bounded: a watchdog kills the server if the answers do not all arrive within 20 s
        watchdog = threading.Timer(20, proc.kill)
        watchdog.start()
        try:
            while len(answers) < len(lines):
                line = proc.stdout.readline()
                if not line:
                    break
                message = json.loads(line)
                if "id" in message:
                    answers[message["id"]] = message
        finally:
            watchdog.cancel()
        proc.stdin.close()
        proc.wait(timeout=10)
    for index, (_model, _params, expected) in enumerate(CODEX_PARAM_ERRORS, start=1):
        assert answers[index]["error"]["message"] == f"Invalid request: {expected}"


def test_user_input_variants_are_exposed_for_the_unknown_variant_message() -> None:
    assert unknown_variant_message("nope", USER_INPUT_VARIANTS) == codex_error_text("errors.jsonl", 9)


def test_turn_start_rejects_an_unknown_input_type_but_stored_items_keep_it() -> None:
    with pytest.raises(ValidationError) as error:
        TurnSteerParams.model_validate({"threadId": "t", "expectedTurnId": "u", "input": [{"type": "nope"}]})
    assert "text" in str(error.value) and "mention" in str(error.value)
    raw_input = {"type": "hologram", "z": 1, "a": [2]}
    stored = UserMessageItem.model_validate({"type": "userMessage", "id": "u", "content": [raw_input]})
    assert isinstance(stored.content[0], UnknownUserInput)
    assert to_wire(stored)["content"] == [raw_input]


def test_unknown_thread_items_load_verbatim_but_the_strict_union_rejects_them() -> None:
    raw = {"type": "hookPrompt", "id": "m1", "fragments": [{"text": "t", "hookRunId": "h"}], "x": None}
    item = TypeAdapter(ThreadItem).validate_python(raw)
    assert isinstance(item, UnknownThreadItem) and item.id == "m1" and item.type == "hookPrompt"
    assert json.dumps(TypeAdapter(ThreadItem).dump_python(item, mode="json")) == json.dumps(raw)
    with pytest.raises(ValidationError):
        TypeAdapter(KnownThreadItem).validate_python(raw)
    turn = Turn.model_validate({"id": "t", "status": "completed", "items": [raw]})
    assert to_wire(turn)["items"] == [raw]


def test_codex_error_info_accepts_names_objects_and_unknown_values() -> None:
    infos: list[Any] = [
        "contextWindowExceeded",
        {"httpConnectionFailed": {"httpStatusCode": 401}},
        "brandNew",
        {"x": {}},
    ]
    for info in infos:
        error = TurnError.model_validate({"message": "m", "codexErrorInfo": info})
        assert to_wire(error) == {
            "message": "m",
            "codexErrorInfo": info,
            "additionalDetails": None,
            "misalignment": None,
        }


# ---- experimental gate ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "params", "expected"),
    [
        (
            ThreadStartParams,
            {"cwd": "/w", "mockExperimentalField": "x"},
            "thread/start.mockExperimentalField",
        ),
        (ThreadStartParams, {"selectedCapabilityRoots": []}, "thread/start.selectedCapabilityRoots"),
        (ThreadStartParams, {"dynamicTools": []}, "thread/start.dynamicTools"),
        (ThreadStartParams, {"experimentalRawEvents": True}, "thread/start.experimentalRawEvents"),
        (ThreadStartParams, {"experimentalRawEvents": False}, None),
        (ThreadStartParams, {"dynamicTools": None, "environments": None, "historyMode": None}, None),
        (
            ThreadStartParams,
            {
                "approvalPolicy": {
                    "granular": {"mcp_elicitations": True, "rules": True, "sandbox_approval": True}
                }
            },
            "askForApproval.granular",
        ),
        (ThreadStartParams, {"approvalPolicy": "never", "cwd": "/w", "ephemeral": True}, None),
        (
            TurnStartParams,
            {"threadId": "t", "input": [], "collaborationMode": {}},
            "turn/start.collaborationMode",
        ),
        (ThreadResumeParams, {"threadId": "t", "history": []}, "thread/resume.history"),
        (ThreadForkParams, {"threadId": "t", "attachToSource": True}, "thread/fork.attachToSource"),
        (ThreadListParams, {"archived": True, "limit": 3}, None),
    ],
)
def test_experimental_fields_present_names_the_first_gated_field(
    model: type[BaseModel], params: dict[str, Any], expected: str | None
) -> None:
    assert experimental_fields_present(model, params) == expected


def test_gate_descriptors_match_what_codex_answered_a_non_experimental_client() -> None:
    gated = 0
    for message in client_requests("errors_noexp.jsonl"):
        if "id" not in message:
            continue
        spec = METHODS.get(message["method"])
        if spec is None:
            assert message["method"] in EXPERIMENTAL_METHODS or message["method"] == "initialize"
            continue
        descriptor = experimental_fields_present(spec.params, message["params"])
        if descriptor is not None:
            expected = codex_error_text("errors_noexp.jsonl", message["id"])
            assert expected == f"{descriptor} requires experimentalApi capability"
            gated += 1
    assert gated == 4


def test_experimental_field_lists_cover_the_documented_thread_start_fields() -> None:
    names = set(experimental_field_names(ThreadStartParams))
    assert names >= {
        "dynamicTools",
        "selectedCapabilityRoots",
        "environments",
        "runtimeWorkspaceRoots",
        "permissions",
    }
    assert "cwd" not in names


# ---- method tables ----------------------------------------------------------------------------


def test_method_table_serves_the_required_subset_none_of_it_experimental() -> None:
    required = {
        "initialize",
        "thread/start",
        "thread/resume",
        "thread/fork",
        "thread/list",
        "thread/read",
        "thread/archive",
        "thread/unarchive",
        "thread/name/set",
        "thread/loaded/list",
        "thread/unsubscribe",
        "thread/turns/list",
        "turn/start",
        "turn/interrupt",
        "turn/steer",
        "skills/list",
        "config/read",
        "model/list",
        "account/read",
    }
    assert set(REQUIRED_METHODS) == required
    assert set(METHODS) == required  # each declared with both its params and its result model
    assert not any(spec.experimental for spec in METHODS.values())
    assert all(spec.params.METHOD == name for name, spec in METHODS.items())
    assert set(METHODS) <= set(CODEX_CLIENT_METHODS)


def test_unknown_method_list_reproduces_the_codex_error_text() -> None:
    expected = codex_error_text("errors.jsonl", 5)
    assert unknown_variant_message("foo/bar", UNKNOWN_METHOD_VARIANTS) == expected
    assert len(CODEX_CLIENT_METHODS) == 184
    assert {"mock/experimentalMethod", "collaborationMode/list"} <= EXPERIMENTAL_METHODS
    assert "thread/start" not in EXPERIMENTAL_METHODS
    assert EXPERIMENTAL_NOTIFICATIONS == {"thread/readState/changed", "thread/settings/updated",
                                          "thread/realtime/closed", "thread/realtime/error"}


def test_stable_method_list_matches_the_codex_schema(codex_schema: SchemaValidator) -> None:
    assert set(codex_schema.request_params) == set(CODEX_CLIENT_METHODS) - EXPERIMENTAL_METHODS


# ---- JSON Schema ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "transcript",
    ["lifecycle_a.jsonl", "basic_exec.jsonl", "approvals.jsonl", "file_change.jsonl", "model_errors.jsonl"],
)
def test_our_serialized_transcript_messages_validate_against_the_codex_schema(
    codex_schema: SchemaValidator, transcript: str
) -> None:
    for label, model, payload in server_messages(transcript):
        assert schema_errors(codex_schema, model.__name__, to_wire(model.model_validate(payload))) == [], label


def test_objects_built_from_scratch_validate_against_the_codex_schema(codex_schema: SchemaValidator) -> None:
    thread = sample_thread()
    turn = Turn(
        id="t",
        items=[AgentMessageItem(id="m", text="done", phase="final_answer")],
        items_view="summary",
        status="completed",
        started_at=1,
        completed_at=2,
        duration_ms=1000,
    )
    samples: list[BaseModel] = [
        ThreadStartResponse(
            thread=thread,
            model="m",
            model_provider="p",
            cwd="/w",
            approval_policy="on-request",
            approvals_reviewer="user",
            sandbox=WorkspaceWriteSandboxPolicy(writable_roots=["/tmp"]),
        ),
        TurnCompletedNotification(thread_id=thread.id, turn=turn),
        ItemCompletedNotification(
            item=AgentMessageItem(id="m", text="x"), thread_id="a", turn_id="b", completed_at_ms=3
        ),
        NOTIFICATIONS["thread/status/changed"](
            thread_id="a", status=ActiveThreadStatus(active_flags=["waitingOnApproval"])
        ),
        NOTIFICATIONS["thread/tokenUsage/updated"](
            thread_id="a",
            turn_id="b",
            token_usage=ThreadTokenUsage(
                total=TokenUsageBreakdown(total_tokens=3), last=TokenUsageBreakdown()
            ),
        ),
        NOTIFICATIONS["error"](
            error=TurnError(message="boom", codex_error_info="other"),
            will_retry=False,
            thread_id="a",
            turn_id="b",
        ),
        CommandExecutionRequestApprovalParams(thread_id="a", turn_id="b", item_id="c", started_at_ms=1),
    ]
    for sample in samples:
        name = type(sample).__name__
        assert schema_errors(codex_schema, name, to_wire(sample)) == [], name


def test_schema_export_writes_valid_schemas_that_accept_real_traffic(tmp_path: Path) -> None:
    stable_dir = tmp_path / "stable"
    write_json_schema(stable_dir)
    stable_start = json.loads((stable_dir / "v2" / "ThreadStartParams.json").read_text())
    assert "dynamicTools" not in stable_start["properties"] and "cwd" in stable_start["properties"]
    written = write_json_schema(tmp_path, experimental=True)
    assert (tmp_path / BUNDLE_NAME) in written
    assert len(written) == len(exported_models()) + 4  # + ClientRequest, ServerNotification, ServerRequest
    for path in written:
        jsonschema.Draft7Validator.check_schema(json.loads(path.read_text()))
    start = json.loads((tmp_path / "v2" / "ThreadStartParams.json").read_text())
    assert start["properties"]["dynamicTools"].get("x-experimental") is True
    assert "x-experimental" not in start["properties"]["cwd"]
    for label, model, payload in server_messages("lifecycle_a.jsonl"):
        schema = json.loads((tmp_path / "v2" / f"{model.__name__}.json").read_text())
        assert list(jsonschema.Draft7Validator(schema).iter_errors(payload)) == [], label


def test_experimental_schema_of_codex_lists_the_same_client_methods() -> None:
    bundle = snapshot_bundle("experimental")
    methods = [variant["properties"]["method"]["enum"][0] for variant in bundle["definitions"]["ClientRequest"]["oneOf"]]
    assert tuple(methods) == CODEX_CLIENT_METHODS
    stable = snapshot_bundle("stable")
    for model in (ThreadStartParams, ThreadResumeParams, ThreadForkParams, TurnStartParams, ThreadListParams):
        name = model.__name__
        exp_only = set(v2_definition(bundle, name)["properties"]) - set(v2_definition(stable, name)["properties"])
        assert exp_only == set(experimental_field_names(model)), name
