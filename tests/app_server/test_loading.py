"""app_server/loading.py is the one place that says what loads when, and it tells the truth.

- No import statement runs inside a function in ``app_server`` except the few listed here, each with its
  reason; everything else deferred is a ``LazyModule`` handle whose module loading.py declares with its group,
  next to the ``TYPE_CHECKING`` import of that same module.
- The groups agree with the start-up sets (which tests/app_server/test_app_server_startup_imports.py pins
  against a real ``pycodex app-server``): what is deferred is not loaded at start-up, and what is said to
  load after the answer is.
- The prewarm groups are what a first thread and a first turn need: once the after-handshake group has run,
  a first thread/start imports nothing more from ``app_server``, and once the after-first-thread group has
  too, neither does a first turn (checked in a fresh interpreter on the in-memory harness).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from app_server import loading
from app_server.lazy import LazyModule
from tests.support.paths import REPO_ROOT

#: The imports inside functions that stay, (file, module) -> why. Each must still occur.
LOCAL_IMPORTS: dict[tuple[str, str], str] = {
    ("app_server/main.py", "asyncio"): "stdlib, but the initialize answer is written before the event loop exists",
    ("app_server/main.py", "logging"): "stdlib, but not imported before the initialize answer",
    ("app_server/main.py", "pycodex.platform.spawn"): "imports asyncio, which waits until the answer is written",
    ("app_server/main.py", "pathlib"): "stdlib, only for a unix:// listener's path (not before the answer)",
    ("app_server/app.py", "app_server.config.trust"): "project trust, read when a thread's defaults are made",
    ("app_server/daemon/cli.py", "app_server.daemon"): "each daemon verb loads only its own part (lifecycle)",
    ("app_server/daemon/proxy.py", "app_server.daemon"): "the lifecycle, only when no daemon answers the proxy",
    ("app_server/daemon/proxy.py", "pycodex.codex_home"): "the wording of a refused CODEX_HOME, only when refused",
}

#: Outside app_server, the imports inside functions per file, and why they stay there.
OTHER_LOCAL_IMPORTS: dict[str, tuple[str, frozenset[str]]] = {
    "pycodex/cli.py": ("the subcommand table: each subcommand imports its own product when it is chosen, so "
                       "`pycodex --version` and `pycodex app-server` pay for no other, and `app-server proxy` for "
                       "nothing but itself (tests/pycodex/test_cli_imports.py)",
                       frozenset({
                           "pycodex.transport.ws_auth", "exec_server.cli", "relay.cli", "pycodex.trace.cli",
                           "pycodex.debug.threads", "pycodex.debug.config_show", "pycodex.mcp_cli.manage",
                           "pycodex.mcp_cli.server", "app_server.model.mock_server", "argparse", "pycodex.signals",
                           "app_server.main", "pycodex.compat_command", "pycodex.exec_cli.args",
                           "pycodex.logging_setup", "pycodex.exec_cli.run", "app_server.protocol.schema_export",
                           "app_server.protocol.typescript_export",
                           "asyncio", "pycodex.demo", "pycodex.debug.doctor", "app_server.app",
                           "pycodex.codex_home", "app_server.daemon.cli", "acp_agent.main",
                           "app_server.daemon.proxy", "pycodex.lean_imports", "pathlib",
                       })),
    "pycodex/trace/cli.py": ("each `pycodex trace` verb loads its own reader or renderer (rich only for `show`, "
                             "the OpenTelemetry SDK only for `export`)",
                             frozenset({"pycodex.trace.timeline", "pycodex.trace.replay", "pycodex.trace.html",
                                        "rich.console", "pycodex.trace.show", "pycodex.otel"})),
    "pycodex/debug/doctor.py": ("websockets only when the doctor probes a ws:// server",
                                frozenset({"asyncio", "websockets.asyncio.client"})),
    "pycodex/exec_cli/run.py": ("`pycodex exec` builds an in-process server only once its arguments parsed, "
                                "and connects to a running one only with --remote",
                                frozenset({"app_server.app", "pycodex.exec_cli.inproc", "app_server.daemon.cli",
                                           "pycodex.exec_cli.remote"})),
    "pycodex/exec_cli/remote.py": ("websockets only once `exec --remote` connects (checking the address needs none)",
                                   frozenset({"pycodex.transport.unix_paths", "pycodex.transport.websocket",
                                              "websockets.asyncio.client", "websockets.exceptions"})),
    "pycodex/signals.py": ("asyncio only when a loop's signals are wired; the initialize fast path imports this "
                           "module before the answer", frozenset({"asyncio"})),
    "pycodex/transport/ws_auth.py": ("PyJWT (and cryptography) only when a JWT is checked", frozenset({"jwt"})),
    "exec_client/environment.py": ("the wire models only once a remote environment answers",
                                   frozenset({"exec_client.wire"})),
    "exec_server/heap.py": ("ctypes only when the heap is trimmed", frozenset({"ctypes"})),
    "pycodex/otel/__init__.py": ("the OpenTelemetry SDK only when [otel] or OTEL_* export a signal",
                                 frozenset({"pycodex.otel"})),
    "pycodex/otel/exporters.py": ("grpcio only for an OTLP/gRPC exporter",
                                  frozenset({"grpc", "opentelemetry.exporter.otlp.proto.grpc.trace_exporter",
                                             "opentelemetry.exporter.otlp.proto.grpc.metric_exporter",
                                             "opentelemetry.exporter.otlp.proto.grpc._log_exporter"})),
    "exec_server/cli.py": ("the remote executor (registry client, Noise, httpx) only with --remote",
                           frozenset({"exec_server.remote.cli", "exec_server.remote.session_bridge"})),
}


def _local_imports(package: str = "app_server") -> set[tuple[str, str]]:
    """(file, imported module) for every import statement inside a function body in ``package``."""
    found: set[tuple[str, str]] = set()
    for path in sorted((REPO_ROOT / package).rglob("*.py")):
        rel = path.relative_to(REPO_ROOT).as_posix()
        for func in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Import):
                    found.update((rel, alias.name) for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    found.add((rel, "." * node.level + (node.module or "")))
    return found


def test_no_import_inside_a_function_but_the_listed_ones() -> None:
    assert _local_imports() == set(LOCAL_IMPORTS), (
        "defer a module with a LazyModule handle (app_server/lazy.py) declared in app_server/loading.py, or list the import "
        "here with why"
    )


def test_the_other_packages_keep_only_their_listed_local_imports() -> None:
    found: dict[str, set[str]] = {}
    for package in ("pycodex", "exec_client", "exec_server", "relay", "agent_api"):
        for rel, module in _local_imports(package):
            found.setdefault(rel, set()).add(module)
    assert found == {rel: set(modules) for rel, (_why, modules) in OTHER_LOCAL_IMPORTS.items()}


def _handles() -> list[tuple[str, str, str, str | None]]:
    """(file, handle, module it loads, module its TYPE_CHECKING import names) for every LazyModule handle."""
    found: list[tuple[str, str, str, str | None]] = []
    for path in sorted((REPO_ROOT / "app_server").rglob("*.py")):
        rel = path.relative_to(REPO_ROOT).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                continue
            typed: dict[str, str] = {}
            for st in node.body:
                if isinstance(st, ast.Import):
                    typed.update({a.asname or a.name: a.name for a in st.names})
                elif isinstance(st, ast.ImportFrom):
                    typed.update({a.asname or a.name: f"{st.module}.{a.name}" for a in st.names})
            for st in node.orelse:
                if (isinstance(st, ast.Assign) and isinstance(st.value, ast.Call)
                        and isinstance(st.value.func, ast.Name) and st.value.func.id == "LazyModule"):
                    handle = st.targets[0]
                    first = st.value.args[0]
                    assert isinstance(handle, ast.Name) and isinstance(first, ast.Constant), rel
                    found.append((rel, handle.id, str(first.value), typed.get(handle.id)))
    return found


def test_every_handle_is_declared_and_typed_as_the_module_it_loads() -> None:
    handles = _handles()
    assert len(handles) >= 20  # the scan sees the handles (a broken scan must not pass vacuously)
    for rel, handle, module, typed in handles:
        assert module in loading.DEFERRED, f"{rel}: {handle} loads {module}, which app_server/loading.py does not declare"
        assert typed == module, f"{rel}: {handle} is typed as {typed} but loads {module}"
    groups = {loading.DEFERRED[module].group for _rel, _handle, module, _typed in handles}
    assert groups == {loading.AFTER_ANSWER, loading.AFTER_HANDSHAKE, loading.AFTER_FIRST_THREAD, loading.ON_FIRST_USE}


def test_every_deferred_module_exists() -> None:
    names = loading.declared()
    for name in names:
        if name.split(".")[0] in {"app_server", "exec_client", "pycodex"}:
            path = REPO_ROOT / name.replace(".", "/")
            assert path.with_suffix(".py").is_file() or path.is_dir(), name


def test_the_groups_agree_with_the_start_up_sets() -> None:
    at_startup = loading.BEFORE_ANSWER | loading.AT_STARTUP
    assert loading.BEFORE_ANSWER.isdisjoint(loading.AT_STARTUP)
    after_answer = {m for m in loading.declared(loading.AFTER_ANSWER) if m.split(".")[0] == "app_server"}
    assert after_answer <= loading.AT_STARTUP, sorted(after_answer - loading.AT_STARTUP)
    later = {*loading.declared(loading.AFTER_HANDSHAKE), *loading.declared(loading.AFTER_FIRST_THREAD),
             *loading.declared(loading.ON_FIRST_USE)}
    assert sorted(later & at_startup) == [], "declared deferred but loaded at start-up"
    assert "app_server.lazy" in loading.BEFORE_ANSWER  # stdlib-only, and main declares its handles with it


def test_the_prewarm_lists_are_the_after_handshake_and_after_first_thread_groups() -> None:
    for group in (loading.AFTER_HANDSHAKE, loading.AFTER_FIRST_THREAD):
        names = tuple(name for name, d in loading.DEFERRED.items() if d.group == group)
        assert loading.prewarm_modules(group) == names
    assert loading.prewarm_modules() == loading.prewarm_modules(loading.AFTER_HANDSHAKE)
    assert {"app_server.handlers.threads", "app_server.model.clients"} <= set(loading.prewarm_modules())
    assert {"app_server.handlers.turns", "app_server.model.client"} <= set(
        loading.prewarm_modules(loading.AFTER_FIRST_THREAD)
    )


def test_a_lazy_module_imports_on_first_attribute_read() -> None:
    lazy = LazyModule("json.tool")
    assert lazy.main is sys.modules["json.tool"].main
    assert "json.tool" in repr(lazy)


FIRST_TURN = """
import asyncio, json, sys, tempfile
from pathlib import Path

