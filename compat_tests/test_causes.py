"""support/causes.py on small snippets recorded from real pairs (shortened): each names the first divergence."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from compat_tests.support.artifacts import PairLog
from compat_tests.support.causes import (
    Expected,
    app_divergence,
    exec_divergence,
    first_divergence,
    missing_field,
    model_divergence,
)
from compat_tests.support.relay_capture import handshake_divergence, stream_divergence

EXPECTED = Expected(call_id="call-1", command_marker="MARKER_VAR", exit_code=0, output="canary-7f3a")
PROCESS = "1-28e55345"
START = {
    "id": 85,
    "method": "process/start",
    "params": {"processId": PROCESS, "argv": ["/bin/bash", "-lc", "printf $MARKER_VAR"]},
}


def _rec(direction: str, msg: dict[str, Any]) -> dict[str, Any]:
    return {"dir": direction, "t": 0.0, "msg": msg}


def _chunk(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _exec_run(exited: dict[str, Any], printed: str = "canary-7f3a") -> list[dict[str, Any]]:
    output = {"processId": PROCESS, "seq": 1, "stream": "stdout", "chunk": _chunk(printed)}
    return [
        _rec(">", {"id": 2, "method": "fs/getMetadata", "params": {"path": "/w/.agents"}}),
        # Skill discovery probes paths that do not exist; that answer is no divergence.
        _rec("<", {"id": 2, "error": {"code": -32004, "message": "No such file or directory (os error 2)"}}),
        _rec(">", START),
        _rec("<", {"id": 85, "result": {"processId": PROCESS, "sandboxType": "none"}}),
        _rec("<", {"method": "process/output", "params": output}),
        _rec("<", {"method": "process/exited", "params": {"processId": PROCESS, "seq": 2, **exited}}),
        _rec("<", {"method": "process/closed", "params": {"processId": PROCESS, "seq": 3}}),
    ]


def test_a_missing_field_names_its_path_and_a_near_identical_sibling_as_the_rename() -> None:
    item = {"id": "c", "exitCodeRenamed": 0}
    assert missing_field("item/completed params.item", item, ("id", "exitCode")) == (
        "item/completed params.item.exitCode missing (got exitCodeRenamed?)"
    )
    assert missing_field("p", {"id": 1}, ("id", "seq")) == "p.seq missing"
    assert missing_field("p", {"id": 1, "seq": 2}, ("id", "seq")) is None
    assert missing_field("p", None, ("id",)) == "p is null, not an object"


def test_a_healthy_exec_server_transcript_shows_no_divergence() -> None:
    assert exec_divergence(_exec_run({"exitCode": 0, "sandboxDenied": False}), EXPECTED) is None


def test_the_exec_servers_renamed_exit_code_is_named_before_the_reconnect_it_causes() -> None:
    records = _exec_run({"exitCodeRenamed": 0, "sandboxDenied": False})
    # Codex 0.169 reconnects after the protocol error; its resumed initialize is then refused.
    records += [
        _rec(
            ">", {"id": 90, "method": "initialize", "params": {"clientName": "codex", "resumeSessionId": "s"}}
        ),
        _rec("<", {"id": 90, "error": {"code": -32010, "message": "session s is already attached"}}),
    ]
    assert exec_divergence(records, EXPECTED) == (
        "exec-server process/exited params.exitCode missing (got exitCodeRenamed?)"
    )


def test_the_exec_servers_wrong_exit_code_and_missing_output_are_expected_against_got() -> None:
    wrong = _exec_run({"exitCode": 3})
    assert exec_divergence(wrong, EXPECTED) == "exec-server process/exited params.exitCode: expected 0, got 3"
    silent = _exec_run({"exitCode": 0}, printed="something else")
    assert exec_divergence(silent, EXPECTED) == (
        "exec-server process/output of the command: expected 'canary-7f3a' in it, got 'something else'"
    )


def test_an_exec_server_error_answer_names_its_method() -> None:
    records = [_rec(">", START), _rec("<", {"id": 85, "error": {"code": -32602, "message": "bad argv"}})]
    assert exec_divergence(records, EXPECTED) == "exec-server process/start answered error -32602: bad argv"


def _command(**fields: Any) -> dict[str, Any]:
    item = {
        "type": "commandExecution",
        "id": "call-1",
        "command": "/bin/bash -lc ...",
        "cwd": "/w",
        "status": "completed",
        "aggregatedOutput": "pyenv: cannot rehash\ncanary-7f3a",
        "exitCode": 0,
    }
    return item | fields


def _app_run(*items: dict[str, Any], completed: bool = True) -> list[dict[str, Any]]:
    records = [
        _rec(">", {"id": 2, "method": "thread/start", "params": {"cwd": "/w"}}),
        _rec("<", {"id": 2, "result": {"thread": {"id": "t"}}}),
        _rec("<", {"method": "item/started", "params": {"item": _command(status="inProgress")}}),
    ]
    records += [_rec("<", {"method": "item/completed", "params": {"item": item}}) for item in items]
    if completed:
        records.append(_rec("<", {"method": "turn/completed", "params": {"turn": {"id": "u"}}}))
    return records


def test_a_healthy_app_server_transcript_shows_no_divergence() -> None:
    assert app_divergence(_app_run(_command()), EXPECTED) is None


def test_the_commandexecution_exit_code_is_expected_against_got_with_the_outputs_last_line() -> None:
    codex = _command(
        status="failed",
        exitCode=-1,
        aggregatedOutput="canary-7f3a\nfailed to recover process 1: exec-server protocol error: "
        "recovering exited process did not include its exit code",
    )
    assert app_divergence(_app_run(codex), EXPECTED) == (
        "commandExecution exitCode: expected 0, got -1; output ends: failed to recover process 1: "
        "exec-server protocol error: recovering exited process did not include its exit code"
    )
    # The output is what was expected: only the exit code is wrong, and only it is named.
    assert app_divergence(_app_run(_command(exitCode=3)), EXPECTED) == (
        "commandExecution exitCode: expected 0, got 3"
    )


def test_the_commandexecution_output_a_rename_and_an_item_left_open_are_named() -> None:
    assert app_divergence(_app_run(_command(aggregatedOutput="")), EXPECTED) == (
        "commandExecution aggregatedOutput: expected 'canary-7f3a' in it, got ''"
    )
    renamed = _command()
    renamed["aggregatedOutputRenamed"] = renamed.pop("aggregatedOutput")
    assert app_divergence(_app_run(renamed), EXPECTED) == (
        "item/completed params.item.aggregatedOutput missing (got aggregatedOutputRenamed?)"
    )
    assert app_divergence(_app_run(), EXPECTED) == (
        "commandExecution call-1: item/started but no item/completed before turn/completed"
    )


def test_an_app_server_error_answer_names_its_method_and_code() -> None:
    records = [
        _rec(">", {"id": 2, "method": "thread/start", "params": {}}),
        _rec("<", {"id": 2, "error": {"code": -32600, "message": "Invalid request: missing field `cwd`"}}),
    ]
    assert app_divergence(records, EXPECTED) == (
        "thread/start answered error -32600: Invalid request: missing field `cwd`"
    )


def _model(output: str) -> list[dict[str, Any]]:
    call = {"type": "function_call_output", "call_id": "call-1", "output": output}
    return [{"path": "/v1/responses", "body": {"input": [call]}}]


def test_what_the_model_was_told_is_checked_for_the_exit_code_and_the_output() -> None:
    good = "Chunk ID: 1\nProcess exited with code 0\nOutput:\ncanary-7f3a"
    assert model_divergence(_model(good), EXPECTED) is None
    assert model_divergence(_model(good.replace("code 0", "code 3")), EXPECTED) == (
        "function_call_output exit code: expected 0, got 3"
    )
    running = "Chunk ID: 1\nProcess running with session ID 1\nOutput:\ncanary-7f3a"
    assert "the process never exited" in (model_divergence(_model(running), EXPECTED) or "")
    assert "expected 'canary-7f3a' in it" in (model_divergence(_model("exec_command failed"), EXPECTED) or "")
    assert model_divergence([], EXPECTED) == "the model never received a function_call_output for call-1"


# relay-frames.txt of a changed prologue (either side): the executor cannot read message 1 and resets.
PROLOGUE_FRAMES = """# direction stream_id body payload_bytes
harness->environment s1 resume 0
harness->environment s1 handshake 0
environment->harness s1 reset 0
harness->environment s2 resume 0
harness->environment s2 handshake 0
environment->harness s2 reset 0
"""
CODEX_EXECUTOR = (
    "\x1b[2m2026-12-03T07:29:37.706229Z\x1b[0m \x1b[33m WARN\x1b[0m \x1b[2mcodex_exec_server::relay\x1b[0m"
    "\x1b[2m:\x1b[0m failed to read Noise relay handshake request: Noise channel handshake failed: "
    "Cipher error: Decrypt error\n"
)
HEALTHY_FRAMES = """harness->environment s1 resume 0
harness->environment s1 handshake 0
environment->harness s1 handshake 0
harness->environment s1 data 117
environment->harness s1 data 959
"""


def test_a_handshake_that_fails_at_message_1_is_named_with_the_executors_reason() -> None:
    cause = handshake_divergence(PROLOGUE_FRAMES, {"app-server": "", "exec-server": CODEX_EXECUTOR})
    assert cause == (
        "Noise handshake failed at message 1 (app-server -> exec-server): the exec-server reset the stream"
        " instead of sending message 2 (prologue or keys differ?) (2 streams tried); exec-server: failed to"
        " read Noise relay handshake request: Noise channel handshake failed: Cipher error: Decrypt error"
    )
    # pycodex logs nothing about it: the stage still stands, with the stream.
    assert (handshake_divergence(PROLOGUE_FRAMES, {}) or "").endswith("(2 streams tried); stream s1")


def test_a_handshake_that_fails_at_message_2_names_the_app_server_as_the_side_that_gave_up() -> None:
    frames = "harness->environment s1 handshake 0\nenvironment->harness s1 handshake 0\nharness->environment s1 reset 0\n"
    assert handshake_divergence(frames, {}) == (
        "Noise handshake failed at message 2 (exec-server -> app-server): the app-server reset the stream"
        " after it (prologue or keys differ?); stream s1"
    )
    assert handshake_divergence(HEALTHY_FRAMES, {}) is None
    assert handshake_divergence("", {}) is None


def test_a_stream_broken_after_data_is_the_cause_only_where_stderr_says_the_transport_failed() -> None:
    frames = HEALTHY_FRAMES + "harness->environment s1 reset 0\nharness->environment s2 resume 0\n"
    pycodex = "2026-12-03 07:35:20,529 WARNING exec_client.remote.stream: remote exec-server stream s1 failed: bad record seq 0: AES-GCM authentication failed at nonce 0\n"
    assert stream_divergence(frames, {"app-server": pycodex}) == (
        "app-server opened 2 relay streams: the first was reset after 2 data frames; app-server: remote"
        " exec-server stream s1 failed: bad record seq 0: AES-GCM authentication failed at nonce 0"
    )
    # A reset that follows a protocol error (Codex 0.169 on a renamed exitCode) is not the first divergence.
    assert stream_divergence(frames, {"app-server": "WARN codex: turn failed\n"}) is None


def _write(folder: Path, name: str, records: list[dict[str, Any]]) -> None:
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in records))


def test_the_folder_is_read_upstream_first_and_the_symptom_kept_beside_the_cause(tmp_path: Path) -> None:
    log = PairLog(tmp_path / "pair")
    _write(log.folder, "app-server.jsonrpc.jsonl", _app_run(_command(exitCode=3)))
    _write(log.folder, "model-requests.jsonl", _model("Process exited with code 3\ncanary-7f3a"))
    assert log.divergence() is None  # no expected.json: the scenario's own cause stands
    log.expect(EXPECTED)
    assert first_divergence(log.folder) == "commandExecution exitCode: expected 0, got 3"
    _write(log.folder, "exec-server.jsonrpc.jsonl", _exec_run({"exitCode": 3}))
    assert first_divergence(log.folder) == "exec-server process/exited params.exitCode: expected 0, got 3"
    (log.folder / "relay-frames.txt").write_text(PROLOGUE_FRAMES)
    log.cause("timed out after 30s awaiting turn/completed for turn u")
    cause = (log.folder / "cause.txt").read_text()
    assert cause.startswith("Noise handshake failed at message 1 ") and cause.count("\n") == 1
    assert (
        log.folder / "symptom.txt"
    ).read_text() == "timed out after 30s awaiting turn/completed for turn u\n"
