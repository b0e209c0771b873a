"""The ``apply_patch`` tool in the running turn: from the model's patch to changed files and a fileChange item.

The patch (the freeform call's input, the function form's ``{"input": ...}``, or an ``apply_patch`` heredoc
that ``exec_command`` intercepts) is parsed and planned against the files as the thread's environment
sees them, so it works the same on a remote exec-server. Then, as Codex 0.169 does:

* an unreadable patch is answered ``apply_patch verification failed: ...`` with no item;
* ``patch_safety`` decides: a refused patch is answered ``patch rejected: <reason>`` with no item;
* otherwise a ``fileChange`` item starts (``inProgress``); when approval is needed an
  ``item/fileChange/requestApproval`` request asks (accept, acceptForSession: later patches touching only
  approved files are not asked again, decline, cancel: the turn ends as interrupted);
* the changes are written, the item completes (``completed``/``failed``/``declined``), and
  ``turn/diff/updated`` carries the turn's aggregated diff.

The model is told ``Exit code: 0\\nWall time: N seconds\\nOutput:\\nSuccess. Updated the following files:...``.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app_server.protocol import notices
from app_server.threads import items as it
from app_server.tools import approvals
from app_server.tools.apply_patch import (
    VERIFICATION_FAILED_PREFIX,
    FileChange,
    PatchError,
    apply_changes,
    os_error_text,
    parse_patch,
    plan_changes,
)
from app_server.tools.approvals import NO_ENVIRONMENT
from app_server.tools.ask import NoAnswer, ask_clients
from app_server.tools.call_output import call_output
from app_server.tools.contracts import ToolOutcome
from app_server.tools.patch_fs import EnvironmentPatchFs
from app_server.tools.patch_safety import assess_patch
from app_server.tools.turn_diff import TrackedChange, TurnDiffTracker
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.threads.sampling import ToolCall
    from app_server.tools.contracts import ToolContext

__all__ = ["DECLINED_OUTPUT", "PatchResult", "handle_apply_patch", "run_patch"]

logger = logging.getLogger(__name__)

#: What the model is told when the user declines a patch (Codex's text).
DECLINED_OUTPUT = "patch rejected by user"
APPROVAL_METHOD = "item/fileChange/requestApproval"


@dataclass(frozen=True, slots=True)
class PatchResult:
    """What running a patch told the model, whether it applied, and whether the turn must end."""

    text: str
    applied: bool = False
    end_turn: bool = False



async def handle_apply_patch(ctx: ToolContext, call: ToolCall) -> ToolOutcome:
    """Run the model's ``apply_patch`` call (freeform, or the function form with an ``input`` string)."""
    if call.custom:
        patch_text = call.arguments
    else:
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError as exc:
            return ToolOutcome(call_output(call, f"failed to parse function arguments: {exc}"))
        given = args.get("input") if isinstance(args, dict) else None
        if not isinstance(given, str):
            return ToolOutcome(call_output(call, "failed to parse function arguments: missing field `input`"))
        patch_text = given
    result = await run_patch(ctx, call.call_id, patch_text, Path(ctx.thread.settings.cwd))
    return ToolOutcome(call_output(call, result.text), end_turn=result.end_turn)


def _wire_change(change: FileChange) -> JsonObj:
    kind: JsonObj = {"type": change.kind}
    if change.kind == "update":
        kind["move_path"] = change.move_path
    return {"path": change.path, "kind": kind, "diff": change.unified_diff}


def file_change_item(item_id: str, changes: list[FileChange], *, started_at_ms: int) -> JsonObj:
    """A started (``inProgress``) ``fileChange`` item, its changes in path order as Codex lists them."""
    ordered = sorted(changes, key=lambda c: c.path)
    return {"type": "fileChange", "id": item_id, "changes": [_wire_change(c) for c in ordered],
            "status": "inProgress", "startedAtMs": started_at_ms, "completedAtMs": None}


def _targets(changes: list[FileChange]) -> list[Path]:
    paths = [Path(c.path) for c in changes]
    paths += [Path(c.move_path) for c in changes if c.move_path is not None]
    return paths


