"""The readable transcript of ``pycodex exec`` without ``--json`` (sans-IO).

Split as Codex splits it: the whole transcript (header, prompt, commands, messages, token count, errors)
goes to stderr, and stdout gets only the final agent message, so ``pycodex exec "..." > answer.txt``
captures just the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycodex import COMPATIBLE_CODEX_VERSION, __version__
from pycodex.json_types import JsonObj

__all__ = ["HumanRenderer", "RunHeader"]


@dataclass(frozen=True)
class RunHeader:
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
        self._color = color
        self._hide_reasoning = hide_reasoning  # config `hide_agent_reasoning`, as codex exec honours it

    def _label(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self._color else text

    def header(self, h: RunHeader, prompt: str) -> str:
        return (
            f"pycodex {__version__} (Codex {COMPATIBLE_CODEX_VERSION} compatible)\n--------\n"
            f"workdir: {h.workdir}\nmodel: {h.model}\nprovider: {h.provider}\napproval: {h.approval}\n"
            f"sandbox: {h.sandbox}\nreasoning effort: {h.effort or 'none'}\n"
            f"reasoning summaries: {h.summary or 'none'}\nsession id: {h.session_id}\n--------\n"
            f"{self._label('user')}\n{prompt}\n"
        )

    def feed(self, method: str, params: JsonObj) -> str:
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
        if method == "item/started" and kind == "commandExecution":
            return f"{self._label('exec')}\n{item.get('command')} in {item.get('cwd')}\n"
        if method == "item/started" and kind == "fileChange":
            return f"{self._label('apply patch')}\n"
        if method != "item/completed":
            return ""
        if kind == "reasoning":
            if self._hide_reasoning:
                return ""
            text = "\n".join(str(s) for s in item.get("summary") or [])
            return f"{text}\n" if text else ""
        if kind == "agentMessage":
            return f"{self._label('codex')}\n{item.get('text', '')}\n"
        if kind == "commandExecution":
            code = item.get("exitCode")
            took = f"{item.get('durationMs') or 0}ms"
            verdict = f" succeeded in {took}:" if code == 0 else f" exited {code} in {took}:"
            return f"{verdict}\n{item.get('aggregatedOutput') or ''}\n"
        if kind == "fileChange":
            lines = [f"{(c.get('kind') or {}).get('type', 'update')[0].upper()} {c.get('path')}"
                     for c in item.get("changes") or [] if isinstance(c, dict)]
            status = "succeeded" if item.get("status") == "completed" else str(item.get("status"))
            return f"patch: {status}\n" + "".join(f"{line}\n" for line in lines)
        return ""

    def tokens_used(self, total: int) -> str:
        return f"{self._label('tokens used')}\n{total}\n"
