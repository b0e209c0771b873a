"""Every scenario of tests/support/apply_patch_cases.py through parse, plan and apply on real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.apply_patch_cases import SCENARIOS, Scenario, read_tree, run_ours, write_tree


@pytest.mark.parametrize("case", SCENARIOS, ids=[s.name for s in SCENARIOS])
async def test_scenario(case: Scenario, tmp_path: Path) -> None:
    write_tree(tmp_path, case.before)
    summary, error = await run_ours(tmp_path, case.patch)
    if case.error is not None:
        assert summary is None
        assert error == case.error.replace("{root}", str(tmp_path))
        # A refused patch writes nothing.
        assert read_tree(tmp_path) == case.before
    else:
        assert error is None
        assert summary == "Success. Updated the following files:\n" + (case.summary or "")
    if case.after is not None:
        assert read_tree(tmp_path) == case.after
