"""deprecationNotice for deprecated config keys, as Codex 0.169 sends them: on thread/start after
thread/started, and before the answer to thread/fork and to a cold thread/resume; in key order, whatever the
key's value; then the config's unrecognized-settings warning again, as a `warning` for the thread. Passes
against the binary too (PYCODEX_TEST_TARGET=codex)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_server.threads.config_notices import deprecation_notices
from tests.support.fake_model import message, model_config, run_turn

DOCS = "https://developers.openai.com/codex/config-basic#feature-flags"
WEB = ('Set `web_search` to `"live"`, `"indexed"`, `"cached"`, or `"disabled"` at the top level (or under a '
       "profile) in config.toml if you want to override it.")
CONFIG = ("experimental_use_unified_exec_tool = false\nbogus_key = 1\n[features]\ncollab = true\n"
          "web_search_cached = false\n"
          "use_legacy_landlock = true\ntranscript_v2 = true\nunified_exec = true\n")
EXPECTED = [
    {"summary": "`[features].collab` is deprecated. Use `[features].multi_agent` instead.",
     "details": f"Enable it with `--enable multi_agent` or `[features].multi_agent` in config.toml. See {DOCS} for "
                "details."},
    {"summary": "`[features].experimental_use_unified_exec_tool` is deprecated. Use `[features].unified_exec` "
                "instead.",
     "details": f"Enable it with `--enable unified_exec` or `[features].unified_exec` in config.toml. See {DOCS} "
                "for details."},
    {"summary": "`[features].transcript_v2` is deprecated and ignored.",
     "details": "Use `[tui].fullscreen_transcript` in config.toml instead."},
    {"summary": "`[features].use_legacy_landlock` is deprecated and will be removed soon.",
     "details": "Remove this setting to stop opting into the legacy Linux sandbox behavior."},
    {"summary": "`[features].web_search_cached` is deprecated because web search is enabled by default.",
     "details": WEB},
]


def _config_notices(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["params"] for m in messages
            if m.get("method") == "deprecationNotice" and m["params"]["summary"].startswith("`[features]")]


def test_no_deprecated_keys_no_notices() -> None:
    assert deprecation_notices({"model": "m", "features": {"unified_exec": True}}) == []
    assert deprecation_notices({"features": "not a table"}) == []


async def test_thread_start_fork_and_cold_resume_announce_deprecated_keys(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    model = await fake_model({"responses": [{"output": [message("ok")]}], "when_exhausted": "repeat_last"})
    model_config(codex_home, model.url, extra=CONFIG)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await client.wait_notification("thread/started")
    for expected in EXPECTED:  # after thread/started, in key order
        assert (await client.wait_notification("deprecationNotice"))["params"] == expected
    # then the config's unrecognized-settings warning again, for this thread
    ignored = (f"Codex is ignoring 1 unrecognized configuration setting. Check for typos or deprecated settings."
               f"\n  user ({codex_home / 'config.toml'}): `bogus_key` is ignored.")
    assert (await client.wait_notification("warning"))["params"] == {"threadId": thread_id, "message": ignored}
    await run_turn(client, thread_id, "hello")

    before = len(client.messages)
    fork = await client.request("thread/fork", {"threadId": thread_id, "excludeTurns": True})
    answered = next(i for i, m in enumerate(client.messages) if m.get("id") == fork["id"])
    assert _config_notices(client.messages[before:answered]) == EXPECTED  # before the answer

    before = len(client.messages)
    await client.call("thread/resume", {"threadId": thread_id, "excludeTurns": True})  # loaded: no config read
    assert _config_notices(client.messages[before:]) == []

    await client.close()
    other = await app_server()
    before = len(other.messages)
    resumed = await other.request("thread/resume", {"threadId": thread_id, "excludeTurns": True})
    answered = next(i for i, m in enumerate(other.messages) if m.get("id") == resumed["id"])
    assert _config_notices(other.messages[before:answered]) == EXPECTED
