"""Params of the "surface" methods: files, commands and processes, hooks, plugins and apps, accounts and
the small informational ones. Field names and required keys follow Codex 0.169.0's schema; results are
assembled as plain JSON objects by the handlers (they are flat and mostly fixed)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from pycodex.json_types import JsonValue

from .base import ParamsModel, WireModel
from .common import SandboxPolicy

# ---- fs/* -------------------------------------------------------------------------------------


class FsPathParams(ParamsModel):
    """Params of `fs/readFile`, `fs/getMetadata`, `fs/readDirectory`."""

    path: str


class FsWriteFileParams(ParamsModel):
    """Params of `fs/writeFile`."""

    METHOD: ClassVar[str] = "fs/writeFile"
    path: str
    data_base64: str


class FsCreateDirectoryParams(ParamsModel):
    """Create a directory on the host filesystem."""

    path: str
    recursive: bool | None = None


class FsRemoveParams(ParamsModel):
    """Remove a file or directory tree from the host filesystem."""

    path: str
    recursive: bool | None = None
    force: bool | None = None


class FsCopyParams(ParamsModel):
    """Copy a file or directory tree on the host filesystem."""

    source_path: str
    destination_path: str
    recursive: bool = False


class FsWatchParams(ParamsModel):
    """Start filesystem watch notifications for an absolute path."""

    path: str
    watch_id: str


class FsUnwatchParams(ParamsModel):
    """Stop filesystem watch notifications for a prior `fs/watch`."""

    watch_id: str


# ---- command/exec and process/* --------------------------------------------------------------


class TerminalSize(WireModel):
    """A PTY size in rows and columns."""

    rows: int = Field(ge=0, le=65535)
    cols: int = Field(ge=0, le=65535)


class CommandExecParams(ParamsModel):
    """Run a standalone command (argv vector) in the server sandbox without creating a thread or turn."""

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
    sandbox_policy: SandboxPolicy | None = None
    permission_profile: str | None = None


class CommandExecWriteParams(ParamsModel):
    """Write stdin bytes to a running `command/exec` session, close stdin, or both."""

    process_id: str
    delta_base64: str | None = None
    close_stdin: bool = False


class CommandExecTerminateParams(ParamsModel):
    """Terminate a running `command/exec` session."""

    process_id: str


class CommandExecResizeParams(ParamsModel):
    """Resize a running PTY-backed `command/exec` session."""

    process_id: str
    size: TerminalSize


class ProcessSpawnParams(ParamsModel):
    """Spawn a standalone process (argv vector) without a Codex sandbox on the host where the app server is
    running.
    """

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
    """Write stdin bytes to a running `process/spawn` session, close stdin, or both."""

    process_handle: str
    delta_base64: str | None = None
    close_stdin: bool = False


class ProcessKillParams(ParamsModel):
    """Terminate a running `process/spawn` session."""

    process_handle: str


class ProcessResizePtyParams(ParamsModel):
    """Resize a running PTY-backed `process/spawn` session."""

    process_handle: str
    size: TerminalSize


# ---- hooks, skills, plugins, apps ------------------------------------------------------------


class HooksListParams(ParamsModel):
    """Params of `hooks/list`."""

    cwds: list[str] = Field(default_factory=list)
    thread_id: str | None = None


class SkillsConfigWriteParams(ParamsModel):
    """Params of `skills/config/write`."""

    enabled: bool
    name: str | None = None
    path: str | None = None


class SkillsExtraRootsSetParams(ParamsModel):
    """Params of `skills/extraRoots/set`."""

    extra_roots: list[str]


class PluginUninstallParams(ParamsModel):
    """Params of `plugin/uninstall`."""

    plugin_id: str


class MarketplaceAddParams(ParamsModel):
    """Params of `marketplace/add`."""

    source: str
    ref_name: str | None = None
    sparse_paths: list[str] | None = None


class MarketplaceRemoveParams(ParamsModel):
    """Params of `marketplace/remove`."""

    marketplace_name: str


class MarketplaceUpgradeParams(ParamsModel):
    """Params of `marketplace/upgrade`."""

    marketplace_name: str | None = None


class AnyParams(ParamsModel):
    """Params whose fields the handler does not need (remote-only or fixed answers)."""


class PageParams(ParamsModel):
    """A list request paged by an opaque cursor (the index of the next entry) and a limit."""

    cursor: str | None = None
    limit: int | None = Field(default=None, ge=0)


class RemotePluginParams(ParamsModel):
    """Params of `plugin/share/checkout`, `plugin/share/delete`."""

    remote_plugin_id: str


class PluginSkillReadParams(ParamsModel):
    """Params of `plugin/skill/read`."""

    remote_marketplace_name: str
    remote_plugin_id: str
    skill_name: str


class PluginShareUpdateTargetsParams(ParamsModel):
    """Params of `plugin/share/updateTargets`."""

    discoverability: Literal["UNLISTED", "PRIVATE", "LISTED"]
    remote_plugin_id: str
    share_targets: list[JsonValue]


# ---- accounts --------------------------------------------------------------------------------


class CancelLoginParams(ParamsModel):
    """Params of `account/login/cancel`."""

    login_id: str


class ConsumeResetCreditParams(ParamsModel):
    """Params of `account/rateLimitResetCredit/consume`."""

    idempotency_key: str
    credit_id: str | None = None


class NudgeEmailParams(ParamsModel):
    """Params of `account/sendAddCreditsNudgeEmail`."""

    credit_type: Literal["credits", "usage_limit"]


class AccountSwitchParams(ParamsModel):
    """Params of `accountSession/switch`."""

    account_id: str
    session_id: str
    allow_browser_login: bool = False


class GcpSetupParams(ParamsModel):
    """Params of `account/gcp/setup`."""

    project_id: str
    credential_file: str | None = None
    location: str | None = None


# ---- the rest --------------------------------------------------------------------------------


class FeatureEnablementSetParams(ParamsModel):
    """Params of `experimentalFeature/enablement/set`."""

    enablement: dict[str, bool]


class FeedbackParams(ParamsModel):
    """`FeedbackParams` on the wire: `classification`, `reason`, `threadId`, `includeLogs`, `extraLogFiles`, ....
    """

    classification: str
    reason: str | None = None
    thread_id: str | None = None
    include_logs: bool = False
    extra_log_files: list[str] | None = None
    tags: dict[str, str] | None = None


class FeedbackSaveParams(FeedbackParams):
    """Params of `feedback/save`."""

    save_path: str


class ExternalRecordHistoryParams(ParamsModel):
    """Params of `externalAgentConfig/import/recordHistory`."""

    item_type_results: list[JsonValue]
    provider_id: str


class WindowsSandboxSetupParams(ParamsModel):
    """Params of `windowsSandbox/setupStart`."""

    mode: Literal["elevated", "unelevated"]
    cwd: str | None = None


class VerifyParams(ParamsModel):
    """Params of `userVerification/verify`."""

    challenge: str
    description: str
    title: str


class VerifyCancelParams(ParamsModel):
    """Params of `userVerification/cancel`."""

    request_id: int | str


class PairingStatusParams(ParamsModel):
    """Params of `remoteControl/pairing/status`."""

    pairing_code: str | None = None
    manual_pairing_code: str | None = None


class RemoteClientRevokeParams(ParamsModel):
    """Params of `remoteControl/client/revoke`."""

    client_id: str
    environment_id: str


class MockParams(ParamsModel):
    """Params of `mock/experimentalMethod`."""

    value: str | None = None


class EnvironmentIdParams(ParamsModel):
    """Params of `environment/info`, `environment/status`."""

    environment_id: str


class EnvironmentSkillsParams(WireModel):
    """The skills a client needs from an environment it adds (Codex checks the catalog names)."""

    required: list[str] | None = None


class EnvironmentAddParams(ParamsModel):
    """Params of `environment/add`."""

    environment_id: str
    exec_server_url: str
    auth_bearer_token: str | None = None
    connect_timeout_ms: int | None = Field(default=None, ge=0)
    #: Codex checks these catalog names against the environment's skills; pycodex does not (yet).
    skills: EnvironmentSkillsParams | None = None
    #: Which websocket request of the client this came from (Codex's logs); unused here.
    websocket_request_id: str | None = None


class LoginParams(ParamsModel):
    """One of the LoginAccountParams variants; only ``apiKey`` logins work offline."""

    type: Literal["apiKey", "chatgpt", "chatgptDeviceCode", "chatgptAuthTokens"]
    api_key: str | None = None
