"""``[otel]`` and the ``OTEL_*`` variables: Codex's keys and shapes, a bad value failing the load at its
file:line:col, which exporter each signal gets, nothing started when none is set up, and log records
exported with the trace id of the request they were logged in, redacted."""

from __future__ import annotations

import logging
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app_server.config import ConfigError, load_config
from pycodex import otel
from pycodex.otel.settings import Exporter, OtelSettings, resolve
from tests.otel.otlp_receiver import Receiver, otlp_receiver

GOOD = """
[otel]
log_user_prompt = true
environment = "staging"
exporter = "none"
metrics_exporter = "statsig"
span_attributes = { team = "ai" }

[otel.trace_exporter.otlp-grpc]
endpoint = "https://collector.example:4317"
headers = { "x-api-key" = "k" }
"""


def _load(home: Path, text: str, *, strict: bool = True) -> OtelSettings:
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text)
    return load_config(home, strict=strict, env={}).otel


def test_codex_shapes_are_read(tmp_path: Path) -> None:
    settings = _load(tmp_path / "home", GOOD)
    assert (settings.log_user_prompt, settings.environment, dict(settings.attributes)) == (True, "staging", {"team": "ai"})
    assert settings.logs == "disabled" and settings.metrics == "disabled"
    assert settings.traces == Exporter(endpoint="https://collector.example:4317", protocol="grpc",
                                       headers={"x-api-key": "k"})
    inline = _load(tmp_path / "home", '[otel]\ntrace_exporter = { otlp-http = { endpoint = "http://c/v1/traces", '
                   'protocol = "json" } }\n')
    assert inline.traces == Exporter(endpoint="http://c/v1/traces", protocol="http/json")
    assert not inline.log_user_prompt and inline.environment == "dev"  # Codex's defaults


@pytest.mark.parametrize(("text", "where", "message"), [
    ('[otel]\nlog_user_prompt = "yes"\n', ":2:19:", 'invalid type: string "yes", expected a boolean'),
    ('[otel]\ntrace_exporter = "otlp"\n', ":2:18:", "unknown variant `otlp`, expected one of `none`, `statsig`"),
    ('[otel]\nexporter = { otlp-http = { endpoint = "http://c" } }\n', ":2:26:", "missing field `protocol`"),
    ('[otel]\nexporter = { otlp-http = { endpoint = "http://c", protocol = "xml" } }\n', ":2:12:",
     "unknown variant `xml`, expected `binary` or `json`"),
    ('[otel.metrics_exporter.otlp-grpc]\nendpoint = 4317\n', ":2:12:", "invalid type: integer `4317`, expected a string"),
    ('[otel]\nlog_user_prompts = true\n', ":2:20:", "unknown field `log_user_prompts`"),
])
def test_a_bad_value_fails_the_load_at_its_place(tmp_path: Path, text: str, where: str, message: str) -> None:
    home = tmp_path / "home"
    with pytest.raises(ConfigError) as caught:
        _load(home, text)
    assert f"{home / 'config.toml'}{where} {message}" in str(caught.value)
    assert load_config(home, env={}).load_error is not None  # without --strict-config: threads refused, as always


def test_each_signal_takes_its_exporter_from_config_else_the_environment() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/", "OTEL_EXPORTER_OTLP_HEADERS": "a=1,b=x%20y",
           "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://metrics/custom", "OTEL_LOGS_EXPORTER": "none",
           "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=2"}
    settings = OtelSettings()
    assert resolve(settings, "traces", env) == Exporter(endpoint="http://collector:4318/v1/traces",
                                                       headers={"a": "2", "b": "x y"})
    assert resolve(settings, "metrics", env) == Exporter(endpoint="http://metrics/custom", headers={"a": "1", "b": "x y"})
    assert resolve(settings, "logs", env) is None
    configured = Exporter(endpoint="http://mine/v1/traces")
    assert resolve(OtelSettings(traces=configured), "traces", env) is configured
    assert resolve(OtelSettings(traces="disabled"), "traces", env) is None
    assert resolve(settings, "traces", {**env, "OTEL_SDK_DISABLED": "true"}) is None
    grpc = resolve(settings, "traces", {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317",
                                        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert grpc == Exporter(endpoint="http://c:4317", protocol="grpc")


def test_nothing_starts_when_nothing_is_exported() -> None:
    assert otel.start(OtelSettings(), {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"},
                      version="0") is None
    assert otel.active() is None
    with otel.request(None, "turn/start", 1, {"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"}, 0):
        assert otel.active() is None


def test_a_missing_sdk_is_named_with_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pycodex.otel.sdk", None)  # as if opentelemetry-sdk were not installed
    monkeypatch.delattr(otel, "sdk", raising=False)  # an earlier test's import left it on the package
    with pytest.raises(ImportError, match=r"pip install 'pycodex-stack\[otel\]'"):
        otel.start(OtelSettings(traces=Exporter(endpoint="http://c/v1/traces")), {}, version="0")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with otlp_receiver() as running:
        yield running


def test_log_records_carry_the_request_trace_and_are_redacted(receiver: Receiver) -> None:
    key = "sk-log-canary-" + secrets.token_hex(8)
    settings = OtelSettings(traces=Exporter(endpoint=f"{receiver.url}/v1/traces"),
                            logs=Exporter(endpoint=f"{receiver.url}/v1/logs"))
    telemetry = otel.start(settings, {"MY_PROVIDER_KEY": key}, version="0")
    assert telemetry is not None
    trace_id = secrets.token_hex(16)
    try:
        logging.getLogger("app_server.otel_test").warning("outside any request")
        with otel.request(telemetry, "turn/start", 7, {"traceparent": f"00-{trace_id}-{'3' * 16}-01"}, 2):
            assert otel.active() is telemetry
            logging.getLogger("app_server.otel_test").warning("the provider said no to %s", key)
        assert otel.active() is None
        telemetry.force_flush()
        receiver.wait_for(lambda r: bool(r.logs) and bool(r.spans))
    finally:
        telemetry.shutdown()
    ((body, log_trace, log_span),) = receiver.logs  # the record logged outside a request is not exported
    (span,) = receiver.named("turn/start")
    assert body == "the provider said no to [REDACTED]"
    assert (log_trace, log_span) == (trace_id, span.span_id)
