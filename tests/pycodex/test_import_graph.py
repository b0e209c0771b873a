"""The product packages' import graph has no cycles and no upward edges between layers.

The graph is read with `ast` (nothing is imported). Imports under ``if TYPE_CHECKING:`` never run, so they are
not edges for the layer rules; they are edges for the cycle check all the same (``type_edges``): a circle of
annotations is still two modules that cannot be understood, or moved, one without the other.
``from pkg import name`` is an edge to the module that defines ``name`` when ``pkg/__init__.py`` re-exports it
(or to the submodule ``pkg.name``), so a package's public surface does not hide what a module really
depends on.

Layers, lowest first: ``pycodex`` core (jsonrpc, transport, logging, signals) <- ``exec_client`` <-
``exec_server`` / ``relay``; ``app_server`` -> ``exec_client`` -> core. The executor and the relay see
only ``exec_client.wire`` (the shared wire), which itself imports nothing else from ``exec_client``.
Only the CLI entry module imports ``app_server``; ``compat_tests`` drives builds as black boxes and
imports no product package.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.support.paths import REPO_ROOT

PACKAGES = ("pycodex", "exec_client", "exec_server", "relay", "app_server", "agent_api", "acp_agent", "compat_tests")

# Modules of the `pycodex` package that sit on top of everything (they wire the products together).
ENTRY_MODULES = frozenset({"pycodex.cli", "pycodex.__main__", "pycodex.demo", "pycodex.demo_remote"})
# Subcommand packages of the CLI that drive a product in-process (`pycodex exec` runs an app-server).
ENTRY_PACKAGES = ("pycodex.exec_cli", "pycodex.debug", "pycodex.mcp_cli")
# Top-level packages that are a CLI subcommand (`pycodex acp` runs an app-server and hands it the editor).
ENTRY_TOP_PACKAGES = frozenset({"acp_agent"})

# layer -> the layers it may import (besides itself).
ALLOWED: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "exec_client": frozenset({"core"}),
    "exec_server": frozenset({"core", "exec_client"}),
    "relay": frozenset({"core", "exec_client"}),
    "app_server": frozenset({"core", "exec_client"}),
    "agent_api": frozenset({"core"}),
    "compat_tests": frozenset(),
    "entry": frozenset({"core", "exec_client", "exec_server", "relay", "app_server", "agent_api"}),
}

# The executor (exec_server) and the relay may use exec_client's wire subpackage, never its harness side.
WIRE_PACKAGE = "exec_client.wire"

# Edges that break a rule today and need a change in another package to go away. Each entry says why it is
# still here; the test fails if one of them no longer occurs, so the list cannot go stale.
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Module:
    name: str
    path: Path

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"


@cache
def modules() -> dict[str, Module]:
    found: dict[str, Module] = {}
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = Module(".".join(parts), path)
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(nodes: Iterable[ast.AST]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that can run (function bodies and except blocks too), minus TYPE_CHECKING ones."""
    for node in nodes:
        if isinstance(node, ast.If) and _is_type_checking(node):
            yield from _runtime_imports(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _runtime_imports(ast.iter_child_nodes(node))


def _all_imports(nodes: Iterable[ast.AST]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, those under ``if TYPE_CHECKING:`` included."""
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        yield from _all_imports(ast.iter_child_nodes(node))


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].path.read_text(encoding="utf-8"))


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _owner(name: str) -> str | None:
    """The product module that holds dotted `name` (the longest known prefix)."""
    known = modules()
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


@cache
def _reexports(package: str) -> dict[str, str]:
    """Names a package's __init__ imports from its own modules: name -> defining module."""
    module = modules()[package]
    found: dict[str, str] = {}
    for node in _tree(package).body:
        if isinstance(node, ast.ImportFrom):
            source = _absolute(module, node)
            for alias in node.names:
                target = _resolve_from(source, alias.name)
                if target is not None:
                    found[alias.asname or alias.name] = target
    return found


# A deferred module is a handle, `name = LazyModule("dotted.module")` (app_server/lazy.py), beside the
# TYPE_CHECKING import of that module: using it is a runtime edge to that module, imported on first use.
@cache
def _lazy_targets(name: str) -> frozenset[str]:
    """The modules ``name`` holds LazyModule handles for."""
    found: set[str | None] = set()
    for node in ast.walk(_tree(name)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "LazyModule"
                and node.args and isinstance(first := node.args[0], ast.Constant) and isinstance(first.value, str)):
            found.add(_owner(first.value))
    return frozenset(t for t in found if t is not None)


def _resolve_from(source: str, name: str) -> str | None:
    known = modules()
    if f"{source}.{name}" in known:
        return f"{source}.{name}"
    if source in known and known[source].is_package and name in _reexports(source):
        return _reexports(source)[name]
    return _owner(source)


def _graph(
    imports: Callable[[Iterable[ast.AST]], Iterator[ast.Import | ast.ImportFrom]]
) -> dict[str, frozenset[str]]:
    graph: dict[str, frozenset[str]] = {}
    for name, module in modules().items():
        targets: set[str | None] = set()
        for node in imports([_tree(name)]):
            if isinstance(node, ast.Import):
                targets.update(_owner(alias.name) for alias in node.names)
            else:
                source = _absolute(module, node)
                targets.update(_resolve_from(source, alias.name) for alias in node.names)
        targets |= _lazy_targets(name)
        graph[name] = frozenset(t for t in targets if t is not None and t != name)
    return graph


@cache
def edges() -> dict[str, frozenset[str]]:
    """Runtime import edges (what the layer rules and the runtime cycle check see)."""
    return _graph(_runtime_imports)


@cache
def type_edges() -> dict[str, frozenset[str]]:
    """Every import edge, ``if TYPE_CHECKING:`` ones included (what the type-level cycle check sees)."""
    return _graph(_all_imports)


def layer(name: str) -> str:
    top = name.split(".")[0]
    if top in ENTRY_TOP_PACKAGES:
        return "entry"
    if top == "pycodex":
        is_entry = name in ENTRY_MODULES or any(name == p or name.startswith(p + ".") for p in ENTRY_PACKAGES)
        return "entry" if is_entry else "core"
    return top


def cycles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _in_wire(name: str) -> bool:
    return name == WIRE_PACKAGE or name.startswith(WIRE_PACKAGE + ".")


def violations() -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for source, targets in edges().items():
        for target in targets:
            src, dst = layer(source), layer(target)
            if dst == "app_server" and src not in {"app_server", "entry"}:
                found[(source, target)] = "only the CLI and its subcommands import app_server"
            elif src != dst and dst not in ALLOWED[src]:
                found[(source, target)] = f"layer {src} may not import layer {dst}"
            elif src in {"exec_server", "relay"} and dst == "exec_client" and not _in_wire(target):
                found[(source, target)] = f"exec_server and relay import only {WIRE_PACKAGE}, not the harness side"
            elif _in_wire(source) and dst == "exec_client" and not _in_wire(target):
                found[(source, target)] = f"{WIRE_PACKAGE} imports nothing from the harness side"
    return found


# ---- the checker itself -----------------------------------------------------------------------


def test_the_graph_sees_real_edges_and_skips_type_checking_ones() -> None:
    graph = edges()
    assert "pycodex.jsonrpc.errors" in graph["exec_client.wire.errors"]
    assert "app_server.main" in graph["pycodex.cli"]  # imports inside functions count
    # the handler context names its services for annotations only, under TYPE_CHECKING
    assert "app_server.threads.manager" not in graph["app_server.context"]
    assert "app_server.threads.manager" in type_edges()["app_server.context"]
    # `from app_server.model import errors` is an edge to the submodule, not to the package
    assert "app_server.model.errors" in graph["app_server.model.client"]
    assert "app_server.model" not in graph["app_server.model.client"]
    # the executor reaches the registry shapes in the wire, not through exec_client.remote's re-exports
    assert "exec_client.wire.registry" in graph["exec_server.remote.registration"]


def test_runtime_imports_include_nested_blocks_but_not_type_checking_ones() -> None:
    source = """
import a
if TYPE_CHECKING:
    import hidden
else:
    import b
try:
    import c
except ImportError:
    import d
def f():
    from e import g
"""
    found = [alias.name for node in _runtime_imports([ast.parse(source)]) for alias in node.names]
    assert found == ["a", "b", "c", "d", "g"]


def test_the_type_level_reader_sees_type_checking_imports_too() -> None:
    source = """
import a
if TYPE_CHECKING:
    from hidden import Contract
def f():
    import b
"""
    found = [alias.name for node in _all_imports([ast.parse(source)]) for alias in node.names]
    assert found == ["a", "Contract", "b"]


def test_cycle_detection_finds_a_cycle_and_only_the_cycle() -> None:
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"})}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": frozenset({"b"}), "b": frozenset()}) == []


