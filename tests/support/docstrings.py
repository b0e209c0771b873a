"""Which public definitions of a package lack a docstring (read with ``ast``; nothing is imported).

Public means: a module whose own name and whose package path hold no leading underscore, and in it every
class, function and method whose name does not start with ``_`` (dunders other than ``__init__`` are left
out: their meaning is the language's). A method of a private class is not public. Protocol models count:
a pydantic model is a public class, and its docstring is what the schema export prints as its description.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import REPO_ROOT

__all__ = ["missing_docstrings"]


def _public_module(path: Path) -> bool:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return not any(part.startswith("_") and part != "__init__" for part in parts)


def _walk(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, ast.AST]]:
    for node in body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("_"):
                continue
            yield f"{prefix}{node.name}", node
            if isinstance(node, ast.ClassDef):
                yield from _walk(node.body, f"{prefix}{node.name}.")


def missing_docstrings(*packages: str) -> list[str]:
    """``path:line name`` of every public module, class or function under ``packages`` with no docstring.

    ``packages`` are paths relative to the repository root (``"pycodex/transport"``, or one file).
    Overloads (``@overload``) and ``@property`` setters share the docstring of the definition they belong to.
    """
    missing: list[str] = []
    for package in packages:
        root = REPO_ROOT / package
        paths = [root] if root.is_file() else sorted(root.rglob("*.py"))
        for path in paths:
            if not _public_module(path):
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            rel = path.relative_to(REPO_ROOT)
            if ast.get_docstring(tree) is None and tree.body:
                missing.append(f"{rel}:1 (module)")
            for name, node in _walk(tree.body, ""):
                assert isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                decorators = {ast.unparse(d) for d in node.decorator_list}
                if "overload" in decorators or "typing.overload" in decorators:
                    continue
                if any(d.endswith(".setter") or d.endswith(".deleter") for d in decorators):
                    continue
                if ast.get_docstring(node) is None:
                    missing.append(f"{rel}:{node.lineno} {name}")
    return missing
