"""The ACP agent: each ACP method as v2 requests to the in-process app-server.

``session/new`` is ``thread/start`` (the client's ``mcpServers`` join the process's ``[mcp_servers]``: one
editor drives one ``pycodex acp``), ``session/load`` is ``thread/resume`` with the stored turns replayed as
``session/update``, ``session/prompt`` a turn (``session.Session``), ``session/cancel`` ``turn/interrupt``;
``session/list`` is ``thread/list``. Approvals come back as ``session/request_permission`` (``permissions``).
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError, helpers
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthMethodAgent,
    ClientCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    McpServerStdio,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from acp_agent import modes, permissions
from acp_agent.bridge import AppServerBridge
from acp_agent.editor import EditorChoice
from acp_agent.session import PromptBlock, Session, to_inputs
from acp_agent.updates import history_updates
from pycodex import __version__
from pycodex.exec_cli.inproc import RequestFailed
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.app import AppServer

__all__ = ["API_KEY_METHOD", "PycodexAgent"]

#: The one auth method: an OpenAI API key from the agent's environment, stored as `account/login/start` does.
API_KEY_METHOD = "openai-api-key"
_API_KEY_VARS = ("OPENAI_API_KEY", "CODEX_API_KEY")
#: What session/list shows: every interactive source (exec runs are left out, as thread/list leaves them out).
_SOURCE_KINDS = ["cli", "vscode", "appServer"]
#: How the app-server says a thread does not exist (session/load of an unknown id: "Resource not found").
_NOT_FOUND = ("no rollout found", "thread not found")
#: How far up a sub-agent's thread is followed to the session that spawned it.
_MAX_DEPTH = 8
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml(value: Any) -> str:
    """A TOML value for a `-c` override (JSON strings and lists are TOML; objects become inline tables)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def mcp_override(server: object) -> str:
    """The `-c mcp_servers.NAME=...` override for one ACP MCP server (stdio or streamable HTTP).

    ``required``: a turn waits for the server to be ready (or failed) instead of leaving it out after the
    short grace Codex gives the servers of config.toml; the client asked for it for this session.
    """
    name = str(getattr(server, "name", ""))
    if not _SERVER_NAME.match(name):
        raise RequestError.invalid_params({"message": f"MCP server name `{name}` must be letters, digits, _ or -"})
    table: JsonObj
    if isinstance(server, McpServerStdio):
        table = {"command": server.command, "args": list(server.args), "required": True}
        if server.env:
            table["env"] = {e.name: e.value for e in server.env}
    elif isinstance(server, HttpMcpServer):
        table = {"url": server.url, "required": True}
        if server.headers:
            table["http_headers"] = {h.name: h.value for h in server.headers}
    else:
        raise RequestError.invalid_params({"message": f"MCP server `{name}`: only stdio and http servers are supported"})
    return f"mcp_servers.{name}={_toml(table)}"


