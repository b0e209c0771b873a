"""The exec side's modules import one another without a cycle, type-level imports included.

``tests/test_import_graph.py`` checks the runtime graph of every product package. This test is stricter for
the exec side (the exec-server, its client and wire, the relay, the agent API and the core's transport,
JSON-RPC and platform modules): an import under ``if TYPE_CHECKING:`` or inside a function is an edge too,
because a type-level circle is still two modules that cannot be understood (or moved) one without the other.
The graph is read with ``ast``; nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import REPO_ROOT

# The exec side: packages (or single modules) whose internal imports must form a DAG.
EXEC_SIDE = (
    "exec_server",
    "exec_client",
    "relay",
    "agent_api",
    "pycodex/transport",
    "pycodex/jsonrpc",
    "pycodex/platform",
    "pycodex/signals.py",
    "pycodex/logging_setup.py",
    "pycodex/log_context.py",
)


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for entry in EXEC_SIDE:
        root = REPO_ROOT / entry
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _absolute(name: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _reexports(modules: dict[str, Path], package: str) -> dict[str, str]:
    """Names ``package/__init__.py`` imports from its own submodules: name -> defining module."""
    found: dict[str, str] = {}
    path = modules[package]
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom):
            source = _absolute(package, path, node)
            if source.startswith(f"{package}.") and source in modules:
                for alias in node.names:
                    found[alias.asname or alias.name] = source
    return found


def _edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        # ``ast.walk`` sees every import: top level, TYPE_CHECKING blocks and function bodies alike.
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(name, path, node)
                reexported = _reexports(modules, source) if source in modules else {}
                for alias in node.names:
                    if f"{source}.{alias.name}" in modules:
                        targets.append(f"{source}.{alias.name}")
                    else:
                        targets.append(reexported.get(alias.name, source))
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_exec_side_imports_form_no_cycle() -> None:
    assert _cycles(_edges(_modules())) == []


def test_the_reader_sees_a_type_level_cycle() -> None:
    # The checker itself: a circle closed only under TYPE_CHECKING is still found.
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert _cycles(graph) == [["a", "b"]]
