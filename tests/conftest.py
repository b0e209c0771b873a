"""Session fixtures shared by the test suite: the reference Codex binary, its schema, app-server clients."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.support.appserver import AppServerClient, ValidatingClient
from tests.support.appserver_process import write_codex_config
from tests.support.appserver_ws import WsAppServerClient
from tests.support.schema import SchemaPair, SchemaValidator, find_codex_bin, load_schema_pair

# A closed port on loopback: model requests fail fast with "connection refused" instead of reaching anything.
DEAD_MODEL_URL = "http://127.0.0.1:9/v1"
TEARDOWN_DEADLINE = 20.0


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("PYCODEX_SLOW") == "1":
        return
    skip_slow = pytest.mark.skip(reason="slow test: set PYCODEX_SLOW=1 to run it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The reference Codex 0.169.0 binary (`$PYCODEX_CODEX_BIN` or the npm copy); skips when absent."""
    found = find_codex_bin()
    if found is None:
        pytest.skip("reference Codex binary not installed (npm install, or set PYCODEX_CODEX_BIN)")
    return found


@pytest.fixture(scope="session")
def codex_schemas(codex_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> SchemaPair:
    """Stable and `--experimental` schema bundles, generated once per session by the reference binary."""
    return load_schema_pair(codex_bin, tmp_path_factory.mktemp("codex_schema"))


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
        found = find_codex_bin()
        if found is None:
            pytest.skip("PYCODEX_TEST_TARGET=codex but the Codex binary is not installed")
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


def _factory(
    kind: type[AppServerClient] | type[WsAppServerClient],
    clients: list[ValidatingClient],
    schemas: SchemaPair,
    default_argv: list[str] | None,
    default_home: Path,
    default_cwd: Path,
) -> Callable[..., Awaitable[Any]]:
    async def start(
        *extra_args: str,
        argv: Sequence[str] | None = None,
        env: dict[str, str | None] | None = None,
        cwd: Path | None = None,
        codex_home: Path | None = None,
        initialize: bool = True,
        experimental: bool = False,
        opt_out: Sequence[str] | None = None,
    ) -> Any:
        client = await kind.spawn(
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
) -> AsyncIterator[Callable[..., Awaitable[AppServerClient]]]:
    """`await app_server(*extra_args, initialize=True, experimental=False, ...)` -> a started stdio client.

    Every client is closed at teardown (stdin EOF, then TERM/KILL) and its protocol violations are raised.
    """
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
