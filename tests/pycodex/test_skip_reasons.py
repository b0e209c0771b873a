"""Every missing tool skips with one text: the reasons live in tests/support/tools.py and nowhere else.

A test that needs the Codex binary, tmux, chromium, the shared scripts or Landlock calls ``require_*()`` or
uses ``skip_without_*``; a hand-written ``pytest.skip("... not installed")`` elsewhere would add a second
line for the same tool to the end-of-run summary.
"""

from __future__ import annotations

import ast
import re

from tests.support.paths import REPO_ROOT

TESTS = REPO_ROOT / "tests"
HOME = TESTS / "support" / "tools.py"
#: Wordings that say a tool or a kernel feature is missing.
MISSING = re.compile(r"not installed|on PATH|no Landlock|Landlock ABI|is missing|not available|binary not", re.I)
SKIPS = {"skip", "skipif", "importorskip"}


def _reasons(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name not in SKIPS:
            continue
        texts = [*node.args, *(kw.value for kw in node.keywords if kw.arg == "reason")]
        for text in texts:
            for const in ast.walk(text):
                if isinstance(const, ast.Constant) and isinstance(const.value, str):
                    found.append((node.lineno, const.value))
    return found


def test_missing_tool_skip_reasons_come_only_from_tests_support_tools() -> None:
    strays = [
        f"{path.relative_to(REPO_ROOT)}:{line}: {text!r}"
        for path in sorted(TESTS.rglob("*.py"))
        if path != HOME and "data" not in path.relative_to(TESTS).parts
        for line, text in _reasons(ast.parse(path.read_text(), str(path)))
        if MISSING.search(text)
    ]
    assert strays == [], "use tests.support.tools (require_* / skip_without_*):\n" + "\n".join(strays)
