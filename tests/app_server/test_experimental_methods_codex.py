"""The same script of Codex 0.169's experimental thread/timeline/list, thread/sample, thread/prepareApprovedPlan,
turn/settings/update and thread/realtime/* requests goes to pycodex and to the Codex 0.169 binary, each with a
fake Responses model; the answers (and the realtime notifications that follow them) must be the same once this
run's ids are named by role. Timeline positions are rollout line ordinals, which differ between the two
writers, so a timeline is compared as its sequence of entry kinds. Errors are compared with ``as_codex``;
pycodex's -32602 for bad params and its serde texts are covered elsewhere, so none is sent here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.app_server.test_experimental_methods import (
    catalog_model_config,
    model_requests,
    running_turn,
    step_script,
)
from tests.support.errors import as_codex
from tests.support.fake_model import message, model_config, run_turn

pytestmark = pytest.mark.codex

NIL = "00000000-0000-7000-8000-000000000000"


class Run:
    """One server's answers, with the run's ids replaced by their roles."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.ids: dict[str, str] = {}
        self.answers: list[tuple[str, Any]] = []

    def named(self, value: Any) -> Any:
        text = json.dumps(value)
        for role, ident in self.ids.items():
            text = text.replace(ident, f"<{role}>")
        return json.loads(text)

    async def ask(self, label: str, method: str, params: dict[str, Any]) -> Any:
        response = await self.client.request(method, params, timeout=30)
        answer = as_codex(response["error"]) if "error" in response else response["result"]
        self.answers.append((label, self.named(answer)))
        return response.get("result")

    async def note(self, method: str, thread_id: str, status: str | None = None) -> None:
        """The next ``method`` notification of the thread (with that status, for thread/status/changed)."""
        def match(p: dict[str, Any]) -> bool:
            return p.get("threadId") == thread_id and (status is None or p.get("status", {}).get("type") == status)

        got = await self.client.wait_notification(method, match, timeout=15)
        params = dict(got["params"])
        if method == "error":
            params["turnId"] = "<fresh>" if params.get("turnId") else params.get("turnId")
        self.answers.append((f"notification {method}", self.named(params)))


def _kinds(page: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(e["type"], e.get("item", {}).get("type")) for e in page["data"]]


async def _script(client: Any, workspace: Path) -> list[tuple[str, Any]]:
    run = Run(client)
    tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    fresh = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    run.ids.update(tid=tid, fresh=fresh)
    await run.ask("timeline of a thread with no turn", "thread/timeline/list", {"threadId": fresh})
    await run.ask("timeline of an unknown thread", "thread/timeline/list", {"threadId": NIL})
    turn = await run_turn(client, tid, "hello")
    run.ids["turn"] = turn["id"]

    whole = await client.call("thread/timeline/list", {"threadId": tid})
    run.answers.append(("timeline", (_kinds(whole), whole["nextCursor"], whole["activeRealtimeSessionAtPageStart"])))
    newest = await client.call("thread/timeline/list", {"threadId": tid, "limit": 2})
    cursor = json.loads(newest["nextCursor"])
    run.answers.append(("timeline newest 2", (_kinds(newest), sorted(cursor), cursor["kind"])))
    older = await client.call("thread/timeline/list", {"threadId": tid, "limit": 2, "cursor": newest["nextCursor"]})
    run.answers.append(("timeline older 2", (_kinds(older), older["nextCursor"])))
    await run.ask("timeline bad cursor", "thread/timeline/list", {"threadId": tid, "cursor": "zzz"})
    other = json.dumps({"threadId": fresh, "position": 1, "kind": 0, "id": "x"})
    await run.ask("timeline foreign cursor", "thread/timeline/list", {"threadId": tid, "cursor": other})

    await run.ask("sample", "thread/sample", {"threadId": tid, "expectedTurnId": turn["id"], "prompt": "sum up"})
    await run.ask("sample stale turn", "thread/sample", {"threadId": tid, "expectedTurnId": NIL, "prompt": "x"})
    await run.ask("sample unknown", "thread/sample", {"threadId": NIL, "expectedTurnId": NIL, "prompt": "x"})

    await run.ask("plan", "thread/prepareApprovedPlan", {"threadId": fresh, "markdown": "# Plan"})
    await run.ask("plan relative attachment", "thread/prepareApprovedPlan",
                  {"threadId": fresh, "markdown": "# Plan", "attachmentPath": "plan.md"})
    await run.ask("plan unknown", "thread/prepareApprovedPlan", {"threadId": NIL, "markdown": "# Plan"})

    await run.ask("turn settings", "turn/settings/update", {"threadId": tid, "turnId": turn["id"], "model": "x"})
    await run.ask("turn settings unknown", "turn/settings/update", {"threadId": NIL, "turnId": NIL})

    await run.ask("realtime start", "thread/realtime/start", {"threadId": tid, "outputModality": "text"})
    await run.note("thread/realtime/error", tid)
    await run.ask("realtime text", "thread/realtime/appendText", {"threadId": tid, "text": "hi"})
    await run.note("thread/status/changed", tid, status="systemError")
    await run.note("error", tid)
    await run.ask("realtime stop", "thread/realtime/stop", {"threadId": tid})
    await run.note("thread/realtime/closed", tid)
    for method, extra in (("thread/realtime/start", {"outputModality": "text"}), ("thread/realtime/stop", {}),
                          ("thread/realtime/appendSpeech", {"text": "x"})):
        await run.ask(f"{method} unknown", method, {"threadId": NIL, **extra})
    return run.answers


