"""review/start: a code review as a turn of a loaded thread (inline delivery).

Codex 0.169 answers at once with the turn (holding one userMessage whose id is the turn id and whose text
is the user-facing hint) and ``reviewThreadId``; the turn then shows an ``enteredReviewMode`` item, the
model's work, and an ``exitedReviewMode`` item holding the review. Unlike Codex, pycodex runs the review
in the thread itself rather than in a hidden sub-agent. Like Codex 0.169 it takes no detached delivery."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from app_server.context import HandlerContext
from app_server.protocol import notices
from app_server.protocol.responses_threads import ReviewStartResponse
from app_server.protocol.thread_requests import (
    BaseBranch,
    Commit,
    Custom,
    ReviewStartParams,
    UncommittedChanges,
)
from app_server.store import new_uuid7
from app_server.threads import items as it
from app_server.threads.lifecycle import TurnEvent
from app_server.threads.runner import TurnRunner
from app_server.threads.services import TurnServices
from app_server.threads.state import ThreadRuntime, TurnState
from pycodex.json_types import JsonObj
from pycodex.jsonrpc.errors import InvalidRequest

__all__ = ["ReviewStartParams", "review_request", "review_start"]


def _merge_base(cwd: Path, branch: str) -> str | None:
    try:
        done = subprocess.run(["git", "merge-base", "HEAD", branch], cwd=cwd, capture_output=True, text=True,
                              timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and sha else None


def check_target(target: UncommittedChanges | BaseBranch | Commit | Custom) -> None:
    """Refuse an empty target field with Codex's messages."""
    for kind, field in ((Custom, "instructions"), (BaseBranch, "branch"), (Commit, "sha")):
        if isinstance(target, kind) and not str(getattr(target, field)).strip():
            raise InvalidRequest(f"{field} must not be empty")


def review_request(target: UncommittedChanges | BaseBranch | Commit | Custom, cwd: Path) -> tuple[str, str]:
    """(prompt for the model, hint for the user) of a target; the hints are Codex's."""
    if isinstance(target, Custom):
        text = target.instructions.strip()
        return text, text
    if isinstance(target, UncommittedChanges):
        return ("Review the working tree: staged, unstaged and untracked changes (`git status`, `git diff`, "
                "`git diff --staged`). Report prioritised, actionable findings.", "current changes")
    if isinstance(target, BaseBranch):
        base = _merge_base(cwd, target.branch)
        where = (f"`git diff {base}` (the merge base with {target.branch!r})" if base
                 else f"the diff from the merge base of HEAD and {target.branch!r}'s upstream")
        return (f"Review the changes of this branch against {target.branch!r}: inspect {where}. "
                "Report prioritised, actionable findings.", f"changes against '{target.branch}'")
    short = target.sha[:7]
    titled = f" ({target.title})" if target.title else ""
    return (f"Review the changes made by commit {target.sha}{titled} (`git show {target.sha}`). "
            "Report prioritised, actionable findings.",
            f"commit {short}: {target.title}" if target.title else f"commit {short}")


def render_review(text: str) -> str:
    """The review text shown in ``exitedReviewMode``: a structured JSON answer (findings and an overall
    explanation) as readable text, anything else as it came."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        return text
    parts = [str(data.get("overall_explanation") or "").strip()]
    lines = []
    for finding in data["findings"]:
        if not isinstance(finding, dict):
            continue
        where = finding.get("code_location") or {}
        path = where.get("absolute_file_path", "") if isinstance(where, dict) else ""
        span = where.get("line_range") or {} if isinstance(where, dict) else {}
        loc = f" — {path}:{span.get('start', '')}-{span.get('end', '')}" if path else ""
        lines.append(f"- {finding.get('title', '')}{loc}\n  {finding.get('body', '')}".rstrip())
    if lines:
        parts.append("Review comment" + ("s" if len(lines) > 1 else "") + ":\n\n" + "\n".join(lines))
    return "\n\n".join(p for p in parts if p) or text


class ReviewRunner(TurnRunner):
    """A model turn framed by the review-mode items."""

    def __init__(self, *, thread: ThreadRuntime, turn: TurnState, services: TurnServices, hint: str) -> None:
        super().__init__(thread=thread, turn=turn, services=services)
        self.hint = hint
        self._entered = False

    async def _mode_item(self, kind: str, review: str) -> None:
        item = {"type": kind, "id": new_uuid7(), "review": review, "startedAtMs": it.now_ms(), "completedAtMs": None}
        await self.thread.emit(notices.item_started(item, self.thread.id, self.turn.id))
        await self.complete_item(dict(item, completedAtMs=it.now_ms()))

    async def _user_input(self, inputs: list[JsonObj], *, client_id: str | None = None) -> None:
        if not self._entered:  # the first input is the review request itself
            self._entered = True
            await self._mode_item("enteredReviewMode", self.hint)
        await super()._user_input(inputs, client_id=client_id)

    async def _end(self, outcome: TurnEvent, error: JsonObj | None) -> None:
        if outcome is TurnEvent.COMPLETE:
            last = self.turn.last_agent_message
            await self._mode_item("exitedReviewMode", render_review(last["text"]) if last else "")
        await super()._end(outcome, error)


async def review_start(ctx: HandlerContext, params: ReviewStartParams) -> ReviewStartResponse:
    services = ctx.services
    check_target(params.target)
    thread = services.threads.get_loaded(params.thread_id)
    if thread.active is not None:
        raise InvalidRequest(f"thread {thread.id} already has an active turn")
    prompt, hint = await asyncio.to_thread(review_request, params.target, Path(thread.settings.cwd))
    services.threads.subscribe(thread, ctx.session)
    inputs: list[JsonObj] = [{"type": "text", "text": prompt, "text_elements": []}]
    turn = TurnState(new_uuid7(), inputs=inputs)
    turn_services = await services.turn_services(thread, ctx.session)
    runner = ReviewRunner(thread=thread, turn=turn, services=turn_services, hint=hint)
    ctx.session.after_response(thread.start_turn(turn, runner, services.spawn))
    shown = {"type": "userMessage", "id": turn.id, "clientId": None,
             "content": it.user_input_to_content([{"type": "text", "text": hint}]),
             "startedAtMs": None, "completedAtMs": None}
    accepted = dict(turn.wire(view="notLoaded"), rootTurnId=None, items=[shown], startedAt=None)
    return ReviewStartResponse(turn=accepted, review_thread_id=thread.id)
