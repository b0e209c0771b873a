"""Codex's ``ConfigRequirements`` (managed requirements.toml / MDM entries), for `configRequirements/read`.

pycodex enforces no managed requirements, so its answer is always ``requirements: null``; the model gives
SDKs Codex's shape. Nested requirement tables are open objects here (pycodex never fills them).
"""

from __future__ import annotations

from typing import Literal

from pycodex.json_types import JsonObj

from .base import WireModel
from .common import ApprovalsReviewer, AskForApproval, SandboxMode

__all__ = ["ConfigRequirements"]

ForcedLoginMethod = Literal["chatgpt", "api"]
WebSearchModeName = Literal["disabled", "cached", "indexed", "live"]
WindowsSandboxImplementation = Literal["elevated", "unelevated", "mxc"]
CliAuthCredentialsStoreMode = Literal["file", "keyring", "auto", "ephemeral"]


class ConfigRequirements(WireModel):
    """What an administrator requires of the configuration (every entry optional)."""

    additional_developer_instructions: str | None = None
    allow_appshots: bool | None = None
    allow_browser_and_computer_use: bool | None = None
    allow_login_shell: bool | None = None
    allow_managed_hooks_only: bool | None = None
    allow_remote_control: bool | None = None
    allowed_approval_policies: list[AskForApproval] | None = None
    allowed_approvals_reviewers: list[ApprovalsReviewer] | None = None
    allowed_login_methods: list[ForcedLoginMethod] | None = None
    allowed_permission_profiles: dict[str, bool] | None = None
    allowed_sandbox_modes: list[SandboxMode] | None = None
    allowed_web_search_modes: list[WebSearchModeName] | None = None
    allowed_windows_sandbox_implementations: list[WindowsSandboxImplementation] | None = None
    application: JsonObj | None = None
    auto_review: JsonObj | None = None
    browser_use: JsonObj | None = None
    chatgpt_base_url: str | None = None
    check_for_update_on_startup: bool | None = None
    cli_auth_credentials_store: CliAuthCredentialsStoreMode | None = None
    computer_use: JsonObj | None = None
    default_permissions: str | None = None
    enforce_residency: Literal["us"] | None = None
    feature_requirements: dict[str, bool] | None = None
    feedback: JsonObj | None = None
    hooks: JsonObj | None = None
    in_app_browser: JsonObj | None = None
    log_dir: str | None = None
    model_catalog_json: str | None = None
    model_provider: str | None = None
    model_providers: JsonObj | None = None
    models: JsonObj | None = None
    network: JsonObj | None = None
    otel: JsonObj | None = None
    sqlite_home: str | None = None
