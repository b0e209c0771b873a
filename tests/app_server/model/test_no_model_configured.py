"""No silent fake model: with no provider and no API key a turn fails with one error saying how to configure
a model (Codex 0.169 fails on OpenAI's 401; pycodex fails before sending anything, in the same shape), and the
offline `scripted` model answers only when it is asked for by name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_server.model.errors import NO_API_KEY
from tests.support.fake_model import run_turn

#: The built-in provider's URL, moved to a closed loopback port: nothing can leave the machine even if a
#: request were sent (none is: the turn fails before one is built).
DEAD_OPENAI = 'openai_base_url = "http://127.0.0.1:9/v1"\n'
#: What the offline model answers (app_server/model/demo_script.json).
SCRIPTED_ANSWER = "I ran `echo hello from pycodex` and it printed: hello from pycodex"


def _home(tmp_path: Path, text: str) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(text)
    return home


async def test_a_turn_with_no_provider_and_no_key_fails_with_one_error_saying_how_to_configure_a_model(
    app_server: Any, tmp_path: Path, workspace: Path
) -> None:
    client = await app_server(codex_home=_home(tmp_path, DEAD_OPENAI))
    started = await client.call("thread/start", {"cwd": str(workspace)})
    assert started["modelProvider"] == "openai"  # as Codex: the default provider, key or no key
    turn = await run_turn(client, started["thread"]["id"], "hi")
    expected = NO_API_KEY.format(provider="openai")
    assert turn["status"] == "failed"
    assert turn["error"] == {"message": expected, "codexErrorInfo": {"httpConnectionFailed": {"httpStatusCode": 401}},
                             "additionalDetails": None, "misalignment": None}
    assert "OPENAI_API_KEY" in expected and "model_provider" in expected and "--model scripted" in expected
    errors = [m["params"] for m in client.messages if m.get("method") == "error"]
    assert [(e["error"]["message"], e["willRetry"]) for e in errors] == [(expected, False)]  # one, no retries
    assert not any(i.get("type") == "agentMessage" for i in turn["items"])
    assert not any(m.get("method") == "configWarning" and "scripted" in str(m.get("params"))
                   for m in client.messages)


async def test_the_offline_model_answers_when_named_as_the_model(
    app_server: Any, tmp_path: Path, workspace: Path
) -> None:
    client = await app_server(codex_home=_home(tmp_path, DEAD_OPENAI + 'model = "scripted"\n'))
    started = await client.call("thread/start", {"cwd": str(workspace)})
    assert (started["model"], started["modelProvider"]) == ("scripted", "scripted")
    turn = await run_turn(client, started["thread"]["id"], "hi")
    assert turn["status"] == "completed"
    texts = [m["params"]["item"]["text"] for m in client.messages
             if m.get("method") == "item/completed" and m["params"]["item"]["type"] == "agentMessage"]
    assert texts == [SCRIPTED_ANSWER]
