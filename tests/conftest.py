"""Session fixtures shared by the test suite: the reference Codex binary, its schema, app-server clients.

Only `codex`-marked tests may touch the live binary; the schema every client validates against is the snapshot
in tests/data, so the rest of the suite runs without npm.

`app_server` runs our server in the test's event loop over the in-memory edge; `app_server(subprocess=True)`
(or `app_server_process`, or PYCODEX_TEST_HARNESS=process for everything) spawns `pycodex app-server` on
stdio instead, as the tests of a real process need (stdin EOF, signals, crashes, the process's stderr), and
as PYCODEX_TEST_TARGET=codex always does. Every process a test spawns is in its own process group, and the
groups still alive after a test module (a timed-out test, a leaked grandchild) are killed.
"""

from __future__ import annotations

import asyncio
import atexit
import compileall
import os
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.appserver import AppServerClient, ValidatingClient
from tests.support.appserver_memory import MemoryAppServerClient
from tests.support.appserver_process import write_codex_config
from tests.support.appserver_ws import WsAppServerClient
from tests.support.paths import REPO_ROOT
from tests.support.procs import GROUPS
from tests.support.schema import SchemaPair, SchemaValidator, load_schema_pair
from tests.support.tools import require_codex

#: The packages the product is made of: their modules are what spawned processes import.
PRODUCT_PACKAGES = ("pycodex", "app_server", "exec_client", "exec_server", "relay", "agent_api")
# Fixtures that hand a test the live Codex binary: a test requesting one must say so with `@pytest.mark.codex`.
CODEX_FIXTURES = frozenset({"codex_bin"})

# A closed port on loopback: model requests fail fast with "connection refused" instead of reaching anything.
DEAD_MODEL_URL = "http://127.0.0.1:9/v1"
TEARDOWN_DEADLINE = 20.0
#: PYCODEX_TEST_HARNESS=process runs every `app_server` test against a spawned process (the old default).
HARNESS_ENV = "PYCODEX_TEST_HARNESS"
LEFTOVERS = pytest.StashKey[list[str]]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[LEFTOVERS] = []
    atexit.register(GROUPS.sweep)  # an interrupted session (Ctrl-C, an internal error) still cleans up
    if not hasattr(config, "workerinput"):  # once per run: in the xdist controller, before its workers start
        compile_product()