class PycodexAgent:
    """An ACP agent over one in-process app-server connection."""

    def __init__(self, app: AppServer, editor: EditorChoice) -> None:
        self.app = app
        self.bridge = AppServerBridge(app, self._on_server_request)
        self.editor = editor
        self.sessions: dict[str, Session] = {}
        self._client: Client | None = None
        self._started = False

    def on_connect(self, conn: Client) -> None:
        """The SDK hands over the connection to the client (for updates, permissions, fs and terminals)."""
        self._client = conn
        self.editor.client = conn

    @property
    def client(self) -> Client:
        """The ACP client (set by the SDK before any request is served)."""
        assert self._client is not None
        return self._client

    async def _v2(self, method: str, params: JsonObj) -> JsonObj:
        try:
            return await self.bridge.request(method, params)
        except RequestFailed as exc:
            if exc.message.startswith(_NOT_FOUND):
                raise RequestError(-32002, exc.message, {"method": method}) from None
            raise RequestError(-32603 if exc.code == -32603 else -32602, exc.message, {"method": method}) from None

    # -- lifecycle ------------------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None, **kwargs: Any) -> InitializeResponse:
        """Start the app-server connection; our capabilities, and the editor's kept for the editor environment."""
        if not self._started:
            await self.bridge.start()
            name = client_info.name if client_info is not None else "acp-client"
            await self._v2("initialize", {"clientInfo": {"name": f"pycodex-acp ({name})", "version": __version__},
                                          "capabilities": {"experimentalApi": True}})
            await self.bridge.notify("initialized")
            self._started = True
        self.editor.capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            auth_methods=[AuthMethodAgent(id=API_KEY_METHOD, name="OpenAI API key",
                                          description="Uses OPENAI_API_KEY (or CODEX_API_KEY) from the agent's environment")],
            agent_info=Implementation(name="pycodex", title="pycodex", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        """Log in with the API key of the agent's environment (stored as Codex stores one)."""
        if method_id != API_KEY_METHOD:
            raise RequestError.invalid_params({"message": f"unknown auth method `{method_id}`"})
        key = next((os.environ[v] for v in _API_KEY_VARS if os.environ.get(v)), None)
        if key is None:
            raise RequestError.auth_required({"message": "set OPENAI_API_KEY in the agent's environment"})
        await self._v2("account/login/start", {"type": "apiKey", "apiKey": key})
        return AuthenticateResponse()

    # -- sessions -------------------------------------------------------------------------------------
    def _add_mcp_servers(self, servers: list[Any] | None) -> None:
        overrides = [mcp_override(s) for s in servers or []]
        for override in overrides:  # a server named again replaces its earlier form
            prefix = override.split("=", 1)[0] + "="
            self.app.config_overrides = [o for o in self.app.config_overrides if not o.startswith(prefix)]
            self.app.config_overrides.append(override)

    async def _open(self, method: str, params: JsonObj, mcp_servers: list[Any] | None,
                    meta: Any) -> tuple[Session, JsonObj, list[Any]]:
        """Open a thread (``thread/start``, ``/resume`` or ``/fork``) in the environment ``meta`` picks, as a session.

        Its session, the app-server's answer and the session's (mode state, config options).
        """
        self._add_mcp_servers(mcp_servers)
        async with self.editor.choosing(meta):
            started = await self._v2(method, params)
        thread = started["thread"]
        mode_state = modes.mode_state(started)
        mode = modes.mode_for(mode_state.current_mode_id) or modes.MODES[1]
        cwd = str(params["cwd"])
        session = Session(id=str(thread["id"]), cwd=cwd, queue=self.bridge.subscribe(str(thread["id"])), mode=mode,
                          model=str(started.get("model") or ""))
        self.sessions[session.id] = session
        return session, started, [mode_state, await self._config_options(session)]

    async def _config_options(self, session: Session) -> list[Any]:
        """The session's mode and model pickers (the models as ``model/list`` gives them now)."""
        models = (await self._v2("model/list", {})).get("data") or []
        return modes.config_options([m for m in models if isinstance(m, dict)], session.model, session.mode.id)

    async def _announce(self, session: Session) -> None:
        await self.client.session_update(session.id, helpers.update_available_commands(modes.COMMANDS))

    async def new_session(self, cwd: str, additional_directories: list[str] | None = None,
                          mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        """A new thread in ``cwd``; ``_meta.pycodex.environment`` (``editor``/``local``) picks where it runs."""
        session, _, (mode_state, options) = await self._open(
            "thread/start", {"cwd": cwd}, mcp_servers, kwargs.get("pycodex"))
        await self._announce(session)
        return NewSessionResponse(session_id=session.id, modes=mode_state, config_options=options)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           additional_directories: list[str] | None = None, **kwargs: Any) -> LoadSessionResponse:
        """Resume the stored thread and replay its turns as updates before answering."""
        session, started, (mode_state, options) = await self._open(
            "thread/resume", {"threadId": session_id, "cwd": cwd}, mcp_servers, kwargs.get("pycodex"))
        for update in history_updates(started["thread"].get("turns") or []):
            await self.client.session_update(session.id, update)
        await self._announce(session)
        return LoadSessionResponse(modes=mode_state, config_options=options)

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        """The stored threads (of ``cwd`` when given), newest first."""
        query: JsonObj = {"sortKey": "updated_at", "limit": 50, "sourceKinds": _SOURCE_KINDS}
        if cwd:
            query["cwd"] = cwd
        if cursor:
            query["cursor"] = cursor
        found = await self._v2("thread/list", query)
        sessions = [SessionInfo(session_id=str(t["id"]), cwd=str(t.get("cwd") or ""),
                                title=t.get("name") or t.get("preview") or None,
                                updated_at=None) for t in found.get("data") or [] if isinstance(t, dict)]
        return ListSessionsResponse(sessions=sessions, next_cursor=found.get("nextCursor"))

    async def resume_session(self, session_id: str, cwd: str, additional_directories: list[str] | None = None,
                             mcp_servers: list[Any] | None = None, **kwargs: Any) -> ResumeSessionResponse:
        """Like ``session/load`` without the replay (the client kept the history)."""
        session, _, (mode_state, options) = await self._open(
            "thread/resume", {"threadId": session_id, "cwd": cwd}, mcp_servers, kwargs.get("pycodex"))
        await self._announce(session)
        return ResumeSessionResponse(modes=mode_state, config_options=options)

    async def fork_session(self, session_id: str, cwd: str, additional_directories: list[str] | None = None,
                           mcp_servers: list[Any] | None = None, **kwargs: Any) -> ForkSessionResponse:
        """A new session whose thread is a copy of ``session_id``'s (``thread/fork``)."""
        session, _, (mode_state, options) = await self._open(
            "thread/fork", {"threadId": session_id, "cwd": cwd}, mcp_servers, kwargs.get("pycodex"))
        await self._announce(session)
        return ForkSessionResponse(session_id=session.id, modes=mode_state, config_options=options)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Forget the session here and unsubscribe from its thread (it stays stored)."""
        self._session(session_id)
        self.sessions.pop(session_id, None)
        self.bridge.unsubscribe(session_id)
        await self._v2("thread/unsubscribe", {"threadId": session_id})
        return CloseSessionResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """No extension methods."""
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are ignored, as ACP asks of unknown ones."""

    def _session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"unknown session {session_id}: create or load it first"})
        return session

    def _set_mode(self, session: Session, mode_id: str) -> None:
        mode = modes.mode_for(mode_id)
        if mode is None:
            raise RequestError.invalid_params({"message": f"unknown mode `{mode_id}`"})
        session.mode = mode
        session.pending.update(approvalPolicy=mode.approval_policy, sandboxPolicy=mode.sandbox_policy(session.cwd))

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """Switch the preset; it applies from the next turn on."""
        session = self._session(session_id)
        self._set_mode(session, mode_id)
        await self.client.session_update(session_id, helpers.update_current_mode(mode_id))
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        """The ``mode`` or ``model`` picker; applies from the next turn on."""
        session = self._session(session_id)
        if config_id == "mode":
            self._set_mode(session, str(value))
        elif config_id == "model":
            session.model = str(value)
            session.pending["model"] = session.model
        else:
            raise RequestError.invalid_params({"message": f"unknown config option `{config_id}`"})
        return SetSessionConfigOptionResponse(config_options=await self._config_options(session))

    # -- turns ----------------------------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[PromptBlock], **kwargs: Any) -> PromptResponse:
        """One turn (or a slash command); answers with its stop reason once it ended."""
        session = self._session(session_id)
        if session.lock.locked():
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        async with session.lock:
            text = prompt[0].text if len(prompt) == 1 and prompt[0].type == "text" else ""
            command = modes.split_command(text.strip())
            try:
                if command is None:
                    reason = await session.run_turn(self.bridge, self.client, to_inputs(prompt))
                else:
                    reason = await self._command(session, *command)
            except RequestFailed as exc:
                raise RequestError(-32603, exc.message, {"method": exc.method}) from None
        return PromptResponse(stop_reason=reason)

    async def _command(self, session: Session, name: str, argument: str) -> Any:
        if name == "compact":
            return await session.run_command(self.bridge, self.client, "thread/compact/start", {})
        if name == "review":
            return await session.run_command(self.bridge, self.client, "review/start",
                                             {"target": {"type": "uncommittedChanges"}, "delivery": "inline"})
        if not argument:
            raise RequestError.invalid_params({"message": "/rename needs a name"})
        await self._v2("thread/name/set", {"threadId": session.id, "name": argument})
        await self.client.session_update(session.id, SessionInfoUpdate(session_update="session_info_update",
                                                                       title=argument))
        await self.client.session_update(session.id, helpers.update_agent_message_text(f"Renamed to {argument}."))
        return "end_turn"

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Interrupt the session's running prompt (it then answers ``cancelled``); nothing when none runs."""
        session = self.sessions.get(session_id)
        if session is not None and session.lock.locked():
            await session.interrupt(self.bridge)

    # -- the app-server's questions -------------------------------------------------------------------
    async def _on_server_request(self, method: str, params: JsonObj) -> JsonObj:
        if not permissions.is_approval(method, params):
            raise RequestFailed(method, f"`{method}` cannot be answered by an ACP client")
        session = await self._session_of(str(params.get("threadId", "")))
        thread_id = session.id if session is not None else str(params.get("threadId", ""))
        changes = session.changes.get(str(params.get("itemId"))) if session is not None else None
        if method == permissions.MCP_APPROVAL:  # names no item: it is about the session's running MCP call
            params = {**params, "itemId": session.mcp_call if session is not None else ""}
        answer = await self.client.request_permission(
            options=permissions.options_for(method, params), session_id=thread_id,
            tool_call=permissions.tool_call_for(method, params, changes))
        decision = permissions.decision_for(answer)
        if method == permissions.MCP_APPROVAL:
            return permissions.elicitation_answer(decision)
        return {"decision": decision}

    async def _session_of(self, thread_id: str) -> Session | None:
        """The session a thread belongs to: its own, or (a sub-agent's thread) its nearest ancestor's."""
        for _ in range(_MAX_DEPTH):
            session = self.sessions.get(thread_id)
            if session is not None:
                return session
            try:
                thread = (await self.bridge.request("thread/read", {"threadId": thread_id})).get("thread")
            except RequestFailed:
                return None
            parent = thread.get("parentThreadId") if isinstance(thread, dict) else None
            if not isinstance(parent, str):
                return None
            thread_id = parent
        return None

    async def close(self) -> None:
        """Stop the app-server connection."""
        await self.bridge.close()