from tests.support.appserver_memory import MemoryAppServerClient


async def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    (tmp / "home").mkdir()
    (tmp / "home" / "config.toml").write_text('model_provider = "scripted"')  # offline, asked for by name
    client = await MemoryAppServerClient.spawn(None, codex_home=tmp / "home", cwd=tmp)
    await client.initialize()
    client.app.prewarm_turns = lambda: None  # the thread alone: the turn's prewarm waits (see below)
    await client.app.thread_machinery()  # what thread/start waits for anyway
    before = set(sys.modules)
    thread_id = (await client.call("thread/start", {"cwd": str(tmp)}))["thread"]["id"]
    thread_new = sorted(name for name in set(sys.modules) - before if name.split(".")[0] == "app_server")
    del client.app.prewarm_turns
    await client.app.turn_machinery()  # what turn/start waits for anyway
    before = set(sys.modules)
    await client.call("turn/start", {"threadId": thread_id, "input": [{"type": "text", "text": "hi"}]})
    done = await client.wait_notification("turn/completed", timeout=30)
    turn_new = sorted(name for name in set(sys.modules) - before if name.split(".")[0] == "app_server")
    await client.close()
    print(json.dumps({"status": done["params"]["turn"]["status"], "thread": thread_new, "turn": turn_new}))


asyncio.run(main())
"""


def test_after_the_prewarms_a_first_thread_and_turn_import_nothing_more_from_app_server(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", FIRST_TURN], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(REPO_ROOT), "PYCODEX_LOG": "error"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["status"] == "completed"
    assert result["thread"] == [], "add these to the after-handshake group in app_server/loading.py"
    assert result["turn"] == [], "add these to the after-first-thread group in app_server/loading.py"
