"""The app-server's router: its routes (registered from the method table), its initialize gate and its errors.

Built on :class:`pycodex.jsonrpc.router.Router`. The order of checks follows Codex: an unknown method
is reported even before ``initialize`` (a real Codex method we do not implement passes the same gates
first); a missing ``params`` is -32600 and invalid params -32602 naming the field; then the initialize
gate; then experimental gating (a whole method, or a field found by the route's probe). A malformed id
or cursor found by the store becomes -32600; an OS error that describes the machine (read-only or full
``CODEX_HOME``) is -32603 with its own words, logged on one line; any other exception is logged with its
traceback and answered with -32603.
"""

from __future__ import annotations

import errno
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from app_server.store.errors import InvalidCursorError, InvalidThreadIdError, ThreadLockedError
from pycodex.jsonrpc import router as rpc
from pycodex.jsonrpc.errors import InternalError, InvalidRequest, MethodNotFound, RpcError

if TYPE_CHECKING:
    from app_server.session import Session

__all__ = ["Handler", "Route", "Router"]


Handler = Callable[["Session", Any], Awaitable[Any]]
#: Returns the descriptor of an experimental field present in the raw params, e.g.
#: "thread/start.selectedCapabilityRoots", or None.
ExperimentalProbe = Callable[[Any], str | None]
Route = rpc.Route

logger = logging.getLogger(__name__)

#: OS errors that describe the machine (a read-only or full CODEX_HOME, a folder we may not write), not a bug:
#: answered with their own words and logged on one line, without a traceback.
ENVIRONMENT_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT})


@dataclass(frozen=True, slots=True)
class Experimental:
    """A route's experimental gating (``Route.meta``)."""

    whole_method: bool = False
    probe: ExperimentalProbe | None = None


class Router(rpc.Router["Session"]):
    """One per server, shared by its connections."""

    def __init__(self, known_methods: Iterable[str] = (), experimental_methods: Iterable[str] = ()) -> None:
        super().__init__()
        self._known = set(known_methods)
        self._experimental = frozenset(experimental_methods)
        #: Methods whose routes are registered by their family's loader on first use, in listing order.
        self._lazy: dict[str, Callable[[], None]] = {}

    def add_family(self, methods: Iterable[str], load: Callable[[], None]) -> None:
        """Declare ``methods`` now; ``load`` registers their routes (importing the handler module and the
        params models it names) the first time one of them is requested. Start-up builds no models."""
        for method in methods:
            if method in self._lazy or method in self._routes:
                raise ValueError(f"route {method} registered twice")
            self._lazy[method] = load

    @property
    def methods(self) -> list[str]:
        """Every served method, in declaration order (the "unknown variant" list)."""
        return [*self._lazy, *(m for m in self._routes if m not in self._lazy)]

    def route(self, method: str) -> rpc.Route[Session] | None:
        """The route of ``method``, loading its family on first use; None if not served."""
        found = self._routes.get(method)
        if found is None and (load := self._lazy.get(method)) is not None:
            load()
            found = self._routes.get(method)
        return found

    def load_all(self) -> None:
        """Register every lazy family now (tests and tools that walk the whole route table)."""
        for method in list(self._lazy):
            self.route(method)

    def add(
        self,
        method: str,
        params_model: type[BaseModel] | None,
        handler: Handler,
        *,
        experimental: bool = False,
        experimental_probe: ExperimentalProbe | None = None,
    ) -> None:
        """Register one route; ``experimental``/``experimental_probe`` gate it on the capability."""
        self.add_route(rpc.Route(method, params_model, handler, Experimental(experimental, experimental_probe)))

    def unknown_method(self, session: Session, method: str) -> RpcError:
        """The error for a method we do not serve: Codex's gates for a Codex method, else unknown variant."""
        if method in self._known or method in self._experimental:
            # A real Codex method we do not implement: Codex would parse it, so the same gates apply.
            if not session.initialized:
                return InvalidRequest("Not initialized")
            if method in self._experimental and not session.experimental_api:
                return InvalidRequest(f"{method} requires experimentalApi capability")
            return MethodNotFound(f"method `{method}` is not supported by pycodex")
        expected = ", ".join(f"`{m}`" for m in self.methods)
        # Clipped: Codex echoes a 1 MiB name in full.
        shown = rpc.shown_method(method)
        return MethodNotFound(f"Invalid request: unknown variant `{shown}`, expected one of {expected}")

    def parse(self, route: rpc.Route[Session], params: Any, has_params: bool) -> Any:
        """Validate params; a missing ``params`` where the method takes some is -32600, as in Codex."""
        if route.params_model is not None and (not has_params or params is None):
            raise InvalidRequest("Invalid request: missing field `params`")
        return super().parse(route, params, has_params)

    def gate(self, session: Session, route: rpc.Route[Session], params: Any) -> None:
        """The initialize handshake and the experimentalApi capability checks."""
        if route.method == "initialize":
            if session.initialized:
                raise InvalidRequest("Already initialized")
        elif not session.initialized:
            raise InvalidRequest("Not initialized")
        if session.experimental_api or not isinstance(route.meta, Experimental):
            return
        if route.meta.whole_method:
            raise InvalidRequest(f"{route.method} requires experimentalApi capability")
        if route.meta.probe is not None and isinstance(params, dict):
            descriptor = route.meta.probe(params)
            if descriptor is not None:
                raise InvalidRequest(f"{descriptor} requires experimentalApi capability")

    def boundary(self, method: str, exc: Exception) -> RpcError:
        """Map an exception below the handler to its JSON-RPC error."""
        if isinstance(exc, InvalidThreadIdError | InvalidCursorError | ThreadLockedError):
            # Malformed client input detected below the handler: the client's fault, not ours.
            return InvalidRequest(str(exc))
        if isinstance(exc, OSError) and exc.errno in ENVIRONMENT_ERRNOS:
            text = f"{exc.strerror} (os error {exc.errno})" + (f": {exc.filename}" if exc.filename else "")
            logger.info("%s failed: %s", method, text)
            return InternalError(text)
        return super().boundary(method, exc)
