"""The exported schema requires what the server always sends, and only in definitions outputs alone reach."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from pydantic.json_schema import models_json_schema

from app_server.protocol.base import OMIT_IF_NONE, OmittingWireModel, WireModel
from app_server.protocol.schema_export import finished_bundle
from app_server.protocol.schema_outputs import always_sent, model_classes, with_required


class Shared(WireModel):
    note: str | None = None


class Inner(OmittingWireModel):
    count: int = 0
    hint: Annotated[str | None, OMIT_IF_NONE] = None


class Result(WireModel):
    inner: Inner
    shared: Shared
    items: list[Inner] = Field(default_factory=list)


class Params(WireModel):
    shared: Shared | None = None


def _definitions() -> dict[str, object]:
    _, top = models_json_schema([(Result, "validation"), (Params, "validation")],
                                ref_template="#/definitions/{model}", by_alias=True)
    return dict(top["$defs"])


def test_output_only_definitions_require_every_field_but_the_omitted_ones() -> None:
    additions = always_sent(_definitions(), [Result], [Params])
    assert additions == {"Inner": ["count"], "Result": ["inner", "shared", "items"]}
    marked = with_required({"definitions": _definitions()}, additions)["definitions"]
    assert marked["Inner"]["required"] == ["count"]
    assert "required" not in marked["Shared"]  # an input reaches it too: clients may omit its fields


def test_model_classes_follow_unions_lists_and_annotations() -> None:
    assert set(model_classes([Result])) == {"Result", "Inner", "Shared"}


def test_the_bundle_requires_turn_items_and_thread_preview() -> None:
    definitions = finished_bundle(experimental=True)["definitions"]
    assert "items" in definitions["Turn"]["required"]
    assert {"preview", "turns", "source"} <= set(definitions["Thread"]["required"])
    assert "model" not in definitions["ThreadStartParams"].get("required", [])  # params stay lenient
