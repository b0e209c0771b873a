"""Responses of the account methods (`account/*`, `accountSession/*`).

Field names and types follow Codex 0.169's response schema; field order is the order the handlers emit
(Codex's where recorded). Built with ``Model.model_validate(handler_dict)``; ``to_wire`` gives the dict back.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pycodex.json_types import JsonValue

from .base import OMIT_IF_NONE, OmittingWireModel, WireModel
from .common import RateLimitSnapshot

CancelLoginAccountStatus = Literal["canceled", "notFound"]
GatewayOAuthStatus = Literal["notReady", "started", "succeeded", "failed"]
RateLimitResetType = Literal["codexRateLimits", "unknown"]
RateLimitResetCreditStatus = Literal["available", "redeeming", "redeemed", "unknown"]
ConsumeAccountRateLimitResetCreditOutcome = Literal["reset", "nothingToReset", "noCredit", "alreadyRedeemed"]
WorkspaceMessageType = Literal["headline", "announcement", "unknown"]
AddCreditsNudgeEmailStatus = Literal["sent", "cooldown_active"]
AccountSessionWorkspaceKind = Literal["personal", "workspace"]
AwsCredentialType = Literal["accessKeys", "bedrockApiKey"]


LoginAccountType = Literal["apiKey", "chatgpt", "chatgptDeviceCode", "chatgptAuthTokens", "amazonBedrock"]


class LoginAccountResponse(OmittingWireModel):
    """The result of `account/login/start`; Codex's is a union tagged by `type`, flattened here.

    Only the keys of the variant in `type` are sent: `apiKey`, `chatgptAuthTokens` and `amazonBedrock` carry
    nothing else, `chatgpt` adds `loginId` and `authUrl`, `chatgptDeviceCode` adds `loginId`, `verificationUrl`
    and `userCode`.
    """

    type: LoginAccountType
    login_id: Annotated[str | None, OMIT_IF_NONE] = None
    auth_url: Annotated[str | None, OMIT_IF_NONE] = None
    verification_url: Annotated[str | None, OMIT_IF_NONE] = None
    user_code: Annotated[str | None, OMIT_IF_NONE] = None


class LogoutAccountResponse(WireModel):
    """The result of `account/logout`."""


class CancelLoginAccountResponse(WireModel):
    """The result of `account/login/cancel`."""

    status: CancelLoginAccountStatus


class GatewayOAuthReadResponse(WireModel):
    """Current effective gateway policy and credential readiness; never contains credentials. The result of
    `account/gatewayOAuth/read`.
    """

    provider_id: str
    provider_name: str
    required: bool
    supports_device_auth: bool = False
    status: GatewayOAuthStatus | None = None
    error: str | None = None


class GatewayOAuthPrompt(WireModel):
    """The device-code prompt of a gateway OAuth login: the code to enter and where."""

    login_id: str
    user_code: str
    verification_url: str


class GatewayOAuthLoginResponse(WireModel):
    """The result of `account/gatewayOAuth/login`."""

    prompt: GatewayOAuthPrompt | None = None


class GatewayOAuthCancelResponse(WireModel):
    """The result of `account/gatewayOAuth/cancel`."""


class AccountSecuritySetupAction(WireModel):
    """The link a security reminder offers: its label and URL."""

    label: str
    url: str


class AccountSecuritySetupNotice(WireModel):
    """A security reminder for one account: title, text and the action it offers."""

    account_id: str
    action: AccountSecuritySetupAction
    description: str
    title: str
    user_id: str


class GetAccountSecuritySetupResponse(WireModel):
    """The result of `account/securitySetup/read`: a security reminder for the account, or no notice."""

    notice: AccountSecuritySetupNotice | None = None


class RateLimitResetCredit(WireModel):
    """One rate-limit reset credit of the account, and its state."""

    description: str | None = None
    expires_at: int | None = None
    granted_at: int
    id: str
    reset_type: RateLimitResetType
    status: RateLimitResetCreditStatus
    title: str | None = None


class RateLimitResetCreditsSummary(WireModel):
    """The account's rate-limit reset credits: how many are available, and each one."""

    available_count: int
    credits: list[RateLimitResetCredit] | None = None


