"""The error-code registry (app_server/errors.py) and docs/errors.md agree, and every declared code is live.

* docs/errors.md lists exactly the codes the registry can emit, with the same members and meanings;
* every pycodex rule matches the message of some error the product raises (its source is scanned for the
  messages given to error constructors), and every Codex data value is built by some handler, so the
  registry declares no dead code;
* a few classifications on their own: Codex's data passes untouched, ids become members, the JSON-RPC code
  is the fallback.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from app_server.errors import (
    APP_CODES,
    APP_ERROR_CODE,
    CODEX_CODES,
    FALLBACK_CODES,
    OTHER_CODE,
    AppCode,
    classify,
    error_wire,
)
from pycodex.jsonrpc.errors import InternalError, InvalidParams, InvalidRequest, RpcError, ServerOverloaded
from tests.support.paths import REPO_ROOT

DOC = REPO_ROOT / "docs" / "errors.md"
#: Where the messages of app-server errors are written (the JSON-RPC core words serde's params errors).
SOURCES = [REPO_ROOT / "app_server", REPO_ROOT / "pycodex" / "jsonrpc"]
ROW = re.compile(r"^\| (.*) \|$")


def doc_rows(heading: str) -> list[list[str]]:
    """The body rows of the first table under ``heading``, cells stripped."""
    lines = DOC.read_text(encoding="utf-8").splitlines()
    start = lines.index(heading)
    rows: list[list[str]] = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        match = ROW.match(line)
        if match:
            rows.append([cell.strip() for cell in match.group(1).split("|")])
    assert len(rows) > 2, f"no table under {heading}"
    return rows[2:] if rows[1][0].startswith("---") else rows[1:]  # past the header and its rule


def ticked(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def members(code: AppCode) -> list[str]:
    found: list[str] = []
    for pattern in code.patterns:
        found += [name for name in pattern.groupindex if name not in found]
    return found


def all_app_codes() -> dict[str, AppCode]:
    codes: dict[str, AppCode] = {}
    for code in (*APP_CODES, *FALLBACK_CODES.values(), OTHER_CODE):
        codes.setdefault(code.name, code)  # a fallback may share a rule's name (invalid_params)
        assert codes[code.name].meaning == code.meaning, f"{code.name}: two meanings"
    return codes


def test_the_doc_lists_codexs_data_exactly() -> None:
    rows = doc_rows("## Codex's error data")
    documented = [(ticked(key)[0], ticked(value)[0], meaning) for key, value, meaning in rows]
    assert documented == [(c.key, c.value, c.meaning) for c in CODEX_CODES]


def test_the_doc_lists_every_pycodex_code_with_its_members_and_meaning() -> None:
    rows = doc_rows("## pycodex's codes")
    documented = {ticked(name)[0]: (ticked(listed), meaning) for name, listed, meaning in rows}
    assert len(documented) == len(rows), "a code documented twice"
    assert documented == {name: (members(code), code.meaning) for name, code in all_app_codes().items()}


def _strings(node: ast.expr, constants: dict[str, str]) -> str | None:
    """A message argument as text, each interpolation as "0" (it matches an id pattern and a number)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_part(p, constants) for p in node.values)
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        base = _strings(node.func.value, constants)
        return None if base is None else re.sub(r"\{[^}]*\}", "0", base)
    return None


def _part(node: ast.expr, constants: dict[str, str]) -> str:
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.FormattedValue) and isinstance(node.value, ast.Name) and node.value.id in constants:
        return constants[node.value.id]  # f"{CONFIG_LOAD_FAILED}: {cause}"
    return "0"


@functools.cache
def _trees() -> tuple[ast.Module, ...]:
    return tuple(ast.parse(path.read_text(encoding="utf-8")) for root in SOURCES for path in sorted(root.rglob("*.py")))


def raised_messages() -> list[str]:
    """The first argument of every call in the sources that is (or names) a string: the error messages."""
    found: list[str] = []
    for tree in _trees():
        constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                     and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                     for t in n.targets if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                text = _strings(node.args[0], constants)
                if text is not None:
                    found.append(text)
    return found


