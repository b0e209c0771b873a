"""A turn on a model outside Codex 0.169's catalog starts with a `warning` notification, before the thread
turns active, on every turn (as the binary does); a catalog model, matched by prefix and with one optional
`provider/` namespace, draws none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app_server.threads.model_metadata import fallback_metadata_warning, has_model_metadata
from tests.support.fake_model import ok_model, run_turn


def _text(slug: str) -> str:
    return (f"Model metadata for `{slug}` not found. Defaulting to fallback metadata; "
            "this can degrade performance and cause issues.")


@pytest.mark.parametrize(("slug", "known"), [
    ("gpt-5.5", True), ("gpt-5.5-2026-01-01", True), ("gpt-6.1-sol-x", True), ("openai/gpt-5.5", True),
    ("codex-auto-review", True), ("GPT-5.5", False), ("gpt-6", False), ("a/b/gpt-5.5", False),
    ("/gpt-5.5", False), ("x-gpt-5.5", False), ("mock-model", False),
])
def test_catalog_lookup_matches_codex(slug: str, known: bool) -> None:
    # Each case was checked against the Codex 0.169 binary (a turn per slug, warning or not).
    assert has_model_metadata(slug) is known
    assert fallback_metadata_warning(slug) == (None if known else _text(slug))


async def test_each_turn_on_an_unknown_model_warns_first(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    await ok_model(fake_model, codex_home)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    assert client.notifications("warning") == []  # not at thread/start
    for _ in range(2):
        await run_turn(client, thread_id, "hi")
    methods = [m["method"] for m in client.notifications()]
    warnings = [i for i, m in enumerate(methods) if m == "warning"]
    starts = [i for i, m in enumerate(methods) if m == "turn/started"]
    assert len(warnings) == 2
    # each warning comes right before its turn's thread/status/changed (active) and turn/started
    assert [methods[i + 1:i + 3] for i in warnings] == [["thread/status/changed", "turn/started"]] * 2
    assert [i + 2 for i in warnings] == starts
    assert all(m["params"] == {"threadId": thread_id, "message": _text("mock-model")}
               for m in client.notifications("warning"))

    await run_turn(client, thread_id, "hi", model="gpt-5.5")  # a catalog model: no warning
    assert len(client.notifications("warning")) == 2
