"""``pycodex exec``: one non-interactive turn on an app-server running in this process.

The flow mirrors ``codex exec`` 0.169: read the prompt (argument, stdin, or both), refuse to run
outside a Git repository unless told otherwise, start / resume / fork a thread (stored with source
``exec``), run one turn and print it, as JSONL events (``--json``) or as a transcript on stderr with
the final message on stdout. Exit status 0 when the turn completed, 1 when it failed, could not
start or was interrupted (Ctrl-C interrupts the turn and prints "turn interrupted", as Codex does; a
second Ctrl-C exits at once with 130), 2 for a bad command line.

``resume --last`` resumes the most recently updated session recorded for the current directory (with
``--all``: of any directory). With none there (an empty store, or sessions of other directories only) it
starts a new session and exits 0, as Codex 0.169 does (checked on the binary: run from another directory
it does not resume that directory's session; its ``thread.started`` names a new thread with a fresh
history); pycodex also says so in the transcript. Unlike Codex, ``resume <unknown id or name>`` is an error
(Codex prints a backtrace, or silently starts a new session for a name), and the run never waits without bound: a turn that makes
no progress for ``PYCODEX_EXEC_IDLE_TIMEOUT_S`` seconds (default 300), or keeps waiting for the network,
is interrupted and reported as failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from pycodex import __version__
from pycodex.exec_cli.args import ExecArgs, UsageError, parse_exec_args
from pycodex.exec_cli.events import ExecEventMapper
from pycodex.exec_cli.human import HumanRenderer, RunHeader
from pycodex.exec_cli.prompt import PromptError, read_prompt
from pycodex.git_repo import git_repo_root
from pycodex.json_types import JsonObj

if TYPE_CHECKING:  # the server side is imported only when a run starts
    from pycodex.exec_cli.inproc import TransportClient

__all__ = ["run_exec"]

NOT_TRUSTED = "Not inside a trusted directory and --skip-git-repo-check was not specified."
#: Source kinds `resume --last` looks through (Codex: every recorded session of the directory).
RESUME_SOURCE_KINDS = ["cli", "vscode", "exec", "appServer"]
#: Consecutive "waiting for network" notices after which the turn is given up (PYCODEX_EXEC_MAX_NETWORK_WAITS).
MAX_NETWORK_WAITS = 3
#: `--model scripted`: the built-in offline model (app_server.model.scripted), only ever run when named.
SCRIPTED_MODEL = "scripted"


class ExecError(Exception):
    """A one-line failure before or around the turn (exit status 1)."""


def run_exec(argv: Sequence[str]) -> int:
    """Run ``pycodex exec`` with ``argv``: one turn on an in-process app-server; the exit status."""
    for stream in (sys.stdout, sys.stderr):  # JSONL is UTF-8 whatever the locale says
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(encoding="utf-8", errors="replace")
    try:
        args = parse_exec_args(argv)
    except UsageError as exc:
        print(f"error: {exc}\n\n{exc.usage}\n\nFor more information, try '--help'.", file=sys.stderr)
        return 2
    if args.remote is not None:
        from pycodex.exec_cli.remote import RemoteError, check_remote_address

        try:
            check_remote_address(args.remote)  # as Codex: a bad address is refused before stdin is read
        except RemoteError as exc:
            print(f"Error: {exc}", file=sys.stderr)
            return 1
    try:
        cwd = Path(args.cd).absolute() if args.cd else Path.cwd()
        if not cwd.is_dir():
            raise ExecError(f"No such file or directory (os error 2): {args.cd}")
        prompt = read_prompt(args.prompt, sys.stdin, sys.stderr)
        if not args.skip_git_repo_check and git_repo_root(cwd) is None:
            print(NOT_TRUSTED, file=sys.stderr)
            return 1
        schema = _load_schema(args.output_schema)
    except PromptError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except ExecError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    try:
        return asyncio.run(_Run(args, cwd, prompt, schema).main())
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away: stop quietly (and keep the exit flush from failing too)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _load_schema(path: str | None) -> JsonObj | None:
    if path is None:
        return None
    try:
        schema = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ExecError(f"failed to read output schema file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ExecError(f"output schema file {path} is not valid JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise ExecError(f"output schema file {path} must hold a JSON object")
    return schema


def _env_number(name: str, default: float) -> float:
    try:
        return max(0.1, float(os.environ.get(name, default)))
    except ValueError:
        return default


class _Run:
    def __init__(self, args: ExecArgs, cwd: Path, prompt: str, schema: JsonObj | None) -> None:
        self.args = args
        self.cwd = cwd
        self.prompt = prompt
        self.schema = schema
        self.mapper = ExecEventMapper()
        self.color = args.color == "always" or (args.color == "auto" and sys.stderr.isatty())
        self.human = HumanRenderer(color=self.color)
        self.out: IO[str] = sys.stdout
        self.err: IO[str] = sys.stderr
        #: Ctrl-C asked for the turn to stop (a second one ends the process at once).
        self.interrupted = False
        self._tasks: set[asyncio.Task[None]] = set()
        #: The error lines written to stderr, so the closing error is not printed a second time.
        self._said: set[str] = set()

    # -- output ------------------------------------------------------------------------------------
    def emit(self, events: list[JsonObj]) -> None:
        if not self.args.json:
            return
        for event in events:
            self.out.write(json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.out.flush()

    def say(self, text: str) -> None:
        if text and not self.args.json:
            if text.startswith("ERROR: "):
                self._said.add(text)
            self.err.write(text)
            self.err.flush()

    # -- the run -----------------------------------------------------------------------------------
    async def main(self) -> int:
        if self.args.remote is not None:
            return await self._main_remote(self.args.remote)
        from app_server.app import AppServer, StartupError, default_codex_home
        from pycodex.exec_cli.inproc import InProcessClient

        try:
            app = AppServer(codex_home=default_codex_home(), config_overrides=self.args.config,
                            strict_config=self.args.strict_config, profile=self.args.profile)
        except StartupError as exc:
            print(f"Error: {exc}", file=sys.stderr)
            return 1
        if app.config.hide_agent_reasoning:
            self.human = HumanRenderer(color=self.color, hide_reasoning=True)
        client = InProcessClient(app, session_source="exec")
        await client.start()
        try:
            return await self._drive_reporting(client)
        finally:
            await app.shutdown()

    async def _main_remote(self, address: str) -> int:
        """The run on an app-server that is already running (its config, its model, its store)."""
        from app_server.daemon.cli import default_codex_home
        from pycodex.exec_cli.remote import RemoteError, connect_remote

        try:
            client = await connect_remote(address, default_codex_home(), self.args.remote_auth_token_env)
        except RemoteError as exc:
            print(f"Error: {exc}", file=sys.stderr)
            return 1
        return await self._drive_reporting(client)

    async def _drive_reporting(self, client: TransportClient) -> int:
        """The run on a started client, its failures as one stderr line; the client is closed after."""
        from pycodex.exec_cli.inproc import RequestFailed

        try:
            return await self._drive(client)
        except RequestFailed as exc:
            print(f"Error: {exc.method} failed: {exc.message}", file=sys.stderr)
            return 1
        except (ExecError, TimeoutError) as exc:
            print(f"Error: {str(exc) or 'the app-server did not answer in time'}", file=sys.stderr)
            return 1
        finally:
            await client.close()

    async def _drive(self, client: TransportClient) -> int:
        originator = os.environ.get("CODEX_INTERNAL_ORIGINATOR_OVERRIDE") or "codex_exec"
        await client.request("initialize", {"clientInfo": {"name": originator, "version": __version__},
                                            "capabilities": {"experimentalApi": True}})
        await client.notify("initialized")
        started = await self._open_thread(client)
        thread = started["thread"]
        thread_id = str(thread["id"])
        self.emit([self.mapper.thread_started(thread_id)])
        turn_params: JsonObj = {"threadId": thread_id, "input": self._inputs(), "outputSchema": self.schema}
        sandbox = started.get("sandbox") or {}
        extra = [str((self.cwd / d).absolute()) for d in self.args.add_dirs]
        if extra and sandbox.get("type") == "workspaceWrite":
            turn_params["sandboxPolicy"] = {**sandbox, "writableRoots": [*sandbox.get("writableRoots", []), *extra]}
        self.say(self.human.header(_header(started, thread_id, extra), self.prompt))
        turn = (await client.request("turn/start", turn_params))["turn"]
        turn_id = str(turn["id"])
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):  # no handlers off the main thread
            loop.add_signal_handler(signal.SIGINT, self._on_sigint, client, thread_id, turn_id)
        try:
            await self._follow(client, thread_id, turn_id)
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)
        if self.interrupted:  # as Codex: one line in the transcript, no turn.failed event, exit status 1
            self.say("turn interrupted\n")
            return 1
        return self._finish()

    def _on_sigint(self, client: TransportClient, thread_id: str, turn_id: str) -> None:
        """Ctrl-C interrupts the turn, whose turn/completed then ends the run; a second one is fatal."""
        loop = asyncio.get_running_loop()
        loop.remove_signal_handler(signal.SIGINT)  # the next Ctrl-C raises KeyboardInterrupt (exit 130)
        self.interrupted = True
        params: JsonObj = {"threadId": thread_id, "turnId": turn_id}
        task = loop.create_task(self._interrupt(client, params))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _interrupt(self, client: TransportClient, params: JsonObj) -> None:
        with contextlib.suppress(Exception):  # the turn may have ended meanwhile
            await client.request("turn/interrupt", params, timeout=10)

    def _thread_params(self) -> JsonObj:
        a = self.args
        params: JsonObj = {"cwd": str(self.cwd), "approvalPolicy": a.approval or "never"}
        if a.model:
            params["model"] = a.model
        if a.model == SCRIPTED_MODEL:  # `--model scripted` asks for the offline model, whatever the provider
            params["modelProvider"] = SCRIPTED_MODEL
        if a.bypass:
            params.update(sandbox="danger-full-access", approvalPolicy="never")
        elif a.sandbox:
            params["sandbox"] = a.sandbox
        return params

    async def _open_thread(self, client: TransportClient) -> JsonObj:
        a = self.args
        params = self._thread_params()
        target = None if a.command is None else await self._resolve_session(client)
        if target is None:  # a new session (also `resume --last` with none to resume, as Codex)
            params.update(ephemeral=a.ephemeral, threadSource=a.thread_source)
            result: JsonObj = await client.request("thread/start", params)
            return result
        if a.command == "fork":
            result = await client.request("thread/fork", {**params, "threadId": target, "ephemeral": a.ephemeral})
        else:
            result = await client.request("thread/resume", {**params, "threadId": target})
        return result

    async def _resolve_session(self, client: TransportClient) -> str | None:
        """The thread id behind ``--last`` (None when there is none: a new session), a UUID or a thread name
        (an error when there is none)."""
        a = self.args
        query: JsonObj = {"sourceKinds": RESUME_SOURCE_KINDS, "sortKey": "updated_at", "limit": 1}
        if a.last:
            if not a.all:
                query["cwd"] = str(self.cwd)
            found = (await client.request("thread/list", query))["data"]
            if not found:
                where = "" if a.all else f" in {self.cwd}"
                self.say(f"No recorded session to resume{where}; starting a new one.\n")
                return None
            return str(found[0]["id"])
        session = str(a.session_id)
        try:
            return str(uuid.UUID(session))
        except ValueError:
            pass
        query.update(searchTerm=session, limit=100)
        named = [t for t in (await client.request("thread/list", query))["data"] if t.get("name") == session]
        if not named:
            raise ExecError(f"no session found with id or name `{session}`")
        return str(named[0]["id"])

    def _inputs(self) -> list[JsonObj]:
        # as Codex: the images first, each path as given (the thread's cwd is ours, so it resolves alike)
        inputs: list[JsonObj] = [{"type": "localImage", "path": str(p)} for p in self.args.images]
        inputs.append({"type": "text", "text": self.prompt, "text_elements": []})
        return inputs

    async def _follow(self, client: TransportClient, thread_id: str, turn_id: str) -> None:
        idle = _env_number("PYCODEX_EXEC_IDLE_TIMEOUT_S", 300.0)
        max_waits = int(_env_number("PYCODEX_EXEC_MAX_NETWORK_WAITS", MAX_NETWORK_WAITS)) or 1
        network_waits = 0
        while True:
            try:
                method, params = await asyncio.wait_for(client.notifications.get(), idle)
            except TimeoutError:
                await self._give_up(client, thread_id, turn_id, f"no progress from the model for {idle:g} s")
                continue
            if params.get("threadId", thread_id) != thread_id:
                continue
            if method == "error" and params.get("willRetry"):
                waiting = (params.get("error") or {}).get("message", "").endswith("waiting for network")
                network_waits = network_waits + 1 if waiting else 0
            if self.interrupted and method == "turn/completed":
                if (params.get("turn") or {}).get("id") == turn_id:
                    return  # Codex ends an interrupted exec without a turn.failed event
            self.emit(self.mapper.feed(method, params))
            self.say(self.human.feed(method, params))
            if network_waits >= max_waits:
                network_waits = 0
                await self._give_up(client, thread_id, turn_id, "the model provider is unreachable")
            if method == "turn/completed" and (params.get("turn") or {}).get("id") == turn_id:
                return

    async def _give_up(self, client: TransportClient, thread_id: str, turn_id: str, reason: str) -> None:
        """Interrupt the turn; its turn/completed (status interrupted) then ends the run as a failure."""
        self.mapper.outcome.error_message = reason
        self.emit([{"type": "error", "message": reason}])
        self.say(f"ERROR: {reason}\n")
        try:
            await client.request("turn/interrupt", {"threadId": thread_id, "turnId": turn_id}, timeout=10)
        except Exception as exc:
            raise ExecError(reason) from exc

    def _finish(self) -> int:
        outcome = self.mapper.outcome
        closing = f"ERROR: {outcome.error_message}\n"
        # Codex repeats the turn's error when the turn ends, so it shows twice; once is enough.
        if outcome.failed:
            if closing not in self._said:
                self.say(closing)
        else:
            self.say(self.human.tokens_used(outcome.total_tokens))
            if not self.args.json and outcome.last_message is not None:
                self.out.write(outcome.last_message + "\n")
                self.out.flush()
        path = self.args.output_last_message
        if path:
            try:
                Path(path).write_text(outcome.last_message or "")
            except OSError as exc:
                print(f"Error: could not write the last message to {path}: {exc.strerror or exc}", file=sys.stderr)
                return 1
            if outcome.last_message is None:
                print(f"Warning: no last agent message; wrote empty content to {path}", file=sys.stderr)
        return 1 if outcome.failed else 0


def _header(started: JsonObj, thread_id: str, extra_roots: Sequence[str]) -> RunHeader:
    sandbox = started.get("sandbox") or {}
    modes = {"dangerFullAccess": "danger-full-access", "readOnly": "read-only", "workspaceWrite": "workspace-write"}
    mode = modes.get(str(sandbox.get("type")), str(sandbox.get("type")))
    if mode == "workspace-write":  # as Codex shows it: the writable places
        mode += " [" + ", ".join(["workdir", "/tmp", "$TMPDIR", *(str(r) for r in extra_roots)]) + "]"
    return RunHeader(
        workdir=str(started.get("cwd", "")), model=str(started.get("model", "")),
        provider=str(started.get("modelProvider", "")), approval=str(started.get("approvalPolicy", "")),
        sandbox=mode,
        effort=started.get("reasoningEffort"), summary=None, session_id=thread_id,
    )
