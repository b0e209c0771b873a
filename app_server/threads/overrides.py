"""Request overrides of a thread's sticky settings: thread-level (start, resume, fork) and per turn.

Both kinds resolve a relative ``cwd`` against the server's working directory, as Codex does.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from app_server.config.trust import BUILT_IN_PROFILES
from app_server.threads.contracts import ThreadSettings
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["TurnOverrides", "apply_thread_overrides", "apply_turn_overrides", "profile_mode", "resolve_cwd"]


class TurnOverrides(Protocol):
    """The sticky overrides turn/start and thread/settings/update carry (their params models are this)."""

    @property
    def cwd(self) -> str | None:
        """A new working directory (relative: against the server's)."""

    @property
    def model(self) -> str | None:
        """A new model slug."""

    @property
    def effort(self) -> str | None:
        """A new reasoning effort."""

    @property
    def summary(self) -> str | None:
        """A new reasoning-summary mode."""

    @property
    def approval_policy(self) -> object:
        """A policy name, or a granular policy (which asks when the model requests escalation)."""

    @property
    def approvals_reviewer(self) -> str | None:
        """Who reviews approvals."""

    @property
    def sandbox_policy(self) -> object:
        """A ``SandboxPolicy`` model (or its dict), or None."""

    @property
    def permissions(self) -> str | None:
        """A permission profile id (``:read-only``, ``:workspace``, ``:danger-full-access``), or None."""

_SANDBOX_MODES = {"dangerFullAccess": "danger-full-access", "readOnly": "read-only",
                  "workspaceWrite": "workspace-write"}


def profile_mode(profile: str) -> str:
    """The sandbox mode of permission profile ``profile``; InvalidRequest with Codex's text for an unknown one
    (pycodex has no user-defined ``[permissions.<id>]`` profiles)."""
    mode = BUILT_IN_PROFILES.get(profile)
    if mode is None:
        kind = "unknown built-in profile" if profile.startswith(":") else "undefined profile"
        raise InvalidRequest(f"failed to load configuration: default_permissions refers to {kind} `{profile}`")
    return mode


def resolve_cwd(cwd: str | None, fallback: Path) -> Path:
    """The cwd a request asked for, made absolute against the process cwd; ``fallback`` if none."""
    if not cwd:
        return fallback
    path = Path(cwd)
    return path if path.is_absolute() else (Path(os.getcwd()) / path)


def apply_thread_overrides(settings: ThreadSettings, params: object) -> ThreadSettings:
    """Copy ``settings`` with the thread-level overrides a start/resume/fork request carries.

    ``params`` is any of the three requests' params; a field one of them lacks counts as not given.
    """
    profile = getattr(params, "permissions", None)
    if profile is not None and getattr(params, "sandbox", None) is not None:
        raise InvalidRequest("`permissions` cannot be combined with `sandbox`")
    s = replace(settings)
    cwd = getattr(params, "cwd", None)
    if cwd:
        s.cwd = resolve_cwd(cwd, s.cwd)
    for attr, field in (("model", "model"), ("model_provider", "model_provider"),
                        ("approvals_reviewer", "approvals_reviewer"), ("sandbox_mode", "sandbox"),
                        ("base_instructions", "base_instructions"),
                        ("developer_instructions", "developer_instructions"), ("service_tier", "service_tier")):
        value = getattr(params, field, None)
        if value is not None:
            setattr(s, attr, value)
    policy = getattr(params, "approval_policy", None)
    if isinstance(policy, str):
        s.approval_policy = policy
    elif policy is not None:  # a granular policy: ask when the model requests escalation
        s.approval_policy = "on-request"
    if profile is not None:
        s.sandbox_mode, s.permission_profile = profile_mode(profile), profile
    elif getattr(params, "sandbox", None) is not None:
        s.permission_profile = None  # a mode set directly: Codex reports no profile
    return s


def apply_turn_overrides(s: ThreadSettings, params: TurnOverrides) -> bool:
    """Apply turn/start's (or thread/settings/update's) sticky overrides to ``s`` in place; True when anything
    changed. Raises InvalidRequest for an unknown profile, or a profile together with a policy."""
    policy, profile = params.sandbox_policy, params.permissions
    if policy is not None and profile is not None:
        raise InvalidRequest("`permissions` cannot be combined with `sandboxPolicy`")
    profile_sandbox = profile_mode(profile) if profile is not None else None  # refuse before changing anything
    before, profile_before = s.to_record(), s.permission_profile
    if params.cwd:
        s.cwd = resolve_cwd(params.cwd, s.cwd)
    if params.model:
        s.model = params.model
    if params.effort:
        s.effort = params.effort
    if params.summary:
        s.summary = params.summary
    if isinstance(params.approval_policy, str):
        s.approval_policy = params.approval_policy
    if params.approvals_reviewer:
        s.approvals_reviewer = params.approvals_reviewer
    if profile_sandbox is not None:  # what the TUI's /permissions sends: a profile, not a policy
        s.sandbox_mode, s.permission_profile = profile_sandbox, profile
    if policy is not None:
        kind = getattr(policy, "type", None) or (policy.get("type") if isinstance(policy, dict) else None)
        s.sandbox_mode = _SANDBOX_MODES.get(str(kind), s.sandbox_mode)
        s.permission_profile = None  # a policy set directly: Codex reports no profile
        roots = getattr(policy, "writable_roots", None)
        if kind == "workspaceWrite" and roots is not None:
            s.writable_roots = [str(r) for r in roots]
        # The policy's network access (workspace-write's; read-only has none, full access has it anyway).
        s.network_access = kind == "workspaceWrite" and getattr(policy, "network_access", False) is True
    return s.to_record() != before or s.permission_profile != profile_before
