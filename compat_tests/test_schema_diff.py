"""support/schema_diff.py on small hand-made bundles in both generators' styles.

:data:`CASES` is the drift rules table as tests: each case changes the old bundle one way and names the
one change (rule and text) the diff must report. Every rule of support/drift_rules.py has a case, and the
README's rules table must list every rule with its severity and reason.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compat_tests.support.drift_rules import RULES
from compat_tests.support.schema_diff import diff_surfaces, merge_bundles, surface

Schema = dict[str, Any]
README = Path(__file__).with_name("README.md")


def _variant(method: str, params: str | None = None) -> Schema:
    props: Schema = {"method": {"enum": [method]}}
    if params:
        props["params"] = {"$ref": f"#/definitions/{params}"}
    return {"properties": props}


def _codex_style() -> Schema:
    """A Codex-style bundle: unions of requests/notifications/server requests that $ref their params."""
    return {
        "definitions": {
            "ClientRequest": {
                "oneOf": [
                    _variant("thread/start", "ThreadStartParams"),
                    _variant("thread/archive", "ThreadArchiveParams"),
                ]
            },
            "ServerNotification": {"oneOf": [_variant("item/completed", "ItemCompletedNotification")]},
            "ServerRequest": {
                "oneOf": [
                    _variant("item/commandExecution/requestApproval", "CommandExecutionRequestApprovalParams")
                ]
            },
            "ThreadStartParams": {
                "properties": {
                    "cwd": {"type": ["string", "null"]},
                    "count": {"type": "integer"},
                    "mode": {"$ref": "#/definitions/Mode"},
                    "sandbox": {"type": "string", "default": "readOnly"},
                    "sandboxPolicy": {
                        "oneOf": [
                            {"properties": {"type": {"enum": ["readOnly"]}}},
                            {"properties": {"type": {"enum": ["dangerFullAccess"]}}},
                            {
                                "properties": {
                                    "type": {"enum": ["workspaceWrite"]},
                                    "writableRoots": {"items": {"type": "string"}, "type": "array"},
                                }
                            },
                        ]
                    },
                },
            },
            "Mode": {"enum": ["fast", "slow"], "type": "string"},
            "ThreadStartResponse": {
                "properties": {
                    "thread": {
                        "properties": {
                            "id": {"type": "string"},
                            "status": {"enum": ["idle", "active"], "type": "string"},
                        },
                        "required": ["id", "status"],
                        "type": "object",
                    }
                }
            },
            "ThreadArchiveParams": {"properties": {"threadId": {"type": "string"}}, "required": ["threadId"]},
            "ItemCompletedNotification": {"properties": {"item": {"$ref": "#/definitions/ThreadItem"}}},
            "ThreadItem": {
                "properties": {"startedAtMs": {"type": "integer"}},
                "oneOf": [
                    {
                        "properties": {
                            "type": {"enum": ["commandExecution"]},
                            "aggregatedOutput": {"type": ["string", "null"]},
                        }
                    },
                    {"properties": {"type": {"enum": ["agentMessage"]}, "text": {"type": "string"}}},
                    {"properties": {"type": {"enum": ["reasoning"]}, "summary": {"type": "string"}}},
                ],
            },
            "CommandExecutionRequestApprovalParams": {"properties": {"command": {"type": "string"}}},
            "CommandExecutionRequestApprovalResponse": {
                "properties": {"decision": {"enum": ["accept", "decline"], "type": "string"}},
                "required": ["decision"],
            },
        }
    }


def _defs(bundle: Schema) -> Schema:
    out: Schema = bundle["definitions"]
    return out


def _props(bundle: Schema, name: str) -> Schema:
    out: Schema = _defs(bundle)[name]["properties"]
    return out


def _thread(bundle: Schema) -> Schema:
    out: Schema = _props(bundle, "ThreadStartResponse")["thread"]
    return out


def _item(bundle: Schema, index: int) -> Schema:
    out: Schema = _defs(bundle)["ThreadItem"]["oneOf"][index]["properties"]
    return out


@dataclass(frozen=True)
class Case:
    rule: str
    change: Callable[[Schema], None]
    expected: str


def _set(target: Callable[[Schema], Schema], key: str, value: Any) -> Callable[[Schema], None]:
    def change(bundle: Schema) -> None:
        target(bundle)[key] = value

    return change


def _delete(target: Callable[[Schema], Any], key: str | int) -> Callable[[Schema], None]:
    def change(bundle: Schema) -> None:
        del target(bundle)[key]

    return change


def _append(target: Callable[[Schema], list[Any]], value: Any) -> Callable[[Schema], None]:
    def change(bundle: Schema) -> None:
        target(bundle).append(value)

    return change


def _start_params(bundle: Schema) -> Schema:
    return _props(bundle, "ThreadStartParams")


def _requests(bundle: Schema) -> list[Any]:
    return list(_defs(bundle)["ClientRequest"]["oneOf"])


def _add_required_model(bundle: Schema) -> None:
    _start_params(bundle)["model"] = {"type": "string"}
    _defs(bundle)["ThreadStartParams"]["required"] = ["model"]


CASES = [
    Case(
        "removed-method",
        _delete(lambda b: _defs(b)["ClientRequest"]["oneOf"], 1),
        "removed method thread/archive",
    ),
    Case(
        "removed-notification",
        _delete(lambda b: _defs(b)["ServerNotification"]["oneOf"], 0),
        "removed notification item/completed",
    ),
    Case(
        "removed-server-request",
        _delete(lambda b: _defs(b)["ServerRequest"]["oneOf"], 0),
        "removed server-request item/commandExecution/requestApproval",
    ),
    Case("removed-input", _delete(_start_params, "count"), "removed field method thread/start params.count"),
    Case(  # Its fields are not listed again.
        "removed-input",
        _delete(lambda b: _start_params(b)["sandboxPolicy"]["oneOf"], 2),
        "removed variant method thread/start params.sandboxPolicy[workspaceWrite]",
    ),
    Case(
        "narrowed-input",
        _set(_start_params, "cwd", {"type": "string"}),
        "narrowed type of method thread/start params.cwd: null|string -> string",
    ),
    Case(
        "narrowed-input",
        _set(lambda b: _defs(b)["Mode"], "enum", ["fast"]),
        'narrowed type of method thread/start params.mode: enum:"fast"|enum:"slow" -> enum:"fast"',
    ),
    Case(  # An answer to a server request is an input too.
        "narrowed-input",
        _set(lambda b: _props(b, "CommandExecutionRequestApprovalResponse")["decision"], "enum", ["accept"]),
        "narrowed type of server-request item/commandExecution/requestApproval result.decision: "
        'enum:"accept"|enum:"decline" -> enum:"accept"',
    ),
    Case(
        "input-became-required",
        _set(lambda b: _defs(b)["ThreadStartParams"], "required", ["count"]),
        "method thread/start params.count became required",
    ),
    Case(
        "added-required-input", _add_required_model, "added required field method thread/start params.model"
    ),
    Case(
        "removed-output",
        _delete(lambda b: _thread(b)["properties"], "status"),
        "removed field method thread/start result.thread.status",
    ),
    Case(  # Its fields are not listed again.
        "removed-output",
        _delete(lambda b: _defs(b)["ThreadItem"]["oneOf"], 1),
        "removed variant notification item/completed params.item[agentMessage]",
    ),
    Case(
        "output-type-changed",
        _set(lambda b: _thread(b)["properties"], "id", {"type": "integer"}),
        "changed type of method thread/start result.thread.id: string -> integer",
    ),
    Case(
        "added-server-request",
        _append(lambda b: _defs(b)["ServerRequest"]["oneOf"], _variant("item/tool/requestUserInput")),
        "added server-request item/tool/requestUserInput",
    ),
    Case(
        "deprecated",
        _set(lambda b: _start_params(b)["count"], "description", "Deprecated: ignored."),
        "deprecated method thread/start params.count",
    ),
    Case(
        "deprecated",
        _set(lambda b: _start_params(b)["count"], "deprecated", True),
        "deprecated method thread/start params.count",
    ),
    Case(
        "default-changed",
        _set(lambda b: _start_params(b)["sandbox"], "default", "workspaceWrite"),
        'changed default of method thread/start params.sandbox: "readOnly" -> "workspaceWrite"',
    ),
    Case(
        "output-became-optional",
        _set(_thread, "required", ["status"]),
        "method thread/start result.thread.id became optional",
    ),
    Case(
        "output-became-nullable",
        _set(lambda b: _item(b, 1), "text", {"type": ["string", "null"]}),
        "notification item/completed params.item[agentMessage].text may be null: string -> null|string",
    ),
    Case(  # A server request's params are read by the client: an output.
        "output-became-nullable",
        _set(
            lambda b: _props(b, "CommandExecutionRequestApprovalParams"),
            "command",
            {"type": ["string", "null"]},
        ),
        "server-request item/commandExecution/requestApproval params.command may be null: string -> null|string",
    ),
    Case(
        "output-value-added",
        _set(lambda b: _thread(b)["properties"]["status"], "enum", ["idle", "active", "closed"]),
        'added values to method thread/start result.thread.status: enum:"active"|enum:"idle" -> '
        'enum:"active"|enum:"closed"|enum:"idle"',
    ),
    Case(  # A closed set that becomes any string.
        "output-value-added",
        _delete(lambda b: _thread(b)["properties"]["status"], "enum"),
        'added values to method thread/start result.thread.status: enum:"active"|enum:"idle" -> string',
    ),
    Case(  # A new tagged variant is a new value of its tag; its fields are not listed.
        "output-value-added",
        _append(
            lambda b: _defs(b)["ThreadItem"]["oneOf"],
            {"properties": {"type": {"enum": ["plan"]}, "steps": {"type": "array"}}},
        ),
        "added variant notification item/completed params.item[plan]",
    ),
    Case(
        "output-value-removed",
        _set(lambda b: _thread(b)["properties"]["status"], "enum", ["idle"]),
        'removed values from method thread/start result.thread.status: enum:"active"|enum:"idle" -> enum:"idle"',
    ),
    Case(
        "output-unconstrained",
        _set(lambda b: _thread(b)["properties"], "id", {}),
        "method thread/start result.thread.id became unconstrained: string -> any",
    ),
    Case(  # Its params are not listed.
        "added-method",
        _append(lambda b: _defs(b)["ClientRequest"]["oneOf"], _variant("thread/fork", "ThreadArchiveParams")),
        "added method thread/fork",
    ),
    Case(
        "added-notification",
        _append(lambda b: _defs(b)["ServerNotification"]["oneOf"], _variant("turn/started")),
        "added notification turn/started",
    ),
    Case(
        "added-input",
        _set(_start_params, "model", {"type": "string"}),
        "added field method thread/start params.model",
    ),
    Case(  # A new variant of an input union is a new thing clients may send.
        "added-input",
        _append(
            lambda b: _start_params(b)["sandboxPolicy"]["oneOf"], {"properties": {"type": {"enum": ["full"]}}}
        ),
        "added variant method thread/start params.sandboxPolicy[full]",
    ),
    Case(
        "widened-input",
        _set(_start_params, "count", {"type": "number"}),
        "widened type of method thread/start params.count: integer -> number",
    ),
    Case(
        "input-became-optional",
        _set(lambda b: _defs(b)["ThreadArchiveParams"], "required", []),
        "method thread/archive params.threadId became optional",
    ),
    Case(
        "added-output",
        _set(lambda b: _thread(b)["properties"], "name", {"type": ["string", "null"]}),
        "added field method thread/start result.thread.name",
    ),
    Case(
        "narrowed-output",
        _set(lambda b: _item(b, 0), "aggregatedOutput", {"type": "string"}),
        "narrowed type of notification item/completed params.item[commandExecution].aggregatedOutput: "
        "null|string -> string",
    ),
]


def _diff(change: Callable[[Schema], None]) -> list[tuple[str, str]]:
    new = _codex_style()
    change(new)
    return [(c.rule, c.text) for c in diff_surfaces(surface(_codex_style()), surface(new)).changes]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.rule)
def test_each_rule_reports_its_one_change(case: Case) -> None:
    assert _diff(case.change) == [(case.rule, case.expected)]


def test_every_rule_has_a_case_and_every_case_a_rule() -> None:
    assert sorted({c.rule for c in CASES}) == sorted(RULES)


def test_identical_bundles_do_not_drift() -> None:
    assert diff_surfaces(surface(_codex_style()), surface(_codex_style())).changes == []


def test_a_default_that_is_stated_on_one_side_only_is_not_a_change() -> None:
    """pycodex states ``default: null`` where Codex states nothing: only two stated defaults compare."""
    assert _diff(_delete(lambda b: _start_params(b)["sandbox"], "default")) == []


def test_a_description_that_merely_mentions_deprecation_is_not_one() -> None:
    mention = _set(
        lambda b: _start_params(b)["count"], "description", "How many; the old form is deprecated."
    )
    assert _diff(mention) == []


def test_the_report_lists_breaking_first_with_severity_and_rule() -> None:
    new = _codex_style()
    _start_params(new)["model"] = {"type": "string"}  # additive
    _item(new, 1)["text"] = {"type": ["string", "null"]}  # risky
    del _defs(new)["ClientRequest"]["oneOf"][1]  # breaking
    report = diff_surfaces(surface(_codex_style()), surface(new))
    assert report.summary().splitlines() == [
        "1 breaking, 1 risky, 1 additive",
        "BREAKING [removed-method] removed method thread/archive",
        "RISKY [output-became-nullable] notification item/completed params.item[agentMessage].text may be null: "
        "string -> null|string",
        "additive [added-input] added field method thread/start params.model",
    ]
    assert (report.breaking, report.additive) == (
        ["removed method thread/archive"],
        ["added field method thread/start params.model"],
    )


def test_pycodex_style_bundles_compare_with_codex_style_ones() -> None:
    """x-methods / x-notifications / x-server-requests plus the naming convention find the same surface."""
    codex = _codex_style()
    pycodex = copy.deepcopy(codex)
    for union in ("ClientRequest", "ServerNotification", "ServerRequest"):
        del _defs(pycodex)[union]
    pycodex["x-methods"] = {"thread/start": False, "thread/archive": False}
    pycodex["x-notifications"] = ["item/completed"]
    pycodex["x-server-requests"] = ["item/commandExecution/requestApproval"]
    assert surface(merge_bundles([pycodex])) == surface(codex)
    assert diff_surfaces(surface(merge_bundles([pycodex])), surface(codex)).changes == []


def test_merged_bundles_read_nested_v2_definitions() -> None:
    v2 = _codex_style()
    top = {"definitions": {"v2": {"ThreadStartResponse": {"properties": {"extra": {"type": "string"}}}}}}
    merged = surface(merge_bundles([v2, top]))
    assert "method thread/start result.thread" in merged  # the earlier bundle wins
    only_top = surface(merge_bundles([top, {"definitions": {"ClientRequest": _defs(v2)["ClientRequest"]}}]))
    assert "method thread/start result.extra" in only_top


def test_the_readme_rules_table_is_this_table() -> None:
    """README's drift rules table: one row ``| `rule` | severity | reason |`` per rule, nothing else."""
    text = README.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z-]+)` \| (breaking|risky|additive) \| (.+?) \|$", text, re.M)
    assert len(rows) == len({rule for rule, _, _ in rows}), "a rule is listed twice"
    assert {rule: (severity, reason) for rule, severity, reason in rows} == {
        rule: (r.severity, r.reason) for rule, r in RULES.items()
    }
