"""The exec backends (Codex and pycodex share one argv) and their capabilities."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent_api.appserver import STARTUP_TIMEOUT, AppServerClient, RpcFailure
from agent_api.classify import ExecClassifier, FlowFlags
from agent_api.exec_flow import ExecLaunch, start_exec
from agent_api.fork_flow import start_fork
from agent_api.pinned import selection_failure_message, timeout_message
from agent_api.run import RunCore, RunHandle
from agent_api.validation import NormalizedRequest, normalize_request
from agent_api.values import (
    EXT_ADD_DIRS,
    EXT_APPROVAL_POLICY,
    EXT_EXTERNAL_SANDBOX,
    EXT_FORK,
    EXT_MODEL,
    EXT_NON_INTERACTIVE,
    EXT_RESUME,
    EXT_SANDBOX_MODE,
    RunRequest,
    SessionSelector,
)

__all__ = ["BackendConfig", "CodexBackend", "ExecBackend", "PycodexBackend", "build_exec_argv"]

CAP_CANCEL = "agent_api.control.cancel.v1"
_BASE_CAPABILITIES = (
    "agent_api.run",
    "agent_api.events",
    "agent_api.events.live",
    CAP_CANCEL,
    "agent_api.tools.structured.v1",
    "agent_api.tools.results.v1",
    "agent_api.artifacts.final_text.v1",
    "agent_api.session.handle.v1",
)
_BASE_EXTENSIONS = (EXT_ADD_DIRS, EXT_NON_INTERACTIVE, EXT_MODEL, EXT_APPROVAL_POLICY, EXT_SANDBOX_MODE,
                    EXT_RESUME, EXT_FORK)


@dataclass(frozen=True)
class BackendConfig:
    """``binary`` is the command prefix (a path, or argv such as ``[python, -m, pycodex]``)."""

    binary: Sequence[str] | str | Path | None = None
    codex_home: Path | None = None
    model: str | None = None
    default_timeout: float | None = None
    default_working_dir: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    allow_external_sandbox_exec: bool = False
    #: Ask the app-server whether a `resume --last` (or a non-UUID name) has a session before spawning:
    #: Codex 0.169 silently starts a new session when it has none (agent_wrapper.md §8.2).
    precheck_sessions: bool = True


def build_exec_argv(binary: Sequence[str], request: NormalizedRequest) -> list[str]:
    """Root flags, then ``exec`` and its options, then an optional ``resume (--last|<id>) -``."""
    policy = request.policy
    argv = list(binary)
    if policy.external_sandbox:
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    else:
        approval = "never" if policy.non_interactive else policy.approval_policy
        if approval is not None:
            argv += ["--ask-for-approval", approval]
        argv += ["--sandbox", policy.sandbox_mode]
    argv += ["exec", "--color", "never", "--skip-git-repo-check", "--json"]
    if request.model is not None:
        argv += ["--model", request.model]
    for directory in policy.add_dirs:
        argv += ["--add-dir", str(directory)]
    if policy.resume is not None:
        argv += ["resume", policy.resume.id if policy.resume.id is not None else "--last", "-"]
    return argv


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


class ExecBackend:
    """A backend driving ``<binary> exec --json`` (and ``<binary> app-server`` for fork)."""

    kind = "exec"

    def __init__(self, config: BackendConfig | None = None) -> None:
        self.config = config or BackendConfig()

    def default_binary(self) -> list[str]:
        """The argv that starts the backend when the config names no binary (each backend says)."""
        raise NotImplementedError

    @property
    def binary(self) -> list[str]:
        """The argv that starts the backend: the configured binary, else ``default_binary()``."""
        configured = self.config.binary
        if configured is None:
            return self.default_binary()
        if isinstance(configured, str | Path):
            return [str(configured)]
        return [str(part) for part in configured]

    @property
    def extension_keys(self) -> tuple[str, ...]:
        """The extension keys this backend accepts in a ``RunRequest``."""
        extra = (EXT_EXTERNAL_SANDBOX,) if self.config.allow_external_sandbox_exec else ()
        return (*_BASE_EXTENSIONS, *extra)

    @property
    def capabilities(self) -> frozenset[str]:
        """Capability ids; every accepted extension key is also a capability (1:1)."""
        return frozenset({*_BASE_CAPABILITIES, "agent_api.config.model.v1", f"backend.{self.kind}.exec_stream",
                          *self.extension_keys})

    def normalize(self, request: RunRequest) -> NormalizedRequest:
        """Validate ``request`` against this backend's keys and defaults (raises ``InvalidRequest``)."""
        config = self.config
        return normalize_request(
            request, agent_kind=self.kind, supported_keys=self.extension_keys, default_model=config.model,
            default_working_dir=config.default_working_dir, default_timeout=config.default_timeout,
            default_env=config.env,
        )

    def child_env(self, request: NormalizedRequest) -> dict[str, str]:
        """The environment variables the child gets on top of the caller's."""
        env: dict[str, str] = {}
        if self.config.codex_home is not None:
            env["CODEX_HOME"] = str(self.config.codex_home)
        if "RUST_LOG" not in os.environ and "RUST_LOG" not in request.env:
            env["RUST_LOG"] = "error"
        return {**env, **request.env}

    async def run(self, request: RunRequest) -> RunHandle:
        """Validate (raising InvalidRequest / UnsupportedCapability / BackendError), then start the run."""
        normalized = self.normalize(request)
        env = self.child_env(normalized)
        if normalized.policy.fork is not None:
            return await start_fork(self.binary, normalized, env)
        resume = normalized.policy.resume
        if resume is not None and self.config.precheck_sessions:
            failure = await self._precheck(resume, normalized, env)
            if failure is not None:
                core = RunCore(self.kind)
                handle = core.handle()
                core.spawn_failed(failure)
                return handle
        flags = FlowFlags(resume=resume, has_add_dirs=bool(normalized.policy.add_dirs),
                          has_model=normalized.model is not None,
                          external_sandbox=normalized.policy.external_sandbox)
        launch = ExecLaunch(argv=build_exec_argv(self.binary, normalized), cwd=normalized.working_dir, env=env,
                            prompt=normalized.prompt, timeout=normalized.timeout)
        return await start_exec(launch, ExecClassifier(self.kind, flags))

    async def _precheck(self, selector: SessionSelector, request: NormalizedRequest, env: dict[str, str]) -> str | None:
        """The pinned selection failure when no session matches, else None. A UUID id needs no check:
        Codex itself fails on an unknown one and the exit is classified."""
        if selector.id is not None and _is_uuid(selector.id):
            return None
        try:
            client = await AppServerClient.start(self.binary, cwd=request.working_dir, env=env)
        except (OSError, ValueError):
            return f"{self.kind} backend error: spawn (details redacted when unsafe)"
        try:
            found = await asyncio.wait_for(_session_exists(client, selector, request.working_dir), STARTUP_TIMEOUT)
        except RpcFailure:
            return f"{self.kind} app-server rpc error"
        except TimeoutError:
            return timeout_message(self.kind)
        finally:
            await client.close()
        return None if found else selection_failure_message(selector)


async def _session_exists(client: AppServerClient, selector: SessionSelector, cwd: Path) -> bool:
    await client.initialize()
    if selector.id is None:
        return bool(await client.list_threads(cwd=cwd, max_pages=1, page_size=1))
    threads = await client.list_threads(cwd=None)
    return any(selector.id in (item.get("id"), item.get("name")) for item in threads)


class CodexBackend(ExecBackend):
    """The reference Codex CLI: ``codex`` on PATH unless ``binary`` (or ``$CODEX_BINARY``) says otherwise."""

    kind = "codex"

    def default_binary(self) -> list[str]:
        """``$CODEX_BINARY``, else ``codex`` on the PATH."""
        return [os.environ.get("CODEX_BINARY") or shutil.which("codex") or "codex"]


class PycodexBackend(ExecBackend):
    """pycodex, wire-compatible with Codex: the same argv. Defaults to this interpreter's ``-m pycodex``."""

    kind = "pycodex"

    def default_binary(self) -> list[str]:
        """This interpreter running ``-m pycodex``."""
        return [sys.executable, "-m", "pycodex"]
