"""The trace's redaction, writer and replay comparison on their own (no processes)."""

from __future__ import annotations

import json
from pathlib import Path

from pycodex.trace.diff import first_difference, substitute
from pycodex.trace.recorder import Tracer
from pycodex.trace.redact import REDACTED, Redactor


def test_redaction_covers_keys_headers_bearer_text_and_environment_secrets() -> None:
    redactor = Redactor.from_environment({"RELAY_AUTH_TOKEN": "relay-canary-123", "HOME": "/root"})
    value = {
        "headers": {"authorization": "Bearer sk-abcdefghijkl", "x-api-key": "k-canary", "accept": "*/*"},
        "params": {"accessToken": "tok", "client_secret": "s", "password": "p", "env": {"MY_KEY": "v"}},
        "text": "curl -H 'Authorization: Bearer abc.def-ghi' https://x and relay-canary-123 and sk-live1234567890",
        "usage": {"input_tokens": 10, "total_tokens": 15},
        "keys": ["stay"],
    }
    out = redactor.value(value)
    dumped = json.dumps(out)
    for canary in ("sk-abcdefghijkl", "k-canary", '"tok"', '"s"', '"p"', '"v"', "abc.def-ghi", "relay-canary-123",
                   "sk-live1234567890"):
        assert canary not in dumped, canary
    assert out["headers"]["accept"] == "*/*" and out["usage"] == {"input_tokens": 10, "total_tokens": 15}
    assert out["keys"] == ["stay"] and out["params"]["accessToken"] == REDACTED
    assert "/root" in json.dumps(redactor.value({"path": "/root"}))


def test_writer_redacts_raw_lines_and_keeps_plain_ones_verbatim(tmp_path: Path) -> None:
    path = tmp_path / "t.trace"
    tracer = Tracer(path, redactor=Redactor(["env-secret-canary"]))
    plain = b'{"method":"item/agentMessage/delta","params":{"delta":"hi"}}'
    tracer.record("out", "client", 1, plain)
    tracer.record("in", "client", 1, b'{"id":1,"method":"x","params":{"apiKey":"canary-in-key"}}')
    tracer.record("in", "model", 7, "data says env-secret-canary")  # not JSON: kept by size only
    tracer.record("in", "client", 1, b'{"id":2,"method":"y","params":{"note":"env-secret-canary"}}')
    tracer.close()
    text = path.read_text()
    assert "canary-in-key" not in text and "env-secret-canary" not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[1]["msg"] == json.loads(plain)
    assert lines[2]["msg"]["params"]["apiKey"] == REDACTED
    assert lines[3]["msg"] == {"unparsable_bytes": len("data says env-secret-canary")}
    assert lines[4]["msg"]["params"]["note"] == REDACTED


def test_writer_derives_approval_events_with_the_wait(tmp_path: Path) -> None:
    path = tmp_path / "t.trace"
    tracer = Tracer(path, redactor=Redactor())
    tracer.record("out", "client", 1, json.dumps(
        {"id": 0, "method": "item/commandExecution/requestApproval", "params": {"itemId": "c1", "turnId": "t1"}}))
    tracer.record("in", "client", 1, json.dumps({"id": 0, "result": {"decision": "decline"}}))
    tracer.close()
    approvals = [json.loads(line) for line in path.read_text().splitlines() if '"approval"' in line]
    asked, answered = (a["summary"] for a in approvals)
    assert asked["itemId"] == "c1" and answered["decision"] == "decline" and answered["waited"] >= 0


def test_diff_ignores_volatile_values_and_names_the_changed_path() -> None:
    ids: dict[str, str] = {}
    recorded = {"id": 3, "result": {"thread": {"id": "a", "cwd": "/x", "items": [{"text": "hi", "startedAtMs": 1}]}}}
    replayed = {"id": 3, "result": {"thread": {"id": "b", "cwd": "/y", "items": [{"text": "hi", "startedAtMs": 2}]}}}
    assert first_difference(recorded, replayed, ids) is None
    assert substitute({"threadId": "a"}, ids) == {"threadId": "b"}
    changed = {"id": 3, "result": {"thread": {"id": "b", "cwd": "/y", "items": [{"text": "ho", "startedAtMs": 2}]}}}
    assert first_difference(recorded, changed, {}) == "result.thread.items[0].text: expected 'hi', got 'ho'"
    renamed = {"id": 3, "result": {"thread": {"ident": "b", "cwd": "/y", "items": []}}}
    assert first_difference(recorded, renamed, {}) == "result.thread.id: missing (the server sent ident instead)"
    extra = {"id": 3, "result": {"thread": {**replayed["result"]["thread"], "new": 1}}}
    assert first_difference(recorded, extra, {}) == "result.thread.new: unexpected field"


def test_config_overrides_and_key_variable_names_in_the_header() -> None:
    redactor = Redactor()
    assert redactor.assignment("model_providers.p.api_key=sk-x") == f"model_providers.p.api_key={REDACTED}"
    assert redactor.assignment("model=gpt") == "model=gpt"
    # env_key names the variable holding the key: a replay needs it, and it is not a secret.
    assert redactor.value({"env_key": "CODEX_API_KEY", "api_key": "v"}) == {"env_key": "CODEX_API_KEY",
                                                                            "api_key": REDACTED}


def test_the_fast_path_sends_every_secret_shape_to_the_redactor() -> None:
    redactor = Redactor(["literal-env-secret"])
    needs = ['{"a":{"apiKey":"x"}}', '{"Authorization" : "x"}', '{"t":"use sk-abcdefghijk"}',
             '{"t":"Bearer abcdef"}', '{"\\u0074oken":"x"}', '{"t":"has literal-env-secret inside"}']
    plain = ['{"totalTokens":15}', '{"t":"task-12345678901"}', '{"method":"item/agentMessage/delta"}']
    assert [s for s in needs if not redactor.may_hold_secrets(s)] == []
    assert [s for s in plain if redactor.may_hold_secrets(s)] == []


def test_a_long_burst_keeps_its_order_and_redacts_the_one_secret_in_it(tmp_path: Path) -> None:
    # Over two writer chunks of clean deltas with, in the middle, a secret, an unparsable model event and
    # JSON padded with whitespace: each of those leaves the chunk's fast path without reordering the file.
    path = tmp_path / "t.trace"
    tracer = Tracer(path, redactor=Redactor(["env-secret-canary"]))
    odd = {300: b'{"method":"d","params":{"delta":"env-secret-canary"}}', 301: "{not json",
           302: ' {"type":"padded"} '}
    for i in range(600):
        raw = odd.get(i, b'{"method":"d","params":{"delta":"w%d"}}' % i)
        tracer.record("in" if i in (301, 302) else "out", "model" if i in (301, 302) else "client", 1, raw)
    tracer.close()
    text = path.read_text()
    assert "env-secret-canary" not in text
    msgs = [json.loads(line)["msg"] for line in text.splitlines()[1:]]
    assert len(msgs) == 600
    assert [m["params"]["delta"] for i, m in enumerate(msgs) if i not in odd] == [f"w{i}" for i in range(600)
                                                                                  if i not in odd]
    assert msgs[300]["params"]["delta"] == REDACTED
    assert msgs[301] == {"unparsable_bytes": len("{not json")} and msgs[302] == {"type": "padded"}