# ---- the rules --------------------------------------------------------------------------------


def test_a_deferred_module_is_an_edge_to_that_module() -> None:
    assert "app_server.mcp.manager" in _lazy_targets("app_server.mcp.service")
    assert "app_server.mcp.manager" in edges()["app_server.mcp.service"]  # a runtime edge, though imported late
    # loading.py only says when modules load: it imports none of them, at any level.
    assert type_edges()["app_server.loading"] == frozenset()
    assert "app_server.loading" not in type_edges()["app_server.mcp.service"]


def test_there_are_no_import_cycles() -> None:
    assert cycles(edges()) == []


def test_there_are_no_type_level_import_cycles() -> None:
    """Imports under ``if TYPE_CHECKING:`` count too: a contract two modules share lives in a leaf module."""
    assert cycles(type_edges()) == []


def test_handlers_and_their_contracts_never_name_the_server() -> None:
    """Handlers get a HandlerContext: nothing under handlers/, nor the contracts, imports app_server.app."""
    graph = type_edges()
    contracts = (
        "app_server.context", "app_server.session", "app_server.surface_state",
        "app_server.protocol.declarations", "app_server.protocol.method_table", "app_server.router",
    )
    importers = sorted(
        name for name, targets in graph.items()
        if (name.startswith("app_server.handlers") or name in contracts) and "app_server.app" in targets
    )
    assert importers == []


def test_no_layer_imports_upward_beyond_the_known_violations() -> None:
    found = violations()
    new = {edge: why for edge, why in found.items() if edge not in KNOWN_VIOLATIONS}
    assert new == {}, "new layering violations (fix them; do not add them to KNOWN_VIOLATIONS lightly)"


def test_every_known_violation_still_occurs() -> None:
    stale = sorted(set(KNOWN_VIOLATIONS) - set(violations()))
    assert stale == [], "fixed: remove these from KNOWN_VIOLATIONS"


def test_compat_tests_import_no_product_package() -> None:
    product = {edge for edge in violations() if edge[0].startswith("compat_tests")}
    assert product == set()
