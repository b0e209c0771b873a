"""Where the prompt of ``pycodex exec`` comes from (the Git repository check is pycodex/git_repo.py).

As in Codex 0.169: no prompt (or ``-``) reads the whole prompt from stdin; a prompt argument with a
piped stdin reads stdin too and appends it as a ``<stdin>`` block; an empty result is an error.
"""

from __future__ import annotations

from typing import IO

__all__ = ["PromptError", "compose_prompt", "read_prompt"]

NO_PROMPT_TTY = "No prompt provided. Either specify one as an argument or pipe the prompt into stdin."
NO_PROMPT_STDIN = "No prompt provided via stdin."


class PromptError(Exception):
    """No usable prompt (exit status 1)."""


def compose_prompt(prompt: str, stdin_text: str) -> str:
    """A prompt argument plus piped stdin, framed the way Codex frames it."""
    if not stdin_text.strip():
        return prompt
    body = stdin_text if stdin_text.endswith("\n") else stdin_text + "\n"
    return f"{prompt}\n\n<stdin>\n{body}</stdin>"


def _read_all(stdin: IO[str]) -> str:
    try:
        return stdin.buffer.read().decode("utf-8", errors="replace") if hasattr(stdin, "buffer") else stdin.read()
    except OSError as exc:
        raise PromptError(f"Failed to read prompt from stdin: {exc.strerror or exc}") from None


def read_prompt(prompt: str | None, stdin: IO[str], stderr: IO[str]) -> str:
    """The prompt from the argument or, for none or ``-``, from stdin, as ``codex exec`` reads it."""
    interactive = stdin.isatty()
    if prompt is not None and prompt != "-":
        if interactive:
            return prompt
        print("Reading additional input from stdin...", file=stderr, flush=True)
        return compose_prompt(prompt, _read_all(stdin))
    if interactive:
        raise PromptError(NO_PROMPT_TTY)
    if prompt is None:
        print("Reading prompt from stdin...", file=stderr, flush=True)
    text = _read_all(stdin)
    if not text.strip():
        raise PromptError(NO_PROMPT_STDIN)
    return text
