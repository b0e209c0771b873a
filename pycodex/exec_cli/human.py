"""The readable transcript of ``pycodex exec`` without ``--json`` (sans-IO).

Split as Codex splits it: the whole transcript (header, prompt, commands, messages, token count, errors)
goes to stderr, and stdout gets only the final agent message, so ``pycodex exec "..." > answer.txt``
captures just the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycodex import COMPATIBLE_CODEX_VERSION, __version__
from pycodex.item_views import ITEM_VIEWS, HumanStyle
from pycodex.json_types import JsonObj

__all__ = ["HumanRenderer", "RunHeader"]


@dataclass(frozen=True)
class RunHeader:
    """The settings the transcript's header shows."""

    workdir: str
    model: str
    provider: str
    approval: str
    sandbox: str
    effort: str | None
    summary: str | None
    session_id: str


class HumanRenderer:
    """Turns v2 notifications into transcript text for stderr."""

    def __init__(self, *, color: bool = False, hide_reasoning: bool = False) -> None:
        # hide_reasoning: config `hide_agent_reasoning`, as codex exec honours it
        self._style = HumanStyle(color=color, hide_reasoning=hide_reasoning)

    def _label(self, text: str) -> str:
        return self._style.label(text)

    def header(self, h: RunHeader, prompt: str) -> str:
        """The transcript's header: version, settings and the prompt."""
        return (
            f"pycodex {__version__} (Codex {COMPATIBLE_CODEX_VERSION} compatible)\n--------\n"
            f"workdir: {h.workdir}\nmodel: {h.model}\nprovider: {h.provider}\napproval: {h.approval}\n"
            f"sandbox: {h.sandbox}\nreasoning effort: {h.effort or 'none'}\n"
            f"reasoning summaries: {h.summary or 'none'}\nsession id: {h.session_id}\n--------\n"
            f"{self._label('user')}\n{prompt}\n"
        )

    def feed(self, method: str, params: JsonObj) -> str:
        """The transcript text for one v2 notification ("" for most)."""
        item = params.get("item") if isinstance(params.get("item"), dict) else {}
        assert isinstance(item, dict)
        kind = item.get("type")
        if method in ("warning", "configWarning"):
            return f"warning: {params.get('message') or params.get('summary') or ''}\n"
        if method == "error":
            error = params.get("error") or {}
            details = error.get("additionalDetails")
            message = str(error.get("message", ""))
            if params.get("willRetry"):
                return f"{message} ({details})\n" if details else f"{message}\n"
            return f"ERROR: {message}\n"
        if method not in ("item/started", "item/completed"):
            return ""
        view = ITEM_VIEWS.view_of(kind)
        text = view.human_started if method == "item/started" else view.human_completed
        return text(item, self._style) if text is not None else ""

    def tokens_used(self, total: int) -> str:
        """The transcript's token count at the end of the run."""
        return f"{self._label('tokens used')}\n{total}\n"
