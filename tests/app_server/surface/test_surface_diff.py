"""Differential test of the surface methods (files, commands, hooks, plugins, accounts, the rest): the
same minimal valid request to Codex 0.169.0 and to pycodex; pycodex's result must be valid against
Codex's response schema, and the two answers are compared (same result shape, or the same error)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.appserver import OMIT, AppServerClient
from tests.support.appserver_process import write_codex_config
from tests.support.schema import SchemaPair
from tests.support.surface_requests import SURFACE_REQUESTS, answered_alike, fill

pytestmark = pytest.mark.codex

# Notifications both servers send on their own after `initialized`, not in answer to a request.
UNSOLICITED = {"configWarning", "remoteControl/status/changed"}


async def _run_all(client: AppServerClient, tmp: Path) -> list[dict[str, Any]]:
    answers = []
    for method, params in SURFACE_REQUESTS:
        answers.append(await client.request(method, OMIT if params is None else fill(params, str(tmp)), timeout=30))
    return answers


async def test_surface_methods_answer_like_codex(
    app_server: Callable[..., Awaitable[AppServerClient]], codex_bin: Path, codex_schemas: SchemaPair,
    tmp_path: Path,
) -> None:
    runs: dict[str, tuple[list[dict[str, Any]], Path, Path]] = {}
    for label, argv in (("codex", [str(codex_bin), "app-server"]), ("pycodex", None)):
        home, tmp, cwd = tmp_path / label / "home", tmp_path / label / "tmp", tmp_path / label / "ws"
        tmp.mkdir(parents=True)
        cwd.mkdir()
        write_codex_config(home, base_url="http://127.0.0.1:9/v1")
        kwargs: dict[str, Any] = {"codex_home": home, "cwd": cwd, "experimental": True}
        if argv is not None:
            kwargs["argv"] = argv
        client = await app_server(**kwargs)
        runs[label] = (await _run_all(client, tmp), tmp, home)
    (codex, c_tmp, c_home), (ours, p_tmp, p_home) = runs["codex"], runs["pycodex"]
    replace = {str(c_tmp): "<tmp>", str(p_tmp): "<tmp>", str(c_home): "<home>", str(p_home): "<home>"}
    schema = codex_schemas.experimental
    alike, report = 0, []
    for (method, _), c, p in zip(SURFACE_REQUESTS, codex, ours, strict=True):
        if "result" in p:
            problems = schema.violations(schema.response_type(method), p["result"])
            assert not problems, f"{method}: pycodex result violates Codex's schema: {problems}"
        same, why = answered_alike(c, p, replace)
        alike += same
        if not same:
            report.append(f"{method}: {why}")
    print(f"{alike}/{len(SURFACE_REQUESTS)} answered like Codex")
    for line in report:
        print("  " + line)
    # Every method must at least be served (no -32601) and answer as Codex does in most cases.
    assert all(p.get("error", {}).get("code") != -32601 for p in ours)
    assert alike >= len(SURFACE_REQUESTS) - 3, report
