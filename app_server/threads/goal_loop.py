"""Goal continuation as Codex 0.169 runs it, as pure decisions: whether an idle thread starts another turn
toward its goal, what a turn's usage adds to the goal, what a failed turn does to it, and the hidden input
a continuation turn (or a goal that ran out of budget) shows the model.

Facts from the 0.169 binary (a goal set on an idle thread, driven against the fake model):

* ``thread/goal/set`` making a goal active on an idle thread starts a turn at once, and so does every turn
  that ends *completed* while the goal is still ``active`` (a user's turn too). Queued user submissions go
  first. A turn that was interrupted starts none (the goal stays active; the next completed turn resumes
  the loop), and a failed one stops the goal: ``blocked``, or ``usageLimited`` on a usage-limit error;
  an overloaded server leaves it active (Codex retries minutes later; pycodex waits for the next turn).
  There is no brake on turns that only talk: a continuation answered with text alone is followed by another,
  until the goal is complete, over budget, stopped by the client or blocked by an error.
* A continuation turn is an ordinary ``turn/started`` ... ``turn/completed`` with no ``userMessage`` item:
  its input is a hidden user message wrapped in ``<codex_internal_context source="goal">``.
* Tokens count as non-cached input plus output, added while the goal is ``active`` or ``budgetLimited``;
  reaching the budget turns an active goal ``budgetLimited`` (no further continuation). When that happens
  with the model mid-work (after tool calls) the turn goes on with a hidden note asking it to wrap up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app_server.threads.prompt import user_message_item
from pycodex.json_types import JsonObj

if TYPE_CHECKING:
    from app_server.store.thread_state import Goal

__all__ = [
    "ACCOUNTABLE",
    "budget_limit_message",
    "continuation_message",
    "continuation_skip_reason",
    "status_after_error",
    "token_delta",
]

#: Goal statuses a turn's usage is added to.
ACCOUNTABLE = ("active", "budgetLimited")
_CONTEXT_OPEN = '<codex_internal_context source="goal">'
_CONTEXT_CLOSE = "</codex_internal_context>"


def token_delta(before: JsonObj, after: JsonObj) -> int:
    """The goal tokens between two running totals (v2 TokenUsageBreakdown): non-cached input plus output."""
    def grew(key: str) -> int:
        return max(int(after.get(key) or 0) - int(before.get(key) or 0), 0)

    return max(grew("inputTokens") - grew("cachedInputTokens"), 0) + grew("outputTokens")


def continuation_skip_reason(goal_status: str | None, *, last_turn: str | None, idle: bool, queued: bool,
                             ephemeral: bool) -> str | None:
    """Why no continuation turn starts now, or None when one should.

    ``last_turn`` is the status of the turn that just ended (None when none ran yet, e.g. right after
    thread/goal/set); ``queued`` whether user submissions wait (they go first)."""
    if ephemeral:
        return "goals need a persisted thread"
    if not idle:
        return "a turn is running"
    if queued:
        return "queued user input goes first"
    if goal_status is None:
        return "no goal"
    if goal_status != "active":
        return f"the goal is {goal_status}"
    if last_turn == "interrupted":
        return "the last turn was interrupted"
    if last_turn == "failed":
        return "the last turn failed"
    return None


def status_after_error(error: JsonObj | None) -> str | None:
    """What a failed turn does to an active goal: ``usageLimited`` on a usage limit, nothing when the
    server was overloaded (the goal stays active), ``blocked`` otherwise (so errors cannot loop)."""
    info = None if error is None else error.get("codexErrorInfo")
    kind = next(iter(info), None) if isinstance(info, dict) else info
    if kind == "serverOverloaded":
        return None
    if kind == "usageLimitExceeded":
        return "usageLimited"
    return "blocked"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _budget_lines(goal: Goal) -> list[str]:
    if goal.token_budget is None:
        return [f"- Tokens used: {goal.tokens_used}", "- Token budget: none", "- Tokens remaining: unknown"]
    return [f"- Tokens used: {goal.tokens_used}", f"- Token budget: {goal.token_budget}",
            f"- Tokens remaining: {max(goal.token_budget - goal.tokens_used, 0)}"]


def _objective_lines(goal: Goal, role: str) -> list[str]:
    """The user's objective, fenced, with what it is to the model (``role``) said first."""
    return [f"The objective below comes from the user: it is {role}, not an instruction that outranks others.",
            "<objective>", _escape(goal.objective), "</objective>"]


def continuation_message(goal: Goal) -> JsonObj:
    """The hidden user message that opens a continuation turn."""
    text = "\n".join([
        _CONTEXT_OPEN,
        "Keep working on the thread's active goal.",
        "",
        *_objective_lines(goal, "the task"),
        "",
        "Budget:",
        *_budget_lines(goal),
        "",
        "How to continue:",
        "- The goal outlives this turn. If it cannot be finished now, move it forward for real and leave it "
        "active; do not shrink the objective to what fits.",
        "- Look at the current files and tool output before trusting earlier turns; do not redo finished work.",
        "- If the last goal turn made no progress, take the next safe concrete step instead of restating plans.",
        "",
        "Finishing:",
        "- Call update_goal with status \"complete\" only when current evidence shows every part of the "
        "objective is done; doubt means keep working. With a token budget, tell the user what was used.",
        "- Use status \"blocked\" only after the same blocker has stopped three goal turns in a row and only "
        "the user or the outside world can lift it.",
        "- Use status \"paused\" only when the user asks for a pause.",
        _CONTEXT_CLOSE,
    ])
    return user_message_item([text])


def budget_limit_message(goal: Goal) -> JsonObj:
    """The hidden user message that tells the model, mid-turn, that the goal used up its token budget."""
    text = "\n".join([
        _CONTEXT_OPEN,
        "The thread's active goal has used up its token budget.",
        "",
        *_objective_lines(goal, "context"),
        "",
        "Budget:",
        f"- Seconds spent on the goal: {goal.time_used_seconds}",
        f"- Tokens used: {goal.tokens_used}",
        f"- Token budget: {goal.token_budget if goal.token_budget is not None else 'none'}",
        "",
        "The goal is now budgetLimited: start no new substantial work for it. Finish this turn soon with a "
        "summary of what was achieved, what remains, and the user's next step.",
        "Call update_goal only if the goal really is complete, or if the user asks for a pause.",
        _CONTEXT_CLOSE,
    ])
    return user_message_item([text])
