"""Fixtures of the compat harness: the builds under test, the pairing matrix, one log folder per pair.

Each scenario module names its ``SCENARIO``; its tests take ``app_spec`` and ``exec_spec`` and are
parametrized over :func:`compat_tests.support.matrix.pairs` (ids ``app=SPEC,exec=SPEC``). A build that
cannot be had skips its pairs with the reason. Artifacts go to ``$PYCODEX_COMPAT_LOGS`` (``pycodex
compat --logs``), else under pytest's temporary directory; a failing test also writes ``cause.txt``.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Generator
from pathlib import Path

import pytest

from compat_tests.support.artifacts import PairLog
from compat_tests.support.builds import Build, Pairing, find_build
from compat_tests.support.matrix import default_slice, is_slow, log_dir, pair_id, pairs
from compat_tests.support.processes import ProcessGroup
from compat_tests.support.rpc import ScenarioError

COMPAT_MARKER = "compat: version-skew pairings of pycodex and Codex builds run as black boxes (compat_tests/)"


def pytest_configure(config: pytest.Config) -> None:
    # Also in pyproject's markers; registering it here keeps `pytest compat_tests` warning-free either way.
    config.addinivalue_line("markers", COMPAT_MARKER)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``slow`` tests run with ``PYCODEX_SLOW=1`` or when a matrix was asked for (``pycodex compat --all``,
    ``--app``/``--exec``), also when ``compat_tests`` is collected without the suite's own conftest."""
    if not default_slice():
        return
    skip = pytest.mark.skip(reason="slow test: set PYCODEX_SLOW=1 to run it")
    for item in items:
        if "slow" in item.keywords and item.path.is_relative_to(Path(__file__).parent):
            item.add_marker(skip)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if {"app_spec", "exec_spec"} <= set(metafunc.fixturenames):
        scenario = metafunc.module.SCENARIO
        params = []
        for app, exec_ in pairs(scenario):
            marks = [pytest.mark.codex] if "codex@" in f"{app} {exec_}".replace("pycodex@", "") else []
            if is_slow(scenario, app, exec_):
                marks.append(pytest.mark.slow)
            params.append(pytest.param(app, exec_, marks=marks, id=pair_id(app, exec_)))
        metafunc.parametrize(("app_spec", "exec_spec"), params)


def _build(spec: str) -> Build:
    build, reason = find_build(spec)
    if build is None:
        pytest.skip(reason)
    return build


@pytest.fixture
def app_build(app_spec: str) -> Build:
    return _build(app_spec)


@pytest.fixture
def exec_build(exec_spec: str) -> Build:
    return _build(exec_spec)


@pytest.fixture
def pairing(app_build: Build, exec_build: Build) -> Pairing:
    # The relay is test infrastructure (registry + rendezvous + capture): always this checkout's.
    return Pairing(app_build, exec_build, _build("current"))


@pytest.fixture
def pair_log(
    request: pytest.FixtureRequest, app_spec: str, exec_spec: str, tmp_path_factory: pytest.TempPathFactory
) -> PairLog:
    env_root = os.environ.get("PYCODEX_COMPAT_LOGS")
    root = Path(env_root) if env_root else tmp_path_factory.getbasetemp() / "compat-logs"
    return PairLog(log_dir(root, request.module.SCENARIO, app_spec, exec_spec))


@pytest.fixture
async def process_group() -> AsyncIterator[ProcessGroup]:
    """The test's processes; whatever is still running at teardown is stopped by PID."""
    group = ProcessGroup()
    try:
        yield group
    finally:
        await group.stop_all()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    log = getattr(item, "funcargs", {}).get("pair_log")
    if report.when == "call" and report.failed and isinstance(log, PairLog):
        exc = call.excinfo.value if call.excinfo else None
        cause = exc.cause if isinstance(exc, ScenarioError) else str(exc).strip().splitlines()[0:1]
        log.cause(cause if isinstance(cause, str) else (cause[0] if cause else "failed"))
    return report
