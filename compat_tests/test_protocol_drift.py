"""Protocol drift from one build's app-server schema (the app spec) to another's (the exec spec).

Both builds write ``app-server generate-json-schema --experimental`` bundles; support/schema_diff.py
compares them. Breaking changes fail the pair (the first one is the cause); additions and
deprecations are listed in the pair's ``drift.txt``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from compat_tests.support.artifacts import PairLog
from compat_tests.support.builds import Build
from compat_tests.support.processes import ProcessGroup, clean_env
from compat_tests.support.rpc import STEP, ScenarioError
from compat_tests.support.schema_diff import FieldInfo, diff_surfaces, merge_bundles, surface

pytestmark = pytest.mark.compat
SCENARIO = "drift"
ACKNOWLEDGED = Path(__file__).with_name("acknowledged_drift.txt")


def acknowledged(app: str, exec_: str) -> list[str]:
    """The reviewed breaking changes from ``app`` to ``exec_`` (acknowledged_drift.txt)."""
    prefix = f"{app} -> {exec_}: "
    lines = ACKNOWLEDGED.read_text(encoding="utf-8").splitlines()
    return [line.removeprefix(prefix) for line in lines if line.startswith(prefix)]


async def _surface(group: ProcessGroup, build: Build, out: Path, role: str) -> dict[str, FieldInfo]:
    home = out.parent / f"{out.name}-home"
    home.mkdir(parents=True)
    argv = build.command("app-server", "generate-json-schema", "--experimental", "--out", str(out))
    handle = await group.start(f"{role}-schema", argv, env=clean_env(CODEX_HOME=str(home)), cwd=home)
    try:
        await asyncio.wait_for(handle.proc.wait(), STEP * 2)
    except TimeoutError:
        raise ScenarioError(
            f"{build.name} app-server generate-json-schema did not finish in {STEP * 2:.0f}s"
        ) from None
    result = await handle.stop()
    if result.returncode != 0:
        raise ScenarioError(f"{build.name} app-server generate-json-schema exited rc={result.returncode}")
    files = sorted(out.glob("*.schemas.json"), key=lambda p: (".v2." not in p.name, p.name))
    if not files:
        raise ScenarioError(f"{build.name} app-server generate-json-schema wrote no *.schemas.json bundle")
    bundles: list[dict[str, Any]] = [json.loads(p.read_text(encoding="utf-8")) for p in files]
    return surface(merge_bundles(bundles))


async def test_protocol_drift_between_builds_has_no_breaking_change(
    app_build: Build, exec_build: Build, process_group: ProcessGroup, tmp_path: Path, pair_log: PairLog
) -> None:
    try:
        old = await _surface(process_group, app_build, tmp_path / "old", "from")
        new = await _surface(process_group, exec_build, tmp_path / "new", "to")
    finally:
        await process_group.stop_all()
        pair_log.processes(process_group)
    report = diff_surfaces(old, new)
    accepted = acknowledged(app_build.name, exec_build.name)
    pair_log.write_lines("drift.txt", [
        f"# {app_build.name} -> {exec_build.name}", report.summary(),
        *(f"acknowledged: {line}" for line in accepted),
    ])
    unexpected = [line for line in report.breaking if line not in accepted]
    if unexpected:
        more = f" (+{len(unexpected) - 1} more)" if len(unexpected) > 1 else ""
        raise ScenarioError(f"{unexpected[0]}{more}", f"{report.summary()}\nlogs: {pair_log.folder}")
    stale = [line for line in accepted if line not in report.breaking]
    if stale:
        raise ScenarioError(f"acknowledged drift no longer occurs (remove it from {ACKNOWLEDGED.name}): {stale[0]}")