def _exec_style(exit_code: int, wall_s: float, body: str) -> str:
    return f"Exit code: {exit_code}\nWall time: {wall_s:.1f} seconds\nOutput:\n{body}"


async def run_patch(ctx: ToolContext, item_id: str, patch_text: str, cwd: Path) -> PatchResult:
    """Parse, check, (ask,) apply and report one patch; ``item_id`` names its fileChange item."""
    thread, turn = ctx.thread, ctx.turn
    environment = thread.services.environment
    if await environment.spawner() is None or environment.execution_environment is None:
        return PatchResult(NO_ENVIRONMENT)
    fs = EnvironmentPatchFs(environment.execution_environment)
    t0 = time.monotonic()
    try:
        changes = await plan_changes(parse_patch(patch_text), cwd, fs.read_text)
    except PatchError as exc:
        return PatchResult(f"{VERIFICATION_FAILED_PREFIX}{exc.message}")
    if not changes:
        return PatchResult("patch rejected: empty patch")
    settings = thread.settings
    targets = _targets(changes)
    approved = thread.approved_files
    if targets and all(t in approved for t in targets):
        verdict = "auto"
    else:
        safety = assess_patch(targets, approval_policy=settings.approval_policy, sandbox_mode=settings.sandbox_mode,
                              cwd=cwd, extra_roots=settings.writable_roots)
        if safety.verdict == "reject":
            return PatchResult(f"patch rejected: {safety.reason}")
        verdict = safety.verdict
    item = file_change_item(item_id, changes, started_at_ms=it.now_ms())
    await thread.emit(notices.item_started(item, thread.id, turn.id))
    if verdict == "ask":
        decision = await _ask(ctx, item)
        if decision.kind == "cancel":  # Codex 0.169 ends the turn leaving the item open (no item/completed)
            return PatchResult(DECLINED_OUTPUT, end_turn=True)
        if not decision.runs:
            await ctx.complete_item(dict(item, status="declined", completedAtMs=it.now_ms()))
            return PatchResult(DECLINED_OUTPUT)
        if decision.kind == "acceptForSession":
            approved.update(targets)
    try:
        summary = await apply_changes(changes, fs)
    except (PatchError, OSError) as exc:
        message = exc.message if isinstance(exc, PatchError) else os_error_text(exc)
        await ctx.complete_item(dict(item, status="failed", completedAtMs=it.now_ms()))
        return PatchResult(_exec_style(1, time.monotonic() - t0, message if message.endswith("\n")
                                       else message + "\n"))
    await ctx.complete_item(dict(item, status="completed", completedAtMs=it.now_ms()))
    await _announce_diff(ctx, changes, cwd)
    return PatchResult(_exec_style(0, time.monotonic() - t0, summary), applied=True)


async def _announce_diff(ctx: ToolContext, changes: list[FileChange], cwd: Path) -> None:
    tracker = ctx.turn.diff
    if tracker is None:
        tracker = ctx.turn.diff = TurnDiffTracker(cwd)
    tracker.track(
        TrackedChange(Path(c.path), c.kind, Path(c.move_path) if c.move_path is not None else None,
                      c.old_text, c.new_text)
        for c in changes
    )
    diff = tracker.unified_diff()
    if diff is not None:  # and again after the model's response (the runner), as Codex 0.169 does
        await ctx.thread.emit(notices.turn_diff_updated(ctx.thread.id, ctx.turn.id, diff))


async def _ask(ctx: ToolContext, item: JsonObj) -> approvals.Decision:
    """Send ``item/fileChange/requestApproval`` and wait for the user's decision (decline if nobody can)."""
    thread, turn = ctx.thread, ctx.turn
    params: JsonObj = {"threadId": thread.id, "turnId": turn.id, "itemId": item["id"],
                       "startedAtMs": item["startedAtMs"], "reason": None, "grantRoot": None}
    try:
        decision = await ask_clients(ctx, APPROVAL_METHOD, params, approvals.parse_decision)
    except NoAnswer as exc:
        if exc.nobody:
            return approvals.Decision("decline")
        logger.info("patch approval for %s ended without a decision: %s", item["id"], exc.cause)
        decision = approvals.Decision("decline")
    await thread.emit_status()  # no longer waiting on approval, whatever the answer
    return decision
