"""Differential test of the thread family: every thread/*, threadSection/* and memory/* method goes to pycodex and
to Codex 0.169 with the same minimal valid params, on a thread with one finished turn. Every answer is checked
against Codex's (experimental) schema by the client; the test prints how many answers match Codex's
(success with the same top-level keys, or an error with the same code and text) and requires a match for every method
in this family. thread/timeline/list is left out: Codex's own answer fails its schema.
Methods that would start turns or need an account (compact, shellCommand, revert,
queue/add, sample, realtime, memory/reset, prepareApprovedPlan) are left out of the shared run; compact,
shellCommand, queue/add and memory/reset have their own behaviour tests (tests/app_server/threads/test_thread_compact.py...);
timeline/list, sample, realtime and prepareApprovedPlan are compared with Codex in
tests/app_server/test_experimental_methods_codex.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import message, model_config, run_turn

pytestmark = pytest.mark.codex

Ctx = dict[str, Any]
Params = Callable[[Ctx], dict[str, Any] | None]
NIL = "00000000-0000-7000-8000-000000000000"


def _t(**extra: Any) -> Params:
    return lambda c: {"threadId": c["tid"], **extra}


# (method, params). Order matters: read-only first, then mutations, then the ones that end the thread.
CALLS: list[tuple[str, Params]] = [
    ("thread/read", _t()),
    ("thread/list", lambda c: {}),
    ("thread/loaded/list", lambda c: {}),
    ("thread/turns/list", _t()),
    ("thread/items/list", _t()),
    ("thread/items/read", lambda c: {"threadId": c["tid"], "turnId": c["turn"], "itemIds": [c["item"]]}),
    ("thread/readState/update", lambda c: {"threadId": c["tid"], "expectedRevision": c["rev"],
                                           "operation": {"type": "read"}}),
    ("thread/goal/get", _t()),
    ("thread/goal/set", _t(objective="ship it", status="paused")),
    ("thread/goal/clear", _t()),
    ("thread/backgroundTerminals/list", _t()),
    ("thread/backgroundTerminals/clean", _t()),
    ("thread/backgroundTerminals/terminate", _t(processId="123")),
    ("thread/resume", _t(excludeTurns=True)),
    ("thread/fork", _t(excludeTurns=True)),
    ("thread/name/set", _t(name="renamed")),
    ("thread/metadata/update", _t()),
    ("thread/settings/update", _t()),
    ("thread/memoryMode/set", _t(mode="disabled")),
    ("thread/memory/read", _t()),
    ("thread/inject_items", _t(items=[{"type": "message", "role": "user",
                                       "content": [{"type": "input_text", "text": "note"}]}])),
    ("memory/status", lambda c: {}),
    ("thread/search", lambda c: {"searchTerm": "hello"}),
    ("thread/searchOccurrences", _t(searchTerm="hello")),
    ("threadSection/list", lambda c: {}),
    ("threadSection/create", lambda c: {"name": "Work"}),
    ("threadSection/update", lambda c: {"sectionId": NIL, "name": "Other"}),
    ("threadSection/delete", lambda c: {"sectionId": NIL}),
    ("thread/section/move", lambda c: {"threadId": c["tid"], "sectionId": None}),
    ("thread/attachment/list", _t()),
    ("thread/attachmentOwner/list", lambda c: {"attachmentType": "test", "identityKey": "k"}),
    ("thread/attachment/add", _t(attachmentType="test", identityKey="k", payload={})),
    ("thread/attachment/remove", _t(attachmentType="test", identityKey="k")),
    ("thread/queue/list", _t()),
    ("thread/queue/delete", _t(queuedSubmissionId=NIL)),
    ("thread/queue/update", _t(queuedSubmissionId=NIL, input=[])),
    ("thread/queue/reorder", _t(queuedSubmissionIds=[NIL])),
    ("thread/queue/start", _t()),
    ("thread/realtime/listVoices", lambda c: {}),
    ("thread/prediction/request", _t(sourceTurnId=NIL)),
    ("thread/guardianReview", _t()),
    ("thread/increment_elicitation", _t()),
    ("thread/decrement_elicitation", _t()),
    ("thread/sample/cancel", lambda c: {"requestId": NIL}),
    ("thread/approveGuardianDeniedAction", _t(event={})),
    ("thread/unsubscribe", _t()),
    ("thread/archive", _t()),
    ("thread/unarchive", _t()),
    ("thread/delete", lambda c: {"threadId": c["fork"]}),
    ("thread/start", lambda c: {}),
]

#: Every method in this family must answer as Codex does (thread/prediction/request included: Codex
#: 0.169 itself answers it -32601, "not implemented yet").
SERVED = {method for method, _ in CALLS}


def _shape(response: dict[str, Any], ctx: Ctx) -> tuple[str, Any]:
    """Success: its top-level keys. Error: its code and message, with this run's ids named by role."""
    if "error" in response:
        message = str(response["error"]["message"])
        for role in ("tid", "fork", "turn", "item"):
            message = message.replace(str(ctx[role]), f"<{role}>")
        return ("error", response["error"]["code"], message)
    result = response["result"]
    return ("ok", tuple(sorted(result)) if isinstance(result, dict) else type(result).__name__)


async def _run(client: Any, workspace: Path) -> dict[str, tuple[str, Any]]:
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    turn = await run_turn(client, tid, "hello")
    items = (await client.call("thread/items/list", {"threadId": tid}))["data"]
    ctx: Ctx = {"tid": tid, "turn": turn["id"], "item": items[-1]["item"]["id"]}
    shapes: dict[str, tuple[str, Any]] = {}
    for method, params in CALLS:
        ctx["rev"] = (await client.call("thread/read", {"threadId": tid}))["readState"]["revision"]
        response = await client.request(method, params(ctx), timeout=20)
        if method == "thread/fork" and "result" in response:
            ctx["fork"] = response["result"]["thread"]["id"]
        ctx.setdefault("fork", NIL)
        shapes[method] = _shape(response, ctx)
    return shapes


async def test_thread_family_matches_codex_in_shape(
    app_server: Any, fake_model: Any, codex_bin: Path, tmp_path: Path, workspace: Path
) -> None:
    results: dict[str, dict[str, tuple[str, Any]]] = {}
    for name, argv in (("pycodex", None), ("codex", [str(codex_bin), "app-server"])):
        model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"},
                                 name=f"model_{name}")
        home = tmp_path / f"home_{name}"
        model_config(home, model.url)
        client = await app_server(argv=argv, codex_home=home, experimental=True)
        results[name] = await _run(client, workspace)
        client.raise_violations()  # every answer was checked against Codex's schema on arrival

    ours, theirs = results["pycodex"], results["codex"]
    matching = [m for m, _ in CALLS if ours[m] == theirs[m]]
    print(f"\nthread family: {len(matching)}/{len(CALLS)} answers match Codex 0.169 (shape, error text)")
    for method, _ in CALLS:
        mark = "=" if ours[method] == theirs[method] else "!"
        print(f"  {mark} {method}: pycodex {ours[method]} codex {theirs[method]}")
    differing = {m: (ours[m], theirs[m]) for m in SERVED if ours[m] != theirs[m]}
    assert not differing, differing