def compile_product() -> None:
    """Write the bytecode of every product module that has none or a stale one.

    The suite starts hundreds of `python -m pycodex` (and exec-server, mock-model, ...) processes. Where
    PYTHONDONTWRITEBYTECODE is set (it is in some CI images) or the sources just changed, each of them would
    compile the product's modules from source again (~0.3 s of CPU per process). py_compile writes the files
    whatever that variable says; up-to-date ones are only stat'ed."""
    for package in PRODUCT_PACKAGES:
        compileall.compile_dir(REPO_ROOT / package, quiet=2)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    """After the last test of a module (its module fixtures are gone by then), kill every process group
    a test started that still has members: what a timed-out or failed test left behind."""
    yield
    if nextitem is None or getattr(nextitem, "module", None) is not getattr(item, "module", None):
        for pgid, pids in GROUPS.sweep().items():
            item.config.stash[LEFTOVERS].append(f"{item.nodeid}: process group {pgid} still had {pids}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    for pgid, pids in GROUPS.sweep().items():
        session.config.stash[LEFTOVERS].append(f"session end: process group {pgid} still had {pids}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unmarked = [
        item.nodeid
        for item in items
        if CODEX_FIXTURES & set(getattr(item, "fixturenames", ())) and item.get_closest_marker("codex") is None
    ]
    if unmarked:
        raise pytest.UsageError(f"tests use the Codex binary without @pytest.mark.codex: {unmarked[:10]}")
    if os.environ.get("PYCODEX_SLOW") == "1":
        return
    skip_slow = pytest.mark.skip(reason="slow test: set PYCODEX_SLOW=1 to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """One line per distinct skip reason with its count, so a CI log shows what did not run and why; and
    the process groups the sweep had to kill (a test that leaks processes)."""
    leftovers = config.stash.get(LEFTOVERS, [])
    if leftovers:
        terminalreporter.write_sep("-", f"{len(leftovers)} leaked process groups killed")
        for line in leftovers:
            terminalreporter.write_line(line)
    reports = terminalreporter.stats.get("skipped", [])
    reasons: Counter[str] = Counter()
    for report in reports:
        longrepr = report.longrepr
        # A skip's longrepr is (file, line, "Skipped: reason"); strip the prefix pytest adds.
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[reason.removeprefix("Skipped: ")] += 1
    if not reasons:
        return
    terminalreporter.write_sep("-", f"{sum(reasons.values())} skipped")
    for reason, count in reasons.most_common():
        terminalreporter.write_line(f"{count:5d} skipped: {reason}")


@pytest.fixture(scope="session")
def _empty_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module", autouse=True)
def hermetic_home(_empty_home: Path) -> Generator[Path]:
    """$HOME is an empty folder while a module of tests/ runs (restored after it, so compat_tests/ in the same
    worker keep the real one).

    Every app-server a test starts runs a login shell (its shell snapshot, begun at the handshake), and that
    shell reads the runner's ~/.profile and ~/.bashrc: on a machine whose profile runs `pyenv init` that is
    ~50 processes and up to a second per server, and whatever the profile prints or exports would reach the
    test. The runner's `~/.agents/skills` and git config stay out too; tests that need git identities set
    them (GIT_AUTHOR_NAME, ...), tests that need a $HOME of their own still set one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(_empty_home))
        yield _empty_home


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The reference Codex 0.169.0 binary (`$PYCODEX_CODEX_BIN` or the npm copy); skips when absent."""
    found = require_codex()
    return found


@pytest.fixture(scope="session")
def codex_schemas() -> SchemaPair:
    """Stable and `--experimental` schema bundles of Codex 0.169.0, from the snapshot in tests/data."""
    return load_schema_pair()


@pytest.fixture(scope="session")
def codex_schema(codex_schemas: SchemaPair) -> SchemaValidator:
    """The stable (non-experimental) schema, what a client without `experimentalApi` is promised."""
    return codex_schemas.stable


@pytest.fixture
def codex_home(tmp_path: Path) -> Path:
    """A fresh CODEX_HOME with a config.toml whose model provider points at a dead loopback port."""
    home = tmp_path / "codex_home"
    write_codex_config(home, base_url=DEAD_MODEL_URL)
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The app-server's working directory."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def app_server_argv() -> list[str] | None:
    """Which server the protocol tests drive: ours by default, the reference with PYCODEX_TEST_TARGET=codex."""
    target = os.environ.get("PYCODEX_TEST_TARGET", "pycodex")
    if target == "pycodex":
        return None
    if target == "codex":
        found = require_codex()
        return [str(found), "app-server"]
    raise pytest.UsageError(f"PYCODEX_TEST_TARGET must be 'pycodex' or 'codex', not {target!r}")


async def _close_all(clients: list[ValidatingClient]) -> None:
    """Close every client even if one fails; then report the first failure."""
    errors: list[BaseException] = []
    for client in reversed(clients):
        try:
            await asyncio.wait_for(client.close(), TEARDOWN_DEADLINE)
        except BaseException as exc:
            errors.append(exc)
    if errors:
        raise errors[0]


ClientKind = type[AppServerClient] | type[WsAppServerClient] | type[MemoryAppServerClient]


def _factory(
    kind: ClientKind,
    clients: list[ValidatingClient],
    schemas: SchemaPair,
    default_argv: list[str] | None,
    default_home: Path,
    default_cwd: Path,
    process_kind: ClientKind | None = None,
) -> Callable[..., Awaitable[Any]]:
    async def start(
        *extra_args: str,
        subprocess: bool = False,
        argv: Sequence[str] | None = None,
        env: dict[str, str | None] | None = None,
        cwd: Path | None = None,
        codex_home: Path | None = None,
        initialize: bool = True,
        experimental: bool = False,
        opt_out: Sequence[str] | None = None,
    ) -> Any:
        # Another binary (`argv`, PYCODEX_TEST_TARGET=codex) can only run as a process.
        wants_process = subprocess or argv is not None or default_argv is not None
        chosen = process_kind if process_kind is not None and wants_process else kind
        client = await chosen.spawn(
            schemas,
            codex_home=codex_home or default_home,
            cwd=cwd or default_cwd,
            argv=argv if argv is not None else default_argv,
            extra_args=extra_args,
            env=env,
        )
        clients.append(client)
        if initialize:
            await client.initialize(experimental=experimental, opt_out=opt_out)
        return client

    return start


@pytest.fixture
async def app_server(
    codex_schemas: SchemaPair, codex_home: Path, workspace: Path, app_server_argv: list[str] | None
) -> AsyncIterator[Callable[..., Awaitable[MemoryAppServerClient | AppServerClient]]]:
    """`await app_server(*extra_args, initialize=True, experimental=False, subprocess=False, ...)` -> a client.

    In-memory by default; `subprocess=True` (and PYCODEX_TEST_TARGET=codex, PYCODEX_TEST_HARNESS=process)
    spawns the server on stdio. Every client is closed at teardown and its protocol violations are raised.
    """
    clients: list[ValidatingClient] = []
    memory = os.environ.get(HARNESS_ENV, "memory") != "process"
    default = MemoryAppServerClient if memory else AppServerClient
    yield _factory(default, clients, codex_schemas, app_server_argv, codex_home, workspace, AppServerClient)
    await _close_all(clients)


@pytest.fixture
async def app_server_process(
    codex_schemas: SchemaPair, codex_home: Path, workspace: Path, app_server_argv: list[str] | None
) -> AsyncIterator[Callable[..., Awaitable[AppServerClient]]]:
    """Like `app_server`, always a spawned process on stdio (stdin EOF, signals, crashes, real stderr)."""
    clients: list[ValidatingClient] = []
    yield _factory(AppServerClient, clients, codex_schemas, app_server_argv, codex_home, workspace)
    await _close_all(clients)


@pytest.fixture
async def app_server_ws(
    codex_schemas: SchemaPair, codex_home: Path, workspace: Path, app_server_argv: list[str] | None
) -> AsyncIterator[Callable[..., Awaitable[WsAppServerClient]]]:
    """Like `app_server`, but the server listens on `ws://127.0.0.1:<free port>` and the client uses websocket."""
    clients: list[ValidatingClient] = []
    yield _factory(WsAppServerClient, clients, codex_schemas, app_server_argv, codex_home, workspace)
    await _close_all(clients)


@pytest.fixture
async def fake_model(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[Any]]]:
    """Start fake Responses servers with a script: ``model = await fake_model([...])``."""
    from tests.support.fake_model import FakeModel

    started: list[FakeModel] = []

    async def start(script: Any, name: str = "model") -> FakeModel:
        model = await FakeModel.start(script, tmp_path / name)
        started.append(model)
        return model

    yield start
    for model in started:
        await model.stop()
