"""The small requests: collaboration modes, feature flags, permission profiles, feedback, external agent
config import, the Windows sandbox (answered as Codex answers on Linux), diagnostics, user verification,
remote control (Codex's answers without a ChatGPT login), the mock method and environments."""

from __future__ import annotations

import base64
import binascii
import json
import os
import socket
import time
import uuid
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from app_server.context import HandlerContext
from app_server.handlers.features_0169 import BETA_TEXTS, FEATURES
from app_server.protocol import catalog_params as cp
from app_server.protocol import responses_misc as rm
from app_server.protocol import surface as p
from pycodex import __version__
from pycodex.jsonrpc.errors import InternalError, InvalidParams, InvalidRequest
from pycodex.platform.spawn import os_error_text

__all__ = [
    "collaboration_modes", "diagnostics", "external_detect", "external_histories", "external_import",
    "external_record", "feature_enablement_set", "feature_list", "feedback_save", "feedback_upload",
    "mock_method", "pairing_start", "pairing_status", "permission_profiles", "remote_needs_chatgpt",
    "remote_status", "verification_cancel", "verification_status", "verification_unavailable",
    "verification_verify", "windows_readiness", "windows_setup",
]

UNAVAILABLE = "User verification is not available in this build or account."
NEEDS_CHATGPT = "remote control requires ChatGPT authentication"
PAIRING_DISABLED = "remote control pairing requires remote control to be enabled"

T = TypeVar("T")


async def collaboration_modes(ctx: HandlerContext, params: p.AnyParams) -> rm.CollaborationModeListResponse:
    return rm.CollaborationModeListResponse(data=[
        rm.CollaborationModeMask(name="Plan", mode="plan", model=None, reasoning_effort="medium"),
        rm.CollaborationModeMask(name="Default", mode="default", model=None, reasoning_effort=None),
    ])


def _page(rows: Sequence[T], params: p.PageParams) -> tuple[list[T], str | None]:
    """One page of ``rows`` as Codex pages its local lists (the rows and the next cursor, the index of the
    next row)."""
    start = 0
    if params.cursor is not None:
        if not params.cursor.isdigit():
            raise InvalidRequest(f"invalid cursor: {params.cursor}")
        start = int(params.cursor)
    end = len(rows) if params.limit is None else min(len(rows), start + params.limit)
    return list(rows[start:end]), str(end) if end < len(rows) else None


async def feature_list(ctx: HandlerContext, params: cp.ExperimentalFeatureListParams) -> rm.ExperimentalFeatureListResponse:
    overrides = ctx.services.surface.feature_overrides
    data = []
    for name, stage, default in FEATURES:
        display, description = BETA_TEXTS.get(name, (None, None))
        data.append(rm.ExperimentalFeature(
            name=name, stage=stage, display_name=display, description=description,
            announcement="" if stage == "beta" else None,
            enabled=overrides.get(name, default), default_enabled=default,
        ))
    page, next_cursor = _page(data, params)
    return rm.ExperimentalFeatureListResponse(data=page, next_cursor=next_cursor)


async def feature_enablement_set(
    ctx: HandlerContext, params: p.FeatureEnablementSetParams
) -> rm.ExperimentalFeatureEnablementSetResponse:
    # Only beta features can be toggled at runtime; other names are ignored, as in Codex.
    beta = {name for name, stage, _ in FEATURES if stage == "beta"}
    applied = {name: on for name, on in params.enablement.items() if name in beta}
    ctx.services.surface.feature_overrides.update(applied)
    return rm.ExperimentalFeatureEnablementSetResponse(enablement=applied)


async def permission_profiles(ctx: HandlerContext, params: cp.PermissionProfileListParams) -> rm.PermissionProfileListResponse:
    ids = (":read-only", ":workspace", ":danger-full-access")
    profiles = [rm.PermissionProfileSummary(id=i, description=None, allowed=True) for i in ids]
    page, next_cursor = _page(profiles, params)
    return rm.PermissionProfileListResponse(data=page, next_cursor=next_cursor)


