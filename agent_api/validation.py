"""Request validation, all before anything is spawned (agent_wrapper.md §3).

Messages are pinned and never echo a raw path or model id: a caller may log them as they are.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_api.errors import BackendError, InvalidRequest, UnsupportedCapability
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

__all__ = ["ExecPolicy", "NormalizedRequest", "normalize_request"]

APPROVAL_POLICIES = ("untrusted", "on-failure", "on-request", "never")
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
MAX_MODEL_BYTES = 128
MAX_ADD_DIRS = 16
MAX_ADD_DIR_BYTES = 1024


@dataclass(frozen=True)
class ExecPolicy:
    """What the extensions asked for, validated."""

    add_dirs: tuple[Path, ...] = ()
    non_interactive: bool = True
    external_sandbox: bool = False
    approval_policy: str | None = None
    sandbox_mode: str = "workspace-write"
    resume: SessionSelector | None = None
    fork: SessionSelector | None = None


@dataclass(frozen=True)
class NormalizedRequest:
    """A request ready to run: ``working_dir`` is absolute, ``env`` merged, ``timeout`` None for none."""

    agent_kind: str
    prompt: str
    model: str | None
    working_dir: Path
    timeout: float | None
    env: dict[str, str]
    policy: ExecPolicy


def normalize_request(
    request: RunRequest,
    *,
    agent_kind: str,
    supported_keys: Sequence[str],
    default_model: str | None = None,
    default_working_dir: Path | None = None,
    default_timeout: float | None = None,
    default_env: Mapping[str, str] | None = None,
    run_start_cwd: Path | None = None,
) -> NormalizedRequest:
    """Validate ``request`` in the pinned order; raise InvalidRequest / UnsupportedCapability."""
    if not request.prompt.strip():
        raise InvalidRequest("prompt must not be empty")
    extensions = dict(request.extensions)
    if request.model is not None:
        if EXT_MODEL in extensions:
            raise InvalidRequest(f"RunRequest.model and {EXT_MODEL} must not both be given")
        extensions[EXT_MODEL] = request.model
    # Fail closed: an unknown key wins over any value error, checked in sorted order.
    for key in sorted(extensions):
        if key not in supported_keys:
            raise UnsupportedCapability(agent_kind, key)
    model = _model(extensions[EXT_MODEL]) if EXT_MODEL in extensions else None
    start = (run_start_cwd or Path.cwd()).absolute()
    working_dir = _effective_working_dir(request.working_dir, default_working_dir, start)
    if not working_dir.is_dir():
        raise InvalidRequest("working_dir must be an existing directory")
    policy = _policy(extensions, working_dir)
    if policy.fork is not None and model is not None:
        raise BackendError("model override unsupported for codex fork")
    if policy.fork is not None and policy.add_dirs:
        raise BackendError("add_dirs unsupported for codex fork")
    timeout = request.timeout if request.timeout is not None else default_timeout
    if timeout is not None and (timeout != timeout or timeout < 0):
        raise InvalidRequest("timeout must be a non-negative number of seconds")
    env = {**(default_env or {}), **request.env}
    for key, value in env.items():
        if not isinstance(key, str) or not isinstance(value, str) or not key or "=" in key or "\x00" in key + value:
            raise InvalidRequest("env keys and values must be strings (keys non-empty, without '=' or NUL)")
    return NormalizedRequest(
        agent_kind=agent_kind,
        prompt=request.prompt,
        model=model if model is not None else default_model,
        working_dir=working_dir,
        timeout=timeout or None,
        env=env,
        policy=policy,
    )


_WORD = re.compile(r"[A-Za-z0-9_.-]{1,40}")


def _safe_word(value: object) -> str:
    """Quote a short plain word back to the caller; anything else (a path, say) is described, not echoed."""
    if isinstance(value, str) and _WORD.fullmatch(value):
        return value
    return f"<{type(value).__name__}>"


def _model(value: object) -> str:
    if isinstance(value, str):
        trimmed = value.strip()
        if trimmed and len(trimmed.encode()) <= MAX_MODEL_BYTES:
            return trimmed
    raise InvalidRequest(f"invalid {EXT_MODEL}")


def _lexical(path: str) -> Path:
    """Fold ``.`` and ``..`` without touching the filesystem (no symlink, ``~`` or ``$VAR`` expansion)."""
    return Path(posixpath.normpath(path)) if os.sep == "/" else Path(os.path.normpath(path))


def _effective_working_dir(requested: Path | str | None, default: Path | None, start: Path) -> Path:
    chosen = requested if requested is not None else default
    if chosen is None:
        return start
    return _lexical(str(start / Path(chosen)))


def _bool(extensions: Mapping[str, object], key: str, default: bool) -> bool:
    if key not in extensions:
        return default
    value = extensions[key]
    if not isinstance(value, bool):
        raise InvalidRequest(f"{key} must be a boolean")
    return value


def _choice(extensions: Mapping[str, object], key: str, allowed: tuple[str, ...]) -> str | None:
    if key not in extensions:
        return None
    value = extensions[key]
    if not isinstance(value, str) or value not in allowed:
        shown = _safe_word(value)
        raise InvalidRequest(f'{key} must be one of: {" | ".join(allowed)} (got "{shown}")')
    return value


def _policy(extensions: Mapping[str, object], working_dir: Path) -> ExecPolicy:
    non_interactive = _bool(extensions, EXT_NON_INTERACTIVE, True)
    external_sandbox = _bool(extensions, EXT_EXTERNAL_SANDBOX, False)
    if external_sandbox:
        if extensions.get(EXT_NON_INTERACTIVE) is False:
            raise InvalidRequest(
                f"{EXT_EXTERNAL_SANDBOX}=true must not be combined with {EXT_NON_INTERACTIVE}=false"
            )
        if any(key.startswith("backend.codex.exec.") for key in extensions):
            raise InvalidRequest(f"{EXT_EXTERNAL_SANDBOX}=true must not be combined with backend.codex.exec.* keys")
    approval = _choice(extensions, EXT_APPROVAL_POLICY, APPROVAL_POLICIES)
    sandbox = _choice(extensions, EXT_SANDBOX_MODE, SANDBOX_MODES) or "workspace-write"
    if non_interactive and approval not in (None, "never"):
        raise InvalidRequest(f'{EXT_APPROVAL_POLICY} must be "never" when {EXT_NON_INTERACTIVE} is true')
    add_dirs = _add_dirs(extensions[EXT_ADD_DIRS], working_dir) if EXT_ADD_DIRS in extensions else ()
    resume = _selector(EXT_RESUME, extensions[EXT_RESUME]) if EXT_RESUME in extensions else None
    fork = _selector(EXT_FORK, extensions[EXT_FORK]) if EXT_FORK in extensions else None
    if resume is not None and fork is not None:
        raise InvalidRequest(f"{EXT_RESUME} and {EXT_FORK} are mutually exclusive")
    return ExecPolicy(
        add_dirs=add_dirs,
        non_interactive=non_interactive,
        external_sandbox=external_sandbox,
        approval_policy=approval,
        sandbox_mode=sandbox,
        resume=resume,
        fork=fork,
    )


def _add_dirs(value: object, working_dir: Path) -> tuple[Path, ...]:
    if not isinstance(value, Mapping) or set(value) != {"dirs"}:
        raise InvalidRequest(f"invalid {EXT_ADD_DIRS}")
    dirs = value["dirs"]
    if not isinstance(dirs, list) or not 1 <= len(dirs) <= MAX_ADD_DIRS:
        raise InvalidRequest(f"invalid {EXT_ADD_DIRS}.dirs")
    seen: list[Path] = []
    for index, entry in enumerate(dirs):
        error = InvalidRequest(f"invalid {EXT_ADD_DIRS}.dirs[{index}]")
        if not isinstance(entry, str):
            raise error
        trimmed = entry.strip()
        if not trimmed or len(trimmed.encode()) > MAX_ADD_DIR_BYTES or "\x00" in trimmed:
            raise error
        resolved = _lexical(str(working_dir / trimmed))
        try:
            is_dir = resolved.is_dir()
        except OSError:
            is_dir = False
        if not is_dir:
            raise error
        if resolved not in seen:
            seen.append(resolved)
    return tuple(seen)


def _selector(key: str, value: object) -> SessionSelector:
    if not isinstance(value, Mapping):
        raise InvalidRequest(f"{key} must be an object")
    unknown = sorted(k for k in value if k not in ("selector", "id"))
    if unknown:
        raise InvalidRequest(f"{key} has unknown key: {_safe_word(unknown[0])}")
    if "selector" not in value:
        raise InvalidRequest(f"{key}.selector is required")
    selector = value["selector"]
    if not isinstance(selector, str):
        raise InvalidRequest(f"{key}.selector must be a string")
    if selector == "last":
        if "id" in value:
            raise InvalidRequest(f'{key}.id must be absent when selector is "last"')
        return SessionSelector()
    if selector != "id":
        raise InvalidRequest(f"{key}.selector must be one of: last | id")
    if "id" not in value:
        raise InvalidRequest(f'{key}.id is required when selector is "id"')
    session_id = value["id"]
    if not isinstance(session_id, str):
        raise InvalidRequest(f"{key}.id must be a string")
    if not session_id.strip():
        raise InvalidRequest(f"{key}.id must be non-empty")
    return SessionSelector(id=session_id)  # passed on untrimmed, as the contract says
