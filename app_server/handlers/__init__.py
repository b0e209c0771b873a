"""Request handlers, one module per method family; what they serve is declared in the method table.

The table is app_server/protocol/method_table.py. ``register_all`` puts every declared method in the
router's index at start-up but imports a family's module (and so builds the pydantic params and result
models it names) only when one of its methods is first requested: serving ``initialize`` must not pay for
the whole protocol surface. A handler is ``async def h(ctx: HandlerContext, params: P) -> R``; this module
is the one place that hands it its context and turns a returned model into the wire dict the connection
writes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from app_server.context import HandlerContext
from app_server.lazy import LazyModule
from app_server.protocol.method_table import DECLARATIONS

if TYPE_CHECKING:
    import pydantic as pydantic_models

    from app_server.context import Services
    from app_server.protocol import base as protocol_base
    from app_server.protocol import methods as protocol_methods
    from app_server.protocol.declarations import Handler, MethodDecl
    from app_server.router import Router
    from app_server.session import Deferred, Session
    from pycodex.json_types import JsonObj
else:
    protocol_base = LazyModule("app_server.protocol.base")
    protocol_methods = LazyModule("app_server.protocol.methods")
    pydantic_models = LazyModule("pydantic")

__all__ = ["register_all"]


def register_all(
    router: Router, services: Services, declarations: Iterable[MethodDecl] = DECLARATIONS
) -> None:
    """Index every declared method in ``router``, in declaration order (the "unknown variant" order).

    Methods of one family share a loader that registers all of them on the first request for any; a
    declaration that holds its handler object is a family of its own.
    """
    families: dict[str, list[MethodDecl]] = {}
    for decl in declarations:
        families.setdefault(decl.family or f"<{decl.name}>", []).append(decl)
    loaders = {key: _loader(router, services, decls) for key, decls in families.items()}
    for decl in declarations:
        router.add_family((decl.name,), loaders[decl.family or f"<{decl.name}>"])


def _loader(router: Router, services: Services, decls: Sequence[MethodDecl]) -> Callable[[], None]:
    def load() -> None:
        for decl in decls:
            # The handler first: its module's own import statements bring in the models it names (and so
            # `-X importtime`, which does not see importlib.import_module, attributes them to it).
            handler = decl.handler_fn()
            params = decl.validation_model()
            router.add(
                decl.name, params, _wire(handler, services), experimental=decl.experimental,
                experimental_probe=_probe(params) if decl.probe and params is not None else None,
            )

    return load


def _probe(model: type[Any]) -> Callable[[Any], str | None]:
    # The experimental-field gate reads the params model's markers; imported with the first probed family.
    return lambda raw: protocol_methods.experimental_fields_present(model, raw)


def _wire(handler: Handler, services: Services) -> Callable[[Session, Any], Awaitable[JsonObj | Deferred]]:
    async def call(session: Session, params: Any) -> JsonObj | Deferred:
        result = await handler(HandlerContext(session, services), params)
        return protocol_base.to_wire(result) if isinstance(result, pydantic_models.BaseModel) else result

    call.__name__ = getattr(handler, "__name__", "handler")
    return call
