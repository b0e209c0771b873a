"""The service packages (threads, tools, store, model, MCP, config...) import without a cycle, type-level too.

`tests/test_import_graph.py` checks the whole product at run time; this test is narrower and stricter: imports
under ``if TYPE_CHECKING:`` are edges too, because a cycle there still means two modules cannot be understood
(or moved) apart. The contracts the tools and the thread state share live in leaf modules
(`app_server/threads/contracts.py`, `app_server/tools/contracts.py`) so that no such cycle is needed.

The graph is read with `ast` (nothing is imported). ``from pkg import name`` is an edge to the submodule
``pkg.name`` when there is one, else to the module that ``pkg/__init__.py`` takes ``name`` from, else to
``pkg`` itself.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from tests.support.paths import REPO_ROOT

PACKAGES = (
    "app_server/threads",
    "app_server/tools",
    "app_server/store",
    "app_server/model",
    "app_server/mcp",
    "app_server/config",
    "app_server/search",
    "app_server/skills",
)
SINGLE_MODULES = ("app_server/environments.py", "app_server/notify.py", "app_server/truncation.py")


@cache
def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    paths = [p for pkg in PACKAGES for p in sorted((REPO_ROOT / pkg).rglob("*.py"))]
    paths += [REPO_ROOT / m for m in SINGLE_MODULES]
    for path in paths:
        parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _absolute(name: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


@cache
def _reexports(package: str) -> dict[str, str]:
    """Names `package/__init__.py` imports from its own modules: name -> module."""
    path = _modules()[package]
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            source = _absolute(package, path, node)
            for alias in node.names:
                if source in _modules() and source != package:
                    found[alias.asname or alias.name] = source
    return found


def _targets(name: str, path: Path, node: ast.Import | ast.ImportFrom) -> set[str]:
    known = _modules()
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name in known}
    source = _absolute(name, path, node)
    found: set[str] = set()
    for alias in node.names:
        submodule = f"{source}.{alias.name}"
        if submodule in known:
            found.add(submodule)
        elif source in known:
            found.add(_reexports(source).get(alias.name, source) if source != name else source)
    return found


@cache
def graph() -> dict[str, frozenset[str]]:
    """Every module of the packages above -> the modules of the same set it imports (any import, anywhere)."""
    edges: dict[str, frozenset[str]] = {}
    for name, path in _modules().items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                found |= _targets(name, path, node)
        found.discard(name)
        edges[name] = frozenset(found)
    return edges


def cycles(edges: dict[str, frozenset[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_graph_reads_the_packages() -> None:
    edges = graph()
    assert "app_server.threads.state" in edges
    # A type-level edge counts: the thread state names PendingRequest only under TYPE_CHECKING.
    assert "app_server.tools.pending" in edges["app_server.threads.state"]
    assert "app_server.threads.contracts" in edges["app_server.tools.pending"]


def test_no_cycle_type_level_included() -> None:
    assert cycles(graph()) == []


def test_cycle_finder_finds_a_cycle() -> None:
    toy = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"})}
    assert cycles(toy) == [["a", "b", "c"]]
