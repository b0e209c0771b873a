"""API-key login as Codex 0.169 does it (checked against the binary: the same test runs on both servers).

account/login/start writes CODEX_HOME/auth.json (owner-only), account/read then reports the API-key account
for a provider that uses OpenAI auth, the model requests carry the stored key as a bearer token (ahead of
OPENAI_API_KEY in the environment), and account/logout removes the file and the account."""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import message

SCRIPT = {"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"}
CONFIGS = {
    # A provider of one's own that asks for OpenAI auth, and the built-in `openai` pointed at the fake.
    "custom": 'model = "mock-model"\nmodel_provider = "m"\n[model_providers.m]\nname = "M"\nbase_url = "{url}"\n'
              "requires_openai_auth = true\nrequest_max_retries = 0\nstream_max_retries = 0\n",
    "openai": 'model = "mock-model"\nopenai_base_url = "{url}"\n',
}


async def _bearer_of_next_turn(client: Any, model: Any, workspace: Path) -> str | None:
    seen = len(model.requests())
    tid = (await client.call("thread/start", {"cwd": str(workspace)}, timeout=30))["thread"]["id"]
    await client.call("turn/start", {"threadId": tid, "input": [{"type": "text", "text": "hi"}]})
    done = await client.wait_notification("turn/completed", timeout=60)
    assert done["params"]["turn"]["status"] == "completed"
    (request,) = model.requests()[seen:]
    bearer: str | None = request["headers"].get("authorization")
    return bearer


# Codex's built-in `openai` provider first tries the Responses WebSocket, which the fake model does not serve:
# it retries with backoff for ~7 s per turn before falling back to HTTP (~11 s of the case's 13 s). That pair
# runs with PYCODEX_SLOW=1; codex-custom stays in the default run as Codex's reference for the same login, key
# and logout flow, and pycodex-openai keeps the built-in provider's path of our own server there.
MATRIX = [
    pytest.param("codex", "custom", marks=pytest.mark.codex, id="codex-custom"),
    pytest.param("codex", "openai", marks=[pytest.mark.codex, pytest.mark.slow], id="codex-openai"),
    pytest.param("pycodex", "custom", id="pycodex-custom"),
    pytest.param("pycodex", "openai", id="pycodex-openai"),
]


@pytest.mark.parametrize(("server", "provider"), MATRIX)
async def test_api_key_login_read_use_logout(
    server: str, provider: str, request: pytest.FixtureRequest, app_server: Any, fake_model: Any,
    tmp_path: Path, workspace: Path,
) -> None:
    argv = [str(request.getfixturevalue("codex_bin")), "app-server"] if server == "codex" else None
    model = await fake_model(SCRIPT)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(CONFIGS[provider].format(url=model.url))
    client = await app_server(argv=argv, codex_home=home, env={"OPENAI_API_KEY": "sk-env"})
    anonymous = {"account": None, "userId": None, "requiresOpenaiAuth": True, "workspaceRouting": None}

    assert await client.call("account/read", {}) == anonymous
    assert await client.call("account/login/start", {"type": "apiKey", "apiKey": "sk-file"}) == {"type": "apiKey"}
    auth = home / "auth.json"
    assert json.loads(auth.read_text()) == {"auth_mode": "apikey", "OPENAI_API_KEY": "sk-file"}
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
    assert await client.call("account/read", {}) == dict(anonymous, account={"type": "apiKey"})
    assert await _bearer_of_next_turn(client, model, workspace) == "Bearer sk-file"

    assert await client.call("account/logout") == {}
    assert not auth.exists()
    assert await client.call("account/read", {}) == anonymous
    # Without a login Codex sends no key; pycodex's built-in provider falls back to OPENAI_API_KEY (its own rule).
    fallback = "Bearer sk-env" if (server, provider) == ("pycodex", "openai") else None
    assert await _bearer_of_next_turn(client, model, workspace) == fallback
    updates = [n["params"] for n in client.notifications("account/updated")]
    assert updates == [{"authMode": "apikey", "planType": None}, {"authMode": None, "planType": None}]