def _uuid7() -> str:
    ms = time.time_ns() // 1_000_000
    raw = (ms << 80) | (0x7 << 76) | (int.from_bytes(os.urandom(10)) & ((1 << 76) - 1))
    raw = (raw & ~(0x3 << 62)) | (0x2 << 62)
    return str(uuid.UUID(int=raw))


async def feedback_save(ctx: HandlerContext, params: p.FeedbackSaveParams) -> rm.FeedbackSaveResponse:
    target = Path(params.save_path)
    if not target.is_absolute():
        raise InvalidRequest("feedback savePath must be an absolute host path")
    thread_id = params.thread_id or f"no-active-thread-{_uuid7()}"
    report = {"classification": params.classification, "reason": params.reason, "threadId": thread_id,
              "tags": params.tags or {}, "server": f"pycodex {__version__}", "createdAtMs": time.time_ns() // 10**6}
    try:
        with target.open("xb") as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as bundle:
            bundle.writestr("report.json", json.dumps(report, indent=2))
            bundle.writestr("manifest.json", json.dumps([]))  # attachments: pycodex keeps no log files
    except FileExistsError:
        raise InternalError("failed to save feedback: feedback save path already exists") from None
    except OSError as exc:
        raise InternalError(f"failed to save feedback: {os_error_text(exc)}") from None
    return rm.FeedbackSaveResponse(saved_path=str(target), thread_id=thread_id, prompt_hash=None)


async def feedback_upload(ctx: HandlerContext, params: p.FeedbackParams) -> rm.FeedbackUploadResponse:
    raise InternalError("failed to upload feedback: pycodex has no feedback endpoint configured; "
                        "use feedback/save to write a local bundle")


async def external_detect(ctx: HandlerContext, params: cp.ExternalAgentConfigDetectParams) -> rm.ExternalAgentConfigDetectResponse:
    return rm.ExternalAgentConfigDetectResponse(items=[], connectors=[])


async def external_import(
    ctx: HandlerContext, params: cp.ExternalAgentConfigImportParams
) -> rm.ExternalAgentConfigImportResponse:
    if params.migration_items:
        raise InvalidRequest("pycodex cannot import external agent configuration items")
    return rm.ExternalAgentConfigImportResponse(import_id=str(uuid.uuid4()))


async def external_record(
    ctx: HandlerContext, params: p.ExternalRecordHistoryParams
) -> rm.ExternalAgentConfigImportHistoryRecordResponse:
    import_id = str(uuid.uuid4())
    ctx.services.surface.import_histories.append({
        "importId": import_id, "providerId": params.provider_id, "completedAtMs": time.time_ns() // 10**6,
        "successes": [], "failures": []})
    return rm.ExternalAgentConfigImportHistoryRecordResponse(import_id=import_id)


async def external_histories(ctx: HandlerContext, params: None) -> rm.ExternalAgentConfigImportHistoriesReadResponse:
    histories = [rm.ExternalAgentConfigImportHistory.model_validate(h)
                 for h in ctx.services.surface.import_histories]
    return rm.ExternalAgentConfigImportHistoriesReadResponse(data=histories, connectors=[])


async def windows_setup(ctx: HandlerContext, params: p.WindowsSandboxSetupParams) -> rm.WindowsSandboxSetupStartResponse:
    async def completed() -> None:
        await ctx.session.notify("windowsSandbox/setupCompleted", {
            "mode": params.mode, "success": False,
            "error": "legacy Windows sandbox setup is only supported on Windows"})

    ctx.session.after_response(completed)
    return rm.WindowsSandboxSetupStartResponse(started=True)


async def windows_readiness(ctx: HandlerContext, params: None) -> rm.WindowsSandboxReadinessResponse:
    return rm.WindowsSandboxReadinessResponse(status="notConfigured")


def _rss() -> int | None:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


async def diagnostics(ctx: HandlerContext, params: p.AnyParams) -> rm.ServerDiagnosticsResponse:
    return rm.ServerDiagnosticsResponse(
        process=rm.ServerDiagnosticsProcess(id=os.getpid(), resident_memory_bytes=_rss(), physical_footprint_bytes=None),
        gauges=[rm.ServerDiagnosticsGauge(name="app.requests.in_flight", value=1),
                rm.ServerDiagnosticsGauge(name="app.requests.queued", value=0)],
    )


def _unavailable() -> InternalError:
    return InternalError(UNAVAILABLE, data={"type": "unavailable", "reason": "providerUnavailable"})


async def verification_status(ctx: HandlerContext, params: p.AnyParams) -> rm.UserVerificationStatusResponse:
    return rm.UserVerificationStatusResponse(credential_id=None, unavailable_reason="providerUnavailable",
                                             unavailable_message=UNAVAILABLE)


async def verification_unavailable(
    ctx: HandlerContext, params: p.AnyParams
) -> rm.UserVerificationEnrollResponse | rm.UserVerificationDeleteResponse:
    """userVerification/enroll and userVerification/delete: both refused."""
    raise _unavailable()


async def verification_verify(ctx: HandlerContext, params: p.VerifyParams) -> rm.UserVerificationVerifyResponse:
    try:
        challenge = base64.urlsafe_b64decode(params.challenge + "=" * (-len(params.challenge) % 4))
    except (binascii.Error, ValueError):
        challenge = b""
    if len(challenge) != 32 or not params.title.strip() or not params.description.strip():
        raise InvalidParams("Invalid verification challenge or display text.",
                            data={"type": "invalidRequest", "reason": "invalidParams"})
    raise _unavailable()


async def verification_cancel(ctx: HandlerContext, params: p.VerifyCancelParams) -> rm.UserVerificationCancelResponse:
    return rm.UserVerificationCancelResponse()


def _installation_id(home: Path) -> str:
    """Codex's per-home installation id (``CODEX_HOME/installation_id``), created on first use."""
    path = home / "installation_id"
    try:
        value = path.read_text().strip()
        return str(uuid.UUID(value))
    except (OSError, ValueError):
        value = str(uuid.uuid4())
        try:
            path.write_text(value)
        except OSError:
            pass
        return value


async def remote_status(ctx: HandlerContext, params: None) -> rm.RemoteControlStatusReadResponse:
    return rm.RemoteControlStatusReadResponse(
        status="disabled", server_name=socket.gethostname(),
        installation_id=_installation_id(ctx.services.codex_home), environment_id=None,
    )


async def remote_needs_chatgpt(
    ctx: HandlerContext, params: Any  # none for enable/disable, a model for the client methods
) -> (rm.RemoteControlEnableResponse | rm.RemoteControlDisableResponse | rm.RemoteControlClientsListResponse
      | rm.RemoteControlClientsRevokeResponse):
    """remoteControl/enable, /disable, /client/list and /client/revoke: refused without a ChatGPT login."""
    raise InvalidRequest(NEEDS_CHATGPT)


async def pairing_start(ctx: HandlerContext, params: cp.RemoteControlPairingStartParams) -> rm.RemoteControlPairingStartResponse:
    raise InvalidRequest(PAIRING_DISABLED)


async def pairing_status(ctx: HandlerContext, params: p.PairingStatusParams) -> rm.RemoteControlPairingStatusResponse:
    if params.pairing_code is None and params.manual_pairing_code is None:
        raise InvalidRequest("remoteControl/pairing/status requires pairingCode or manualPairingCode")
    raise InvalidRequest(PAIRING_DISABLED)


async def mock_method(ctx: HandlerContext, params: p.MockParams) -> rm.MockExperimentalMethodResponse:
    return rm.MockExperimentalMethodResponse(echoed=params.value)
