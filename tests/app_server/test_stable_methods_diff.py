"""Differential test of every stable client method of the Codex 0.169 schema (issue 12): each goes to pycodex
and to Codex 0.169 from a stable (non-experimental) client with the same minimal valid params; thread-scoped
ones run on a thread with one finished turn against a loopback fake model. pycodex's result must be valid
against Codex's stable response schema, and the two answers must agree (same result shape, or the same
error; for a method that needs the network, the same failure up to its transport reason). Params come from
the surface table, the thread-family table and tests/support/stable_requests.py; the turn-starting calls run
on a second thread so their effects stay off the thread the thread-family calls use."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.app_server.threads.test_thread_family_diff import CALLS as THREAD_CALLS
from tests.support.appserver import OMIT, AppServerClient
from tests.support.fake_model import message, model_config, run_turn
from tests.support.schema import SchemaPair
from tests.support.stable_requests import (
    NIL,
    STABLE_EXTRA,
    TURN_STARTING,
    Ctx,
    Params,
    failed_alike_offline,
    stable_methods,
)
from tests.support.surface_requests import SURFACE_REQUESTS, answered_alike, fill

pytestmark = pytest.mark.codex

STABLE_COUNT = 109


def _plan(methods: set[str]) -> list[tuple[str, Params]]:
    """The calls in run order, each stable method once: ours first (turns, config), then the thread family
    (which ends with archive/delete), then the surface table."""
    surface: list[tuple[str, Params]] = [
        (m, (lambda c, p=p: None if p is None else fill(p, c["tmp"]))) for m, p in SURFACE_REQUESTS
    ]
    plan: list[tuple[str, Params]] = []
    for method, params in STABLE_EXTRA + THREAD_CALLS + surface:
        if method in methods and method not in {m for m, _ in plan}:
            plan.append((method, params))
    return plan


async def _run(client: AppServerClient, init: dict[str, Any], plan: list[tuple[str, Params]],
               ws: Path, tmp: Path) -> dict[str, dict[str, Any]]:
    answers: dict[str, dict[str, Any]] = {"initialize": {"result": init}}
    tids: list[str] = []
    turns: list[str] = []
    for _ in range(2):  # the first for the thread family, the second for the turn-starting calls
        tids.append((await client.call("thread/start", {"cwd": str(ws)}, timeout=60))["thread"]["id"])
        turns.append((await run_turn(client, tids[-1], "hello", timeout=60))["id"])
    tid = tids[0]
    items = (await client.call("thread/items/list", {"threadId": tid}))["data"]
    ctx: Ctx = {"tid": tid, "turn": turns[0], "turns_tid": tids[1], "last": turns[1], "second": NIL,
                "item": items[-1]["item"]["id"], "fork": NIL, "ws": str(ws), "tmp": str(tmp)}
    for method, params in plan:
        ctx["rev"] = (await client.call("thread/read", {"threadId": tid}))["readState"]["revision"]
        value = params(ctx)
        response = await client.request(method, OMIT if value is None else value, timeout=60)
        answers[method] = response
        result = response.get("result")
        if method == "thread/fork" and result:
            ctx["fork"] = result["thread"]["id"]
        if method in TURN_STARTING and result is not None:
            done = await client.wait_notification("turn/completed", timeout=60)
            ctx["last"] = done["params"]["turn"]["id"]
            if method == "turn/start":
                ctx["second"] = ctx["last"]
    return answers


async def test_stable_methods_answer_like_codex(
    app_server: Callable[..., Awaitable[AppServerClient]], fake_model: Any, codex_bin: Path,
    codex_schemas: SchemaPair, tmp_path: Path,
) -> None:
    methods = stable_methods()
    assert len(methods) == STABLE_COUNT, f"the stable schema has {len(methods)} client methods"
    plan = _plan(set(methods))
    missing = set(methods) - {m for m, _ in plan} - {"initialize"}
    assert not missing, f"stable methods without params: {sorted(missing)}"

    runs: dict[str, dict[str, dict[str, Any]]] = {}
    replace: dict[str, str] = {}
    for label, argv in (("codex", [str(codex_bin), "app-server"]), ("pycodex", None)):
        root = tmp_path / label
        home, tmp, ws = root / "home", root / "tmp", root / "ws"
        tmp.mkdir(parents=True)
        ws.mkdir()
        (ws / "notes.md").write_text("notes\n")
        model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"},
                                 name=f"model_{label}")
        model_config(home, model.url)
        client = await app_server(argv=argv, codex_home=home, cwd=ws, initialize=False)
        init = await client.initialize()
        runs[label] = await _run(client, init, plan, ws, tmp)
        replace.update({str(tmp): "<tmp>", str(home): "<home>", str(ws): "<ws>"})

    schema = codex_schemas.stable
    alike, report = 0, []
    for method in methods:
        codex, ours = runs["codex"][method], runs["pycodex"][method]
        if "result" in ours:
            problems = schema.violations(schema.response_type(method), ours["result"])
            assert not problems, f"{method}: pycodex result violates Codex's schema: {problems}"
        same, why = answered_alike(codex, ours, replace)
        same = same or failed_alike_offline(method, codex, ours)
        alike += same
        if not same:
            report.append(f"{method}: {why}")
    print(f"\nstable methods: {alike}/{STABLE_COUNT} answered like Codex")
    for line in report:
        print("  " + line)
    assert alike == STABLE_COUNT, report
