"""Params of the "surface" methods: files, commands and processes, hooks, plugins and apps, accounts and
the small informational ones. Field names and required keys follow Codex 0.169.0's schema; results are
assembled as plain JSON objects by the handlers (they are flat and mostly fixed)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from .base import ParamsModel, WireModel

# ---- fs/* -------------------------------------------------------------------------------------


class FsPathParams(ParamsModel):
    path: str


class FsWriteFileParams(ParamsModel):
    METHOD: ClassVar[str] = "fs/writeFile"
    path: str
    data_base64: str


class FsCreateDirectoryParams(ParamsModel):
    path: str
    recursive: bool | None = None


class FsRemoveParams(ParamsModel):
    path: str
    recursive: bool | None = None
    force: bool | None = None


class FsCopyParams(ParamsModel):
    source_path: str
    destination_path: str
    recursive: bool = False


class FsWatchParams(ParamsModel):
    path: str
    watch_id: str


class FsUnwatchParams(ParamsModel):
    watch_id: str


# ---- command/exec and process/* --------------------------------------------------------------


class TerminalSize(WireModel):
    rows: int = Field(ge=0, le=65535)
    cols: int = Field(ge=0, le=65535)


class CommandExecParams(ParamsModel):
    command: list[str]
    cwd: str | None = None
    env: dict[str, str | None] | None = None
    process_id: str | None = None
    tty: bool = False
    size: TerminalSize | None = None
    stream_stdin: bool = False
    stream_stdout_stderr: bool = False
    output_bytes_cap: int | None = Field(default=None, ge=0)
    disable_output_cap: bool = False
    timeout_ms: int | None = Field(default=None, ge=0)
    disable_timeout: bool = False
    sandbox_policy: dict[str, Any] | None = None
    permission_profile: str | None = None


class CommandExecWriteParams(ParamsModel):
    process_id: str
    delta_base64: str | None = None
    close_stdin: bool = False


class CommandExecTerminateParams(ParamsModel):
    process_id: str


class CommandExecResizeParams(ParamsModel):
    process_id: str
    size: TerminalSize


class ProcessSpawnParams(ParamsModel):
    command: list[str]
    cwd: str
    process_handle: str
    env: dict[str, str | None] | None = None
    tty: bool = False
    size: TerminalSize | None = None
    stream_stdin: bool = False
    stream_stdout_stderr: bool = False
    output_bytes_cap: int | None = Field(default=None, ge=0)
    timeout_ms: int | None = Field(default=None, ge=0)


class ProcessWriteStdinParams(ParamsModel):
    process_handle: str
    delta_base64: str | None = None
    close_stdin: bool = False


class ProcessKillParams(ParamsModel):
    process_handle: str


class ProcessResizePtyParams(ParamsModel):
    process_handle: str
    size: TerminalSize


# ---- hooks, skills, plugins, apps ------------------------------------------------------------


class HooksListParams(ParamsModel):
    cwds: list[str] = Field(default_factory=list)
    thread_id: str | None = None


class SkillsConfigWriteParams(ParamsModel):
    enabled: bool
    name: str | None = None
    path: str | None = None


class SkillsExtraRootsSetParams(ParamsModel):
    extra_roots: list[str]


class CwdsParams(ParamsModel):
    cwds: list[str] | None = None


class PluginReadParams(ParamsModel):
    plugin_name: str
    marketplace_path: str | None = None
    remote_marketplace_name: str | None = None


class PluginUninstallParams(ParamsModel):
    plugin_id: str


class PluginSearchParams(ParamsModel):
    search_term: str
    cwds: list[str] | None = None


class MarketplaceAddParams(ParamsModel):
    source: str
    ref_name: str | None = None
    sparse_paths: list[str] | None = None


class MarketplaceRemoveParams(ParamsModel):
    marketplace_name: str


class MarketplaceUpgradeParams(ParamsModel):
    marketplace_name: str | None = None


class AppsReadParams(ParamsModel):
    app_ids: list[str]


class AnyParams(ParamsModel):
    """Params whose fields the handler does not need (remote-only or fixed answers)."""


class PageParams(ParamsModel):
    """A list request paged by an opaque cursor (the index of the next entry) and a limit."""

    cursor: str | None = None
    limit: int | None = Field(default=None, ge=0)


class RemotePluginParams(ParamsModel):
    remote_plugin_id: str


class PluginSkillReadParams(ParamsModel):
    remote_marketplace_name: str
    remote_plugin_id: str
    skill_name: str


class PluginShareSaveParams(ParamsModel):
    plugin_path: str


class PluginShareUpdateTargetsParams(ParamsModel):
    discoverability: Literal["UNLISTED", "PRIVATE", "LISTED"]
    remote_plugin_id: str
    share_targets: list[Any]


# ---- accounts --------------------------------------------------------------------------------


class CancelLoginParams(ParamsModel):
    login_id: str


class ConsumeResetCreditParams(ParamsModel):
    idempotency_key: str
    credit_id: str | None = None


class NudgeEmailParams(ParamsModel):
    credit_type: Literal["credits", "usage_limit"]


class AccountSwitchParams(ParamsModel):
    account_id: str
    session_id: str
    allow_browser_login: bool = False


class GcpSetupParams(ParamsModel):
    project_id: str
    credential_file: str | None = None
    location: str | None = None


# ---- the rest --------------------------------------------------------------------------------


class FeatureEnablementSetParams(ParamsModel):
    enablement: dict[str, bool]


class FeedbackParams(ParamsModel):
    classification: str
    reason: str | None = None
    thread_id: str | None = None
    include_logs: bool = False
    extra_log_files: list[str] | None = None
    tags: dict[str, str] | None = None


class FeedbackSaveParams(FeedbackParams):
    save_path: str


class ExternalImportParams(ParamsModel):
    migration_items: list[Any]
    provider_id: str | None = None


class ExternalRecordHistoryParams(ParamsModel):
    item_type_results: list[Any]
    provider_id: str


class WindowsSandboxSetupParams(ParamsModel):
    mode: Literal["elevated", "unelevated"]
    cwd: str | None = None


class VerifyParams(ParamsModel):
    challenge: str
    description: str
    title: str


class VerifyCancelParams(ParamsModel):
    request_id: int | str


class PairingStatusParams(ParamsModel):
    pairing_code: str | None = None
    manual_pairing_code: str | None = None


class RemoteClientListParams(ParamsModel):
    environment_id: str


class RemoteClientRevokeParams(ParamsModel):
    client_id: str
    environment_id: str


class MockParams(ParamsModel):
    value: str | None = None


class EnvironmentIdParams(ParamsModel):
    environment_id: str


class EnvironmentAddParams(ParamsModel):
    environment_id: str
    exec_server_url: str
    auth_bearer_token: str | None = None
    connect_timeout_ms: int | None = Field(default=None, ge=0)


class LoginParams(ParamsModel):
    """One of the LoginAccountParams variants; only ``apiKey`` logins work offline."""

    type: Literal["apiKey", "chatgpt", "chatgptDeviceCode", "chatgptAuthTokens"]
    api_key: str | None = None
