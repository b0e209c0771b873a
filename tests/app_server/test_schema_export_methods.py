"""`generate-json-schema` covers every method pycodex serves, in Codex's `ClientRequest` shape.

The served methods are the declarations of app_server/protocol/method_table.py; Codex's side is the recorded
schema snapshot in tests/data/schema (what `codex app-server generate-json-schema [--experimental]` wrote).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from app_server.protocol.method_table import DECLARATIONS
from app_server.protocol.schema_export import (
    BUNDLE_NAME,
    exported_models,
    served_methods,
    write_json_schema,
)
from tests.support.schema import snapshot_bundle

UNIONS = ("ClientRequest", "ServerNotification", "ServerRequest")


def _variants(union: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {variant["properties"]["method"]["enum"][0]: variant for variant in union["oneOf"]}


def _params_ref(variant: dict[str, Any]) -> str | None:
    """The definition a variant's params name (`$ref`, or `anyOf [$ref, null]` in Codex's optional params)."""
    params = variant["properties"].get("params", {})
    refs = [params.get("$ref")] + [alt.get("$ref") for alt in params.get("anyOf", [])]
    names = [ref.rsplit("/", 1)[-1] for ref in refs if ref]
    return names[0] if names else None


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("schema")
    write_json_schema(root / "stable")
    write_json_schema(root / "experimental", experimental=True)
    return {"stable": root / "stable", "experimental": root / "experimental"}


def _load(path: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return found


@pytest.mark.parametrize("flavour", ["stable", "experimental"])
def test_client_request_lists_exactly_the_served_methods(exports: dict[str, Path], flavour: str) -> None:
    expected = [d.name for d in DECLARATIONS if flavour == "experimental" or not d.experimental]
    document = _load(exports[flavour] / "ClientRequest.json")
    assert [v["properties"]["method"]["enum"][0] for v in document["oneOf"]] == expected
    bundle = _load(exports[flavour] / BUNDLE_NAME)
    assert bundle["definitions"]["ClientRequest"]["oneOf"] == document["oneOf"]
    by_method = {d.name: d for d in DECLARATIONS}
    for method, variant in _variants(document).items():
        params = by_method[method].params_model()
        assert variant["required"] == (["id", "method", "params"] if params else ["id", "method"]), method
        assert _params_ref(variant) == (params.__name__ if params else None), method
        assert variant["properties"]["id"] == {"$ref": "#/definitions/RequestId"}
        assert variant["properties"]["method"]["title"] == variant["title"] + "Method"
    assert len(expected) > 100  # the whole served surface, not the original twenty methods


@pytest.mark.parametrize("flavour", ["stable", "experimental"])
def test_union_files_are_self_contained_valid_schemas(exports: dict[str, Path], flavour: str) -> None:
    for name in UNIONS:
        document = _load(exports[flavour] / f"{name}.json")
        jsonschema.Draft7Validator.check_schema(document)
        assert document["title"] == name
        refs = {ref for ref in _refs(document)}
        missing = sorted(ref for ref in refs if ref.removeprefix("#/definitions/") not in document["definitions"])
        assert missing == [], name
    client = jsonschema.Draft7Validator(_load(exports[flavour] / "ClientRequest.json"))
    assert list(client.iter_errors({"id": 1, "method": "thread/start", "params": {"cwd": "/tmp"}})) == []
    assert list(client.iter_errors({"id": "a", "method": "account/logout"})) == []
    assert list(client.iter_errors({"id": 2, "method": "no/suchMethod", "params": {}})) != []
    assert list(client.iter_errors({"id": 3, "method": "thread/start"})) != []  # our server requires params
    experimental_call = {"id": 4, "method": "mock/experimentalMethod", "params": {}}
    assert (list(client.iter_errors(experimental_call)) == []) == (flavour == "experimental")


def _refs(node: Any) -> list[str]:
    if isinstance(node, list):
        return [ref for item in node for ref in _refs(item)]
    if not isinstance(node, dict):
        return []
    own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
    return own + [ref for value in node.values() for ref in _refs(value)]


def test_every_params_and_pydantic_response_model_is_a_definition_and_a_v2_file(
    exports: dict[str, Path]
) -> None:
    bundle = _load(exports["experimental"] / BUNDLE_NAME)["definitions"]
    responses = 0
    for decl in DECLARATIONS:
        params, result = decl.params_model(), decl.result_model()
        models = [model for model in (params, result) if model is not None]
        responses += result is not None
        for model in models:
            assert model.__name__ in bundle, (decl.name, model.__name__)
            assert (exports["experimental"] / "v2" / f"{model.__name__}.json").is_file(), model.__name__
    assert responses >= 30
    stable_files = {p.stem for p in (exports["stable"] / "v2").glob("*.json")}
    assert stable_files == {m.__name__ for m in exported_models(served_methods(False), experimental=False)}
    assert "MockExperimentalMethodParams" not in stable_files and "MockParams" not in stable_files


def _codex_methods(flavour: str) -> dict[str, dict[str, Any]]:
    return _variants(snapshot_bundle(flavour)["definitions"]["ClientRequest"])


def test_stable_and_experimental_methods_agree_with_codex(exports: dict[str, Path]) -> None:
    ours_stable = set(_variants(_load(exports["stable"] / "ClientRequest.json")))
    ours_all = set(_variants(_load(exports["experimental"] / "ClientRequest.json")))
    codex_stable, codex_all = set(_codex_methods("stable")), set(_codex_methods("experimental"))
    print("served, not in Codex's schema:", sorted(ours_all - codex_all))
    print("in Codex's schema, not served:", sorted(codex_all - ours_all))
    assert sorted((codex_stable & ours_all) - ours_stable) == []  # Codex-stable methods we serve are stable
    codex_experimental = codex_all - codex_stable
    assert sorted(ours_stable & codex_experimental) == []  # experimental ones only with --experimental
    assert codex_experimental & ours_all <= ours_all - ours_stable
    assert ours_stable < ours_all


@pytest.mark.parametrize("union", UNIONS)
def test_variant_titles_match_codex(exports: dict[str, Path], union: str) -> None:
    ours = _variants(_load(exports["experimental"] / f"{union}.json"))
    codex = _variants(snapshot_bundle("experimental")["definitions"][union])
    print(f"{union}: ours only {sorted(set(ours) - set(codex))}, Codex only {sorted(set(codex) - set(ours))}")
    shared = sorted(set(ours) & set(codex))
    assert len(shared) >= 2  # (the server-side unions cover only the messages that have pydantic models)
    differ = [m for m in shared if (ours[m]["title"], ours[m]["required"]) != (codex[m]["title"], codex[m]["required"])]
    if union == "ClientRequest":  # Codex lets some params be absent where our server requires them
        differ = [m for m in differ if ours[m]["title"] != codex[m]["title"]]
    assert differ == []


def test_params_definition_names_against_codex(exports: dict[str, Path]) -> None:
    ours = _variants(_load(exports["experimental"] / "ClientRequest.json"))
    codex = _codex_methods("experimental")
    codex_stable = set(_codex_methods("stable"))
    mismatches = {
        method: (_params_ref(ours[method]), _params_ref(variant))
        for method, variant in codex.items()
        if method in ours and _params_ref(ours[method]) != _params_ref(variant)
    }
    print(f"{len(mismatches)} params names differ from Codex's (ours, Codex's):")
    for method, pair in sorted(mismatches.items()):
        print(f"  {method}: {pair}")
    served_stable = set(_variants(_load(exports["stable"] / "ClientRequest.json")))
    assert sorted((codex_stable & set(ours)) - served_stable) == []
    assert len(mismatches) < len(set(codex) & set(ours))  # most served methods share Codex's names


def test_importing_the_export_module_loads_no_handler_family() -> None:
    code = (
        "import sys, app_server.protocol.schema_export\n"
        "print(sorted(m for m in sys.modules if m.startswith('app_server.handlers')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
