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
from pathlib import Path
from typing import Any

from app_server.context import HandlerContext
from app_server.handlers.features_0169 import BETA_TEXTS, FEATURES
from app_server.protocol import surface as p
from pycodex import __version__
from pycodex.json_types import JsonObj
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


async def collaboration_modes(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    return {"data": [
        {"name": "Plan", "mode": "plan", "model": None, "reasoning_effort": "medium"},
        {"name": "Default", "mode": "default", "model": None, "reasoning_effort": None},
    ]}


def _page(rows: list[JsonObj], params: p.PageParams) -> JsonObj:
    """One page of ``rows`` as Codex pages its local lists: the cursor is the index of the next row."""
    start = 0
    if params.cursor is not None:
        if not params.cursor.isdigit():
            raise InvalidRequest(f"invalid cursor: {params.cursor}")
        start = int(params.cursor)
    end = len(rows) if params.limit is None else min(len(rows), start + params.limit)
    return {"data": rows[start:end], "nextCursor": str(end) if end < len(rows) else None}


async def feature_list(ctx: HandlerContext, params: p.PageParams) -> JsonObj:
    overrides = ctx.services.surface.feature_overrides
    data = []
    for name, stage, default in FEATURES:
        display, description = BETA_TEXTS.get(name, (None, None))
        data.append({"name": name, "stage": stage, "displayName": display, "description": description,
                     "announcement": "" if stage == "beta" else None,
                     "enabled": overrides.get(name, default), "defaultEnabled": default})
    return _page(data, params)


async def feature_enablement_set(ctx: HandlerContext, params: p.FeatureEnablementSetParams) -> JsonObj:
    # Only beta features can be toggled at runtime; other names are ignored, as in Codex.
    beta = {name for name, stage, _ in FEATURES if stage == "beta"}
    applied = {name: on for name, on in params.enablement.items() if name in beta}
    ctx.services.surface.feature_overrides.update(applied)
    return {"enablement": applied}


async def permission_profiles(ctx: HandlerContext, params: p.PageParams) -> JsonObj:
    ids = (":read-only", ":workspace", ":danger-full-access")
    return _page([{"id": i, "description": None, "allowed": True} for i in ids], params)


def _uuid7() -> str:
    ms = time.time_ns() // 1_000_000
    raw = (ms << 80) | (0x7 << 76) | (int.from_bytes(os.urandom(10)) & ((1 << 76) - 1))
    raw = (raw & ~(0x3 << 62)) | (0x2 << 62)
    return str(uuid.UUID(int=raw))


async def feedback_save(ctx: HandlerContext, params: p.FeedbackSaveParams) -> JsonObj:
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
    return {"savedPath": str(target), "threadId": thread_id, "promptHash": None}


async def feedback_upload(ctx: HandlerContext, params: p.FeedbackParams) -> JsonObj:
    raise InternalError("failed to upload feedback: pycodex has no feedback endpoint configured; "
                        "use feedback/save to write a local bundle")


async def external_detect(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    return {"items": [], "connectors": []}


async def external_import(ctx: HandlerContext, params: p.ExternalImportParams) -> JsonObj:
    if params.migration_items:
        raise InvalidRequest("pycodex cannot import external agent configuration items")
    return {"importId": str(uuid.uuid4())}


async def external_record(ctx: HandlerContext, params: p.ExternalRecordHistoryParams) -> JsonObj:
    import_id = str(uuid.uuid4())
    ctx.services.surface.import_histories.append({
        "importId": import_id, "providerId": params.provider_id, "completedAtMs": time.time_ns() // 10**6,
        "successes": [], "failures": []})
    return {"importId": import_id}


async def external_histories(ctx: HandlerContext, params: Any) -> JsonObj:
    return {"data": list(ctx.services.surface.import_histories), "connectors": []}


async def windows_setup(ctx: HandlerContext, params: p.WindowsSandboxSetupParams) -> JsonObj:
    async def completed() -> None:
        await ctx.session.notify("windowsSandbox/setupCompleted", {
            "mode": params.mode, "success": False,
            "error": "legacy Windows sandbox setup is only supported on Windows"})

    ctx.session.after_response(completed)
    return {"started": True}


async def windows_readiness(ctx: HandlerContext, params: Any) -> JsonObj:
    return {"status": "notConfigured"}


def _rss() -> int | None:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


async def diagnostics(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    return {"process": {"id": os.getpid(), "residentMemoryBytes": _rss(), "physicalFootprintBytes": None},
            "gauges": [{"name": "app.requests.in_flight", "value": 1},
                       {"name": "app.requests.queued", "value": 0}]}


def _unavailable() -> InternalError:
    return InternalError(UNAVAILABLE, data={"type": "unavailable", "reason": "providerUnavailable"})


async def verification_status(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    return {"credentialId": None, "unavailableReason": "providerUnavailable", "unavailableMessage": UNAVAILABLE}


async def verification_unavailable(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    raise _unavailable()


async def verification_verify(ctx: HandlerContext, params: p.VerifyParams) -> JsonObj:
    try:
        challenge = base64.urlsafe_b64decode(params.challenge + "=" * (-len(params.challenge) % 4))
    except (binascii.Error, ValueError):
        challenge = b""
    if len(challenge) != 32 or not params.title.strip() or not params.description.strip():
        raise InvalidParams("Invalid verification challenge or display text.",
                            data={"type": "invalidRequest", "reason": "invalidParams"})
    raise _unavailable()


async def verification_cancel(ctx: HandlerContext, params: p.VerifyCancelParams) -> JsonObj:
    return {}


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


async def remote_status(ctx: HandlerContext, params: Any) -> JsonObj:
    return {"status": "disabled", "serverName": socket.gethostname(),
            "installationId": _installation_id(ctx.services.codex_home), "environmentId": None}


async def remote_needs_chatgpt(ctx: HandlerContext, params: Any) -> JsonObj:
    raise InvalidRequest(NEEDS_CHATGPT)


async def pairing_start(ctx: HandlerContext, params: p.AnyParams) -> JsonObj:
    raise InvalidRequest(PAIRING_DISABLED)


async def pairing_status(ctx: HandlerContext, params: p.PairingStatusParams) -> JsonObj:
    if params.pairing_code is None and params.manual_pairing_code is None:
        raise InvalidRequest("remoteControl/pairing/status requires pairingCode or manualPairingCode")
    raise InvalidRequest(PAIRING_DISABLED)


async def mock_method(ctx: HandlerContext, params: p.MockParams) -> JsonObj:
    return {"echoed": params.value}
