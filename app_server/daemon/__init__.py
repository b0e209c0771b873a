"""``pycodex app-server daemon`` (a managed background server behind the control socket) and ``proxy``.

Both start without the server, pydantic or websockets: :mod:`app_server.daemon.lifecycle` keeps the pid
record and the lock under ``CODEX_HOME/app-server-daemon/``; :mod:`app_server.daemon.proxy` pipes stdio
bytes to the control socket, as Codex's proxy does (the client speaks WebSocket through it).
"""