class GetAccountRateLimitsResponse(WireModel):
    """The result of `account/rateLimits/read`."""

    account_id: str | None = None
    ordinary_usage_allowed: bool | None = None
    rate_limit_reset_credits: RateLimitResetCreditsSummary | None = None
    rate_limit_upsell: JsonValue = None
    rate_limits: RateLimitSnapshot
    rate_limits_by_limit_id: dict[str, RateLimitSnapshot] | None = None


class ConsumeAccountRateLimitResetCreditResponse(WireModel):
    """The result of `account/rateLimitResetCredit/consume`."""

    outcome: ConsumeAccountRateLimitResetCreditOutcome


class AccountTokenUsageDailyBucket(WireModel):
    """Tokens used on one day (`startDate`, an ISO date)."""

    start_date: str
    tokens: int


class AccountTokenUsageSummary(WireModel):
    """The account's token-usage totals and streaks."""

    current_streak_days: int | None = None
    lifetime_tokens: int | None = None
    longest_running_turn_sec: int | None = None
    longest_streak_days: int | None = None
    peak_daily_tokens: int | None = None


class ThreadUsageBreakdownGroup(WireModel):
    """One row of a thread's usage: tokens and estimated credits for one model and setting."""

    cached_input_tokens: int | None = None
    estimated_usage_credits_micros: int
    input_tokens: int | None = None
    model: str | None = None
    net_new_input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_effort: str | None = None
    speed: str | None = None
    total_tokens: int | None = None


class ThreadUsage(WireModel):
    """The estimated usage of one thread, broken down by model and setting."""

    estimated_usage_credits_micros: int
    estimated_usage_usd_micros: int | None = None
    groups: list[ThreadUsageBreakdownGroup]
    native_usage_usd_micros: int | None = None
    thread_id: str


class GetAccountTokenUsageResponse(WireModel):
    """The result of `account/usage/read`."""

    daily_usage_buckets: list[AccountTokenUsageDailyBucket] | None = None
    summary: AccountTokenUsageSummary
    thread_usage: ThreadUsage | None = None


class WorkspaceMessage(WireModel):
    """One message a workspace shows its members (headline or announcement)."""

    archived_at: int | None = None
    created_at: int | None = None
    message_body: str
    message_id: str
    message_type: WorkspaceMessageType


class GetWorkspaceMessagesResponse(WireModel):
    """The result of `account/workspaceMessages/read`."""

    feature_enabled: bool
    messages: list[WorkspaceMessage]


class SendAddCreditsNudgeEmailResponse(WireModel):
    """The result of `account/sendAddCreditsNudgeEmail`."""

    status: AddCreditsNudgeEmailStatus


class AccountSessionWorkspace(WireModel):
    """A workspace an account session can switch to."""

    account_id: str
    image_url: str | None = None
    kind: AccountSessionWorkspaceKind | None = None
    name: str | None = None


class AccountSession(WireModel):
    """One signed-in account session on this machine, with the workspaces it can use."""

    display_name: str | None = None
    email: str | None = None
    image_url: str | None = None
    is_active: bool
    last_used_at: int
    selected_workspace_account_id: str | None = None
    session_id: str
    user_id: str | None = None
    workspaces: list[AccountSessionWorkspace]


class AccountSessionsResponse(WireModel):
    """The result of `accountSession/list`."""

    active_session_id: str | None = None
    sessions: list[AccountSession]


class AccountSessionsSwitchResponse(WireModel):
    """The result of `accountSession/switch`."""


class BedrockAwsProfile(WireModel):
    """An AWS profile found for Amazon Bedrock, with its region."""

    name: str
    region: str | None = None


class BedrockEnvironmentCredential(WireModel):
    """AWS credentials found in the environment for Amazon Bedrock, by kind."""

    region: str | None = None
    type: AwsCredentialType


class BedrockDiscoverResponse(WireModel):
    """The result of `account/bedrock/discover`."""

    profiles: list[BedrockAwsProfile]
    environment_credentials: list[BedrockEnvironmentCredential]


class BedrockSetupResponse(WireModel):
    """The result of `account/bedrock/setup`."""


class BedrockCheckGovCloudRequirementsResponse(WireModel):
    """Advisory check of the current Bedrock configuration after login or setup. The result of
    `account/bedrock/checkGovCloudRequirements`.
    """

    is_gov_cloud: bool
    should_warn: bool


class GcpSetupResponse(WireModel):
    """The result of `account/gcp/setup`."""
