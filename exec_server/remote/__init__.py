"""Executor remote mode: registry registration, the rendezvous websocket, Noise responder per stream.

Public API:

* ``add_remote_arguments(parser)`` — ``--remote URL``, ``--environment-id ID``, ``--name NAME``,
  ``--remote-transport noise``, ``--registration-bearer-stdin``.
* ``async run_remote_executor(args, make_session) -> int`` — register (bearer from ``CODEX_API_KEY``
  or stdin), then serve until SIGINT/SIGTERM.
* ``connection_session_factory(session_registry, concurrent_requests=1)`` — the ``make_session`` that
  runs the exec-server's ``Connection`` on each stream.
* ``RemoteExecutor``, ``RegistryClient``, ``StreamMux``, ``ExecutorStream`` for embedding and tests.
"""

from typing import TYPE_CHECKING

from pycodex.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from exec_server.remote.args import add_remote_arguments
    from exec_server.remote.cli import run_remote_executor
    from exec_server.remote.executor import Keepalive, RemoteExecutor
    from exec_server.remote.mux import SessionFactory, StreamMux
    from exec_server.remote.registration import RegistryClient, ValidationOutcome
    from exec_server.remote.session_bridge import connection_session_factory
    from exec_server.remote.stream_state import ExecutorIdentity, ExecutorStream, StreamProtocolError

#: Exported name -> its submodule, resolved on first use: a local exec-server parses the remote options
#: (``args``) without importing the registry client, Noise and httpx that only ``--remote`` runs.
_HOME = {
    "add_remote_arguments": "args", "run_remote_executor": "cli", "Keepalive": "executor",
    "RemoteExecutor": "executor", "SessionFactory": "mux", "StreamMux": "mux", "RegistryClient": "registration",
    "ValidationOutcome": "registration", "connection_session_factory": "session_bridge",
    "ExecutorIdentity": "stream_state", "ExecutorStream": "stream_state", "StreamProtocolError": "stream_state",
}

__all__ = [
    "ExecutorIdentity",
    "ExecutorStream",
    "Keepalive",
    "RegistryClient",
    "RemoteExecutor",
    "SessionFactory",
    "StreamMux",
    "StreamProtocolError",
    "ValidationOutcome",
    "add_remote_arguments",
    "connection_session_factory",
    "run_remote_executor",
]


def __getattr__(name: str) -> object:
    """Import an exported name's submodule on first use (see ``_HOME``)."""
    return _lazy(name)


_lazy = lazy_getattr(__name__, _HOME)
