"""Fixtures of the compat harness: the builds under test, the pairing matrix, slow-matrix selection.

The matrix stacks two parameters: ``peer`` (a build: ``current``, ``released``, ``codex-0.169``) and
``direction`` (which side the peer serves: ``peer-is-exec`` pairs the current app-server with the
peer's exec-server, ``peer-is-app`` the reverse, ``peer-is-both`` runs the peer alone as a control).
The current build only pairs with itself once. Pairings needing a missing build skip with the reason.
Only a representative slice runs by default; the rest is ``slow`` (``PYCODEX_SLOW=1`` runs it).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

from compat_tests.support.builds import BUILD_NAMES, Build, Pairing, find_build
from compat_tests.support.processes import ProcessGroup

COMPAT_MARKER = "compat: version-skew pairings of pycodex and Codex builds run as black boxes (compat_tests/)"
DIRECTIONS = ("peer-is-exec", "peer-is-app", "peer-is-both")
#: Always run: pycodex with itself, and the current app-server driving Codex's exec-server.
REPRESENTATIVE = {("current", "peer-is-both"), ("codex-0.169", "peer-is-exec")}


def pytest_configure(config: pytest.Config) -> None:
    # Also belongs in pyproject's [tool.pytest.ini_options] markers (the lead's file); registering it
    # here keeps `pytest compat_tests` warning-free either way.
    config.addinivalue_line("markers", COMPAT_MARKER)


def _matrix() -> list[tuple[str, str]]:
    return [
        (peer, direction)
        for peer in BUILD_NAMES
        for direction in DIRECTIONS
        if peer != "current" or direction == "peer-is-both"
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if {"peer", "direction"} <= set(metafunc.fixturenames):
        params = []
        for peer, direction in _matrix():
            marks = [] if (peer, direction) in REPRESENTATIVE else [pytest.mark.slow]
            if peer == "codex-0.169":
                marks.append(pytest.mark.codex)
            params.append(pytest.param(peer, direction, marks=marks, id=f"{peer}-{direction}"))
        metafunc.parametrize(("peer", "direction"), params, indirect=["peer"])


@pytest.fixture
def peer(request: pytest.FixtureRequest) -> Build:
    build, reason = find_build(request.param)
    if build is None:
        pytest.skip(reason)
    return build


@pytest.fixture
def current_build() -> Build:
    build, _ = find_build("current")
    assert build is not None
    return build


@pytest.fixture
def pairing(peer: Build, direction: str, current_build: Build) -> Pairing:
    if direction == "peer-is-exec":
        return Pairing(current_build, peer, current_build)
    if direction == "peer-is-app":
        return Pairing(peer, current_build, current_build)
    return Pairing(peer, peer, current_build)


@pytest.fixture
async def process_group() -> AsyncIterator[ProcessGroup]:
    """The test's processes; whatever is still running at teardown is stopped by PID."""
    group = ProcessGroup()
    try:
        yield group
    finally:
        await group.stop_all()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYCODEX_SLOW") == "1":
        return
    skip_slow = pytest.mark.skip(reason="slow compat pairing: set PYCODEX_SLOW=1 to run it")
    here = os.path.dirname(__file__)
    for item in items:
        if "slow" in item.keywords and str(item.path).startswith(here):
            item.add_marker(skip_slow)
