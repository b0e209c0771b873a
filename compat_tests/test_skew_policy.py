"""The Skew policy of compat_tests/README.md, checked against the matrices (nothing is run here).

The pairs the policy says must work are in the matrix that runs them: the default slice (.ci/run) for
the Codex reference, the full matrix (``--all``, CI's compat workflow) for the supported pycodex
releases and the Codex neighbours; test_workflows.py checks the nightly codex@latest pairs.
"""

from __future__ import annotations

import pytest

from compat_tests.support.builds import releases
from compat_tests.support.matrix import CODEX_REFERENCE, SUPPORTED_RELEASES, pairs

FULL = {"PYCODEX_COMPAT_ALL": "1"}
CODEX_TESTED = ["codex@0.168.0", CODEX_REFERENCE, "codex@0.171.0"]


def _supported() -> list[str]:
    """The pycodex releases the checkout keeps working with, newest last."""
    return [f"pycodex@{version}" for version, _ in releases()[-SUPPORTED_RELEASES:]]


def test_the_policy_covers_two_releases_and_there_are_that_many() -> None:
    assert SUPPORTED_RELEASES == 2
    assert len(_supported()) == min(SUPPORTED_RELEASES, len(releases()))


@pytest.mark.parametrize("scenario", ["noise", "websocket", "storage"])
def test_current_pairs_both_ways_with_every_supported_release_and_tested_codex(scenario: str) -> None:
    full = set(pairs(scenario, FULL))
    for other in [*_supported(), *CODEX_TESTED]:
        assert {("current", other), (other, "current")} <= full, (scenario, other)


def test_the_default_slice_pairs_current_with_the_codex_reference() -> None:
    both = {("current", CODEX_REFERENCE), (CODEX_REFERENCE, "current")}
    assert both <= set(pairs("noise", {}))
    assert both <= set(pairs("storage", {}))
    assert ("current", CODEX_REFERENCE) in pairs("websocket", {})
    assert ("current", CODEX_REFERENCE) in pairs("drift", {})


def test_drift_runs_from_every_supported_release_and_to_every_tested_codex() -> None:
    full = set(pairs("drift", FULL))
    older, newest = _supported()[:-1], _supported()[-1]
    assert {(spec, "current") for spec in older} <= full
    assert ("pycodex@last", "current") in full and newest == f"pycodex@{releases()[-1][0]}"
    assert {("current", codex) for codex in CODEX_TESTED if codex != "codex@0.168.0"} <= full