async def test_experimental_methods_answer_as_codex(
    app_server: Any, fake_model: Any, codex_bin: Path, tmp_path: Path, workspace: Path
) -> None:
    results: dict[str, list[tuple[str, Any]]] = {}
    for name, argv in (("pycodex", None), ("codex", [str(codex_bin), "app-server"])):
        model = await fake_model({"responses": [{"output": [message("reply")]}], "when_exhausted": "repeat_last"},
                                 name=f"model_{name}")
        home = tmp_path / f"home_{name}"
        model_config(home, model.url)
        client = await app_server(argv=argv, codex_home=home, experimental=True)
        client.raise_violations = lambda: None  # Codex's schema gets the timeline's turnId/startedAt keys wrong
        results[name] = await _script(client, workspace)
        others = [v for v in client.violations if "thread/timeline/list" not in v]
        assert not others, others
    ours, theirs = results["pycodex"], results["codex"]
    assert [label for label, _ in ours] == [label for label, _ in theirs]
    differing = {label: (mine, codex) for (label, mine), (_, codex) in zip(ours, theirs, strict=True) if mine != codex}
    assert not differing, differing


async def test_turn_settings_update_of_a_running_turn_answers_as_codex(
    app_server: Any, fake_model: Any, codex_bin: Path, tmp_path: Path
) -> None:
    """A running turn on a catalog model (gpt-5.5) with step_model_switching on: the refusals, the "applied"
    effort change and what the turn's next model request carries match Codex 0.169's."""
    results: dict[str, list[Any]] = {}
    for name, argv in (("pycodex", None), ("codex", [str(codex_bin), "app-server"])):
        model = await fake_model(step_script(), name=f"model_{name}")
        home, workspace = tmp_path / f"home_{name}", tmp_path / f"work_{name}"
        workspace.mkdir()
        catalog_model_config(home, model.url)
        client = await app_server(argv=argv, codex_home=home, experimental=True)
        tid, turn_id = await running_turn(client, workspace)
        answers: list[Any] = []
        for extra in ({"model": "no-such-model"}, {"effort": "high"}, {"turnId": NIL}):
            response = await client.request("turn/settings/update", {"threadId": tid, "turnId": turn_id, **extra})
            answers.append(as_codex(response["error"]) if "error" in response else response["result"])
        (workspace / "go").touch()
        done = await client.wait_notification("turn/completed", timeout=20)
        answers.append(done["params"]["turn"]["status"])
        answers.append([request["body"]["reasoning"].get("effort") for request in model.requests()][1:])
        answers.append([request["body"]["model"] for request in model.requests()])
        results[name] = answers
    assert results["pycodex"] == results["codex"]


async def test_sample_cancel_answers_as_codex(
    app_server: Any, fake_model: Any, codex_bin: Path, tmp_path: Path, workspace: Path
) -> None:
    """A sample stalled in the model, then cancelled: the cancel, the sample's own answer, a second cancel
    and a later sample are answered as Codex 0.169 answers them."""
    results: dict[str, list[Any]] = {}
    for name, argv in (("pycodex", None), ("codex", [str(codex_bin), "app-server"])):
        model = await fake_model({"responses": [{"output": [message("reply")]},
                                                {"output": [message("slow")], "stall_after": 1, "stall_s": 10},
                                                {"output": [message("after")]}]}, name=f"model_{name}")
        home = tmp_path / f"home_{name}"
        model_config(home, model.url)
        client = await app_server(argv=argv, codex_home=home, experimental=True)
        tid = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
        turn = await run_turn(client, tid, "hello")
        params = {"threadId": tid, "expectedTurnId": turn["id"], "prompt": "p"}
        await client.send({"id": "s1", "method": "thread/sample", "params": params})
        await model_requests(model, 2)
        answers: list[Any] = [await client.call("thread/sample/cancel", {"requestId": "s1"})]
        answers.append(as_codex((await client.wait_response("s1", timeout=15))["error"]))
        answers.append(await client.call("thread/sample/cancel", {"requestId": "s1"}))
        answers.append((await client.call("thread/sample", params))["text"])
        results[name] = answers
    assert results["pycodex"] == results["codex"]
