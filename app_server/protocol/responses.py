"""The response model of every served client request, read off the method table: ``RESPONSE_MODELS``.

Not a declaration of its own: each method's result model is named once, in its ``MethodDecl``
(``app_server/protocol/method_table.py``); this mapping only looks them up by method name. A handler returns an
instance of its method's model, and ``to_wire`` of it is the answer written to the wire
(``tests/app_server/test_response_models.py`` holds every model to Codex 0.169's response schema).

A model's module is imported when the model is first looked up: building the whole protocol surface costs most
of a second, and start-up needs few of them (see the package docstring).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .base import WireModel
from .declarations import MethodDecl
from .method_table import DECLARATIONS

__all__ = ["RESPONSE_MODELS", "ResponseModels"]


class ResponseModels(Mapping[str, type[WireModel]]):
    """A read-only mapping from method name to result model that imports each model's module on first use."""

    def __init__(self, declarations: tuple[MethodDecl, ...]) -> None:
        """Index the declarations that name a result model."""
        self._decls = {decl.name: decl for decl in declarations if decl.result is not None}

    def __getitem__(self, method: str) -> type[WireModel]:
        """The result model of ``method`` (KeyError for a method pycodex does not serve)."""
        model = self._decls[method].result_model()
        if not (isinstance(model, type) and issubclass(model, WireModel)):
            raise TypeError(f"{model!r} (the result of {method}) is not a WireModel")
        return model

    def __iter__(self) -> Iterator[str]:
        """The method names, without importing any model."""
        return iter(self._decls)

    def __len__(self) -> int:
        """How many methods have a result model."""
        return len(self._decls)

    def __contains__(self, method: object) -> bool:
        """Whether ``method`` has a result model, without importing it."""
        return method in self._decls


#: Every served client request's result model, keyed by method name.
RESPONSE_MODELS: Mapping[str, type[WireModel]] = ResponseModels(DECLARATIONS)
