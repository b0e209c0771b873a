"""Every served method has exactly one declaration, and the schema export covers it.

The declarations are app_server/protocol/method_table.py. The router's index, the handler modules and the
exported ``ClientRequest`` union are all checked against that one table; the handlers' own signatures may not
disagree with what their declaration says.
"""

from __future__ import annotations

import inspect
import typing
from collections import Counter
from importlib import import_module
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from app_server.protocol.declarations import HANDLERS_PACKAGE
from app_server.protocol.method_names import CODEX_CLIENT_METHODS, EXPERIMENTAL_METHODS
from app_server.protocol.method_table import DECLARATIONS
from app_server.protocol.schema_export import bundle_schema, served_methods
from app_server.router import Router
from tests.support.paths import REPO_ROOT


class _NoServices:
    """Registration touches no service: the index is built without one."""


def test_every_method_is_declared_exactly_once() -> None:
    counts = Counter(decl.name for decl in DECLARATIONS)
    assert sorted(name for name, count in counts.items() if count > 1) == []
    assert len(DECLARATIONS) > 150  # the whole served surface


def test_the_router_index_is_the_table_in_its_order() -> None:
    from app_server.handlers import register_all

    router = Router()
    register_all(router, _NoServices())  # type: ignore[arg-type]
    assert router.methods == [decl.name for decl in DECLARATIONS]  # the "unknown variant" order


def test_no_handler_module_declares_methods_of_its_own() -> None:
    """The old per-module tables (``ROUTES``, ``FAMILIES``) are gone: the method table is the only one."""
    for path in sorted((REPO_ROOT / "app_server" / "handlers").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "ROUTES" not in text and "FAMILIES" not in text and "RouteSpec" not in text, path.name


def _accepts(annotation: Any, model: type[BaseModel] | None) -> bool:
    """Whether a handler's ``params`` annotation takes what the router validates with."""
    if annotation is Any:
        return True
    if model is None:
        return annotation in (None, type(None), object)
    members = typing.get_args(annotation) or (annotation,)
    return any(member is model for member in members)


def test_each_declaration_resolves_to_its_familys_handler_and_agrees_with_its_signature() -> None:
    for decl in DECLARATIONS:
        handler = decl.handler_fn()
        assert decl.family is not None and isinstance(decl.handler, str), decl.name
        family = import_module(f"{HANDLERS_PACKAGE}.{decl.family}")
        assert handler.__module__ == family.__name__, decl.name
        assert decl.handler.partition(":")[2] in family.__all__, decl.name  # handlers are their module's API
        hints = typing.get_type_hints(handler)
        ctx_name, params_name = list(inspect.signature(handler).parameters)[:2]
        assert hints[ctx_name].__name__ == "HandlerContext", decl.name
        assert _accepts(hints.get(params_name, Any), decl.validation_model()), decl.name
        returned = hints.get("return")
        if isinstance(returned, type) and issubclass(returned, BaseModel):
            # A handler annotated with a model returns that model: the declaration must name it.
            assert decl.result_model() is returned, decl.name
        schema_params, validated = decl.params_model(), decl.validation_model()
        if schema_params is not None and validated is not None:
            assert issubclass(validated, schema_params), decl.name  # a version-tolerant subclass at most


def test_stability_agrees_with_codex_for_the_methods_codex_knows() -> None:
    known = [decl for decl in DECLARATIONS if decl.name in CODEX_CLIENT_METHODS]
    assert len(known) > 100
    assert [d.name for d in known if d.experimental != (d.name in EXPERIMENTAL_METHODS)] == []
    assert all(d.params_model() is not None for d in DECLARATIONS if d.probe), "a probe needs params"


def test_the_schema_export_covers_every_declared_method() -> None:
    bundle = bundle_schema(served_methods(experimental=True), experimental=True)
    definitions: dict[str, Any] = bundle["definitions"]
    variants = {v["properties"]["method"]["enum"][0]: v for v in definitions["ClientRequest"]["oneOf"]}
    assert list(variants) == [decl.name for decl in DECLARATIONS]
    assert bundle["x-methods"] == {decl.name: decl.experimental for decl in DECLARATIONS}
    for decl in DECLARATIONS:
        params, result = decl.params_model(), decl.result_model()
        expected = {"$ref": f"#/definitions/{params.__name__}"} if params is not None else {"type": "null"}
        assert variants[decl.name]["properties"]["params"] == expected, decl.name
        for model in (params, result):
            if model is not None:
                assert model.__name__ in definitions, (decl.name, model.__name__)
    stable = {m.method for m in served_methods(experimental=False)}
    assert stable == {decl.name for decl in DECLARATIONS if not decl.experimental}


def test_the_declaration_table_imports_nothing_at_module_level(tmp_path: Path) -> None:
    """The index is cheap: importing the table and registering it loads no handler and no protocol model."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from app_server.router import Router\n"
        "from app_server.handlers import register_all\n"
        "register_all(Router(), object())\n"
        "lazy = ('app_server.handlers.', 'app_server.protocol.')\n"
        "table = {'app_server.protocol.declarations', 'app_server.protocol.method_table',\n"
        "         'app_server.protocol.method_table_surface'}\n"
        "loaded = [m for m in sys.modules if m.startswith(lazy) and m not in table]\n"
        "print(sorted(loaded))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True,
                         cwd=REPO_ROOT)
    assert out.stdout.strip() == "[]"


def test_writing_the_schema_imports_no_handler(tmp_path: Path) -> None:
    """The export reads the declarations and the protocol models only; no handler module is loaded for it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from app_server.protocol.schema_export import write_json_schema\n"
        f"write_json_schema(__import__('pathlib').Path({str(tmp_path)!r}), experimental=True)\n"
        "print(sorted(m for m in sys.modules if m.startswith('app_server.handlers')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, cwd=REPO_ROOT
    )
    assert out.stdout.strip() == "[]"