def test_every_pycodex_rule_matches_a_message_the_product_raises() -> None:
    messages = raised_messages()
    dead = [(code.name, pattern.pattern) for code in APP_CODES for pattern in code.patterns
            if not any(pattern.fullmatch(m) for m in messages)]
    assert not dead, f"rules no error message matches: {dead}"


def test_every_codex_data_value_is_built_by_some_handler() -> None:
    built = set()
    for tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                built |= {(k.value, v.value) for k, v in zip(node.keys, node.values, strict=True)
                          if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)}
            elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                built.add(("config_write_error_code", node.args[0].value))  # ConfigWriteError(code, ...)
    missing = [(c.key, c.value) for c in CODEX_CODES if (c.key, c.value) not in built]
    assert not missing, f"declared Codex data no handler builds: {missing}"


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except ValueError:  # a member computed at run time (an id): only the constant ones identify a code
        return None


def built_data() -> list[dict[str, object]]:
    """Every error data the sources build: `data={...}` given to a call, and ConfigWriteError's codes."""
    found: list[dict[str, object]] = []
    for tree in _trees():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            for keyword in node.keywords:
                if keyword.arg == "data" and isinstance(keyword.value, ast.Dict):
                    found.append({k.value: _literal(v) for k, v in zip(keyword.value.keys, keyword.value.values,
                                                                       strict=True) if isinstance(k, ast.Constant)})
            if isinstance(node.func, ast.Name) and node.func.id == "ConfigWriteError" and node.args:
                found.append({"config_write_error_code": _literal(node.args[0])})
    return found


def test_every_error_data_a_handler_builds_is_declared() -> None:
    declared = {(c.key, c.value) for c in CODEX_CODES}
    built = built_data()
    assert len(built) >= 10
    # A data whose members are all computed is a constructor passing its caller's code on (ConfigWriteError).
    undeclared = [d for d in built if any(v is not None for v in d.values())
                  and not any((k, v) in declared for k, v in d.items())]
    assert not undeclared, f"error data the registry does not know (add it to CODEX_CODES): {undeclared}"


@pytest.mark.parametrize(("error", "data"), [
    (InvalidRequest("thread not found: 019a"), {APP_ERROR_CODE: "thread_not_found", "threadId": "019a"}),
    (InvalidRequest("no rollout found for thread id t-1"), {APP_ERROR_CODE: "thread_not_found", "threadId": "t-1"}),
    (InvalidRequest("expected active turn id `a` but found `b`"),
     {APP_ERROR_CODE: "turn_id_mismatch", "expectedTurnId": "a", "activeTurnId": "b"}),
    (InvalidRequest("thread has an active turn"), {APP_ERROR_CODE: "turn_in_progress"}),
    (InvalidRequest("Invalid request: unknown variant `x` for `type`, expected one of `a`"),
     {APP_ERROR_CODE: "invalid_params"}),
    (InvalidRequest("something new"), {APP_ERROR_CODE: "invalid_request"}),
    (InvalidParams("command must not be empty"), {APP_ERROR_CODE: "invalid_params"}),
    (InternalError("No such file or directory (os error 2)"), {APP_ERROR_CODE: "internal_error"}),
    (ServerOverloaded(), {APP_ERROR_CODE: "server_overloaded"}),
    (RpcError("from an MCP server", code=-32000), {APP_ERROR_CODE: "error"}),
    (InvalidRequest("x", data={"config_write_error_code": "configLayerReadonly"}),
     {"config_write_error_code": "configLayerReadonly"}),
    (InvalidRequest("x", data={"other": 1}), {APP_ERROR_CODE: "invalid_request", "other": 1}),
])
def test_classification(error: RpcError, data: dict[str, object]) -> None:
    assert classify(error) == data


def test_the_wire_object_keeps_code_and_message_in_codexs_member_order() -> None:
    wire = error_wire(InvalidRequest("Not initialized"))
    assert list(wire) == ["code", "data", "message"]
    assert wire == {"code": -32600, "data": {APP_ERROR_CODE: "not_initialized"}, "message": "Not initialized"}


def test_the_sources_scanned_exist() -> None:
    assert all(Path(root).is_dir() for root in SOURCES)
    assert len(raised_messages()) > 100
