"""support/schema_diff.py on small hand-made bundles in both generators' styles."""

from __future__ import annotations

import copy
from typing import Any

from compat_tests.support.schema_diff import diff_surfaces, merge_bundles, surface


def _codex_style() -> dict[str, Any]:
    """A Codex-style bundle: unions of requests/notifications that $ref their params."""
    return {
        "definitions": {
            "ClientRequest": {
                "oneOf": [
                    {
                        "properties": {
                            "method": {"enum": ["thread/start"]},
                            "params": {"$ref": "#/definitions/ThreadStartParams"},
                        }
                    },
                    {
                        "properties": {
                            "method": {"enum": ["thread/archive"]},
                            "params": {"$ref": "#/definitions/ThreadArchiveParams"},
                        }
                    },
                ]
            },
            "ServerNotification": {
                "oneOf": [
                    {
                        "properties": {
                            "method": {"enum": ["item/completed"]},
                            "params": {"$ref": "#/definitions/ItemCompletedNotification"},
                        }
                    }
                ]
            },
            "ThreadStartParams": {
                "properties": {
                    "cwd": {"type": ["string", "null"]},
                    "count": {"type": "integer"},
                    "mode": {"$ref": "#/definitions/Mode"},
                },
            },
            "Mode": {"enum": ["fast", "slow"], "type": "string"},
            "ThreadStartResponse": {
                "properties": {"thread": {"properties": {"id": {"type": "string"}}, "type": "object"}}
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
                ],
            },
        }
    }


def test_identical_bundles_do_not_drift() -> None:
    report = diff_surfaces(surface(_codex_style()), surface(_codex_style()))
    assert (report.breaking, report.additions, report.deprecations) == ([], [], [])


def test_a_removed_method_is_breaking_and_reported_once() -> None:
    new = _codex_style()
    del new["definitions"]["ClientRequest"]["oneOf"][1]
    report = diff_surfaces(surface(_codex_style()), surface(new))
    assert report.breaking == ["removed method method thread/archive"]


def test_a_removed_field_inside_a_tagged_variant_is_breaking() -> None:
    new = _codex_style()
    del new["definitions"]["ThreadItem"]["oneOf"][0]["properties"]["aggregatedOutput"]
    report = diff_surfaces(surface(_codex_style()), surface(new))
    assert report.breaking == [
        "removed field notification item/completed params.item[commandExecution].aggregatedOutput"
    ]


def test_a_narrowed_param_type_is_breaking_but_a_widened_one_is_not() -> None:
    narrowed = _codex_style()
    narrowed["definitions"]["ThreadStartParams"]["properties"]["cwd"] = {"type": "string"}
    narrowed["definitions"]["Mode"]["enum"] = ["fast"]
    report = diff_surfaces(surface(_codex_style()), surface(narrowed))
    assert report.breaking == [
        "narrowed type of method thread/start params.cwd: null|string -> string",
        'narrowed type of method thread/start params.mode: enum:"fast"|enum:"slow" -> enum:"fast"',
    ]
    widened = _codex_style()
    widened["definitions"]["ThreadStartParams"]["properties"]["count"] = {"type": "number"}
    assert diff_surfaces(surface(_codex_style()), surface(widened)).breaking == []


def test_a_param_that_becomes_required_is_breaking() -> None:
    new = _codex_style()
    new["definitions"]["ThreadStartParams"]["required"] = ["count"]
    assert diff_surfaces(surface(_codex_style()), surface(new)).breaking == [
        "method thread/start params.count became required"
    ]


def test_additions_and_deprecations_are_listed_not_breaking() -> None:
    new = _codex_style()
    new["definitions"]["ThreadStartParams"]["properties"]["model"] = {"type": "string"}
    new["definitions"]["ThreadStartParams"]["properties"]["count"]["description"] = "Deprecated: ignored."
    report = diff_surfaces(surface(_codex_style()), surface(new))
    assert report.breaking == []
    assert report.additions == ["method thread/start params.model"]
    assert report.deprecations == ["method thread/start params.count"]


def test_pycodex_style_bundles_compare_with_codex_style_ones() -> None:
    """x-methods / x-notifications plus the naming convention find the same surface."""
    codex = _codex_style()
    pycodex = copy.deepcopy(codex)
    del pycodex["definitions"]["ClientRequest"], pycodex["definitions"]["ServerNotification"]
    pycodex["x-methods"] = {"thread/start": False, "thread/archive": False}
    pycodex["x-notifications"] = ["item/completed"]
    assert surface(merge_bundles([pycodex])) == surface(codex)
    report = diff_surfaces(surface(merge_bundles([pycodex])), surface(codex))
    assert report.breaking == [] and report.additions == []


def test_merged_bundles_read_nested_v2_definitions() -> None:
    v2 = _codex_style()
    top = {"definitions": {"v2": {"ThreadStartResponse": {"properties": {"extra": {"type": "string"}}}}}}
    merged = surface(merge_bundles([v2, top]))
    assert "method thread/start result.thread" in merged  # the earlier bundle wins
    only_top = surface(
        merge_bundles([top, {"definitions": {"ClientRequest": v2["definitions"]["ClientRequest"]}}])
    )
    assert "method thread/start result.extra" in only_top
