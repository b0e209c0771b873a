"""Command line of ``pycodex exec`` (the options of ``codex exec`` 0.169 that pycodex implements).

``codex exec [OPTIONS] [PROMPT]`` and ``codex exec [OPTIONS] resume|fork ...`` share one position, which
argparse cannot express; so the argv is split at the first positional that names a subcommand, the
exec options are parsed with one parser and the subcommand's with its own, and the subcommand's
options win where both are given.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["ExecArgs", "UsageError", "parse_exec_args"]

SUBCOMMANDS = ("resume", "fork")
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")


class UsageError(Exception):
    """Bad command line: printed with the usage line, exit status 2 (as clap does)."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass
class ExecArgs:
    prompt: str | None = None
    command: str | None = None  # None, "resume" or "fork"
    session_id: str | None = None
    last: bool = False
    all: bool = False
    config: list[str] = field(default_factory=list)
    model: str | None = None
    sandbox: str | None = None
    cd: str | None = None
    add_dirs: list[str] = field(default_factory=list)
    skip_git_repo_check: bool = False
    ephemeral: bool = False
    output_schema: str | None = None
    output_last_message: str | None = None
    color: str = "auto"
    json: bool = False
    bypass: bool = False
    thread_source: str | None = None
    images: list[str] = field(default_factory=list)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message, self.format_usage().strip())


def _common(parser: argparse.ArgumentParser) -> None:
    """Options ``codex exec`` accepts both before and after ``resume``/``fork``."""
    parser.add_argument("-c", "--config", action="append", default=[], metavar="key=value",
                        help="override a config.toml value (dotted key; the value is parsed as TOML)")
    parser.add_argument("-m", "--model", help="model the agent should use")
    parser.add_argument("-i", "--image", action="append", default=[], dest="images", metavar="FILE",
                        help="image(s) to attach to the prompt")
    parser.add_argument("--dangerously-bypass-approvals-and-sandbox", action="store_true", dest="bypass",
                        help="run commands without a sandbox (only for externally sandboxed environments)")
    parser.add_argument("--thread-source", metavar="SOURCE", help="source classification for new threads")
    parser.add_argument("--skip-git-repo-check", action="store_true", help="allow running outside a Git repository")
    parser.add_argument("--ephemeral", action="store_true", help="run without persisting session files")
    parser.add_argument("--output-schema", metavar="FILE", help="JSON Schema file for the final response's shape")
    parser.add_argument("--json", "--experimental-json", action="store_true", dest="json",
                        help="print events to stdout as JSONL")
    parser.add_argument("-o", "--output-last-message", metavar="FILE",
                        help="write the agent's last message to FILE")


def build_exec_parser(prog: str = "pycodex exec") -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="Run the agent non-interactively (one turn), like `codex exec`.",
                     epilog="Subcommands: `resume [--last|SESSION_ID] [PROMPT]`, `fork SESSION_ID [PROMPT]`.")
    _common(parser)
    parser.add_argument("-s", "--sandbox", choices=SANDBOX_MODES, help="sandbox policy for model commands")
    parser.add_argument("-C", "--cd", metavar="DIR", help="use DIR as the agent's working root")
    parser.add_argument("--add-dir", action="append", default=[], dest="add_dirs", metavar="DIR",
                        help="another writable directory beside the workspace (repeatable)")
    parser.add_argument("--color", choices=("always", "never", "auto"), default="auto")
    parser.add_argument("prompt", nargs="?", metavar="PROMPT",
                        help="instructions; read from stdin when omitted or `-` (piped stdin beside a prompt "
                             "is appended as a <stdin> block)")
    return parser


def _resume_parser(prog: str) -> argparse.ArgumentParser:
    parser = _Parser(prog=f"{prog} resume",
                     description="Resume a previous session by id or pick the most recent with --last.")
    _common(parser)
    parser.add_argument("--last", action="store_true", help="resume the most recent session of this directory")
    parser.add_argument("--all", action="store_true", help="with --last: any directory")
    parser.add_argument("positionals", nargs="*", metavar="[SESSION_ID] [PROMPT]")
    return parser


def _fork_parser(prog: str) -> argparse.ArgumentParser:
    parser = _Parser(prog=f"{prog} fork", description="Fork a previous session by id into a new session.")
    _common(parser)
    parser.add_argument("session_id", metavar="SESSION_ID")
    parser.add_argument("prompt", nargs="?", metavar="PROMPT")
    return parser


def _subcommand_index(argv: Sequence[str], parser: argparse.ArgumentParser) -> int | None:
    """Index of ``resume``/``fork`` if it is the first positional of ``argv``."""
    takes_value = {
        opt for action in parser._actions if action.nargs != 0 and action.option_strings
        for opt in action.option_strings
    }
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            return None
        if token.startswith("-") and token != "-":
            if token in takes_value:
                i += 1  # its value follows
            i += 1
            continue
        return i if token in SUBCOMMANDS else None
    return None


def parse_exec_args(argv: Sequence[str], prog: str = "pycodex exec") -> ExecArgs:
    parser = build_exec_parser(prog)
    index = _subcommand_index(argv, parser)
    head = list(argv if index is None else argv[:index])
    ns = parser.parse_args(head)
    args = ExecArgs(
        prompt=ns.prompt, config=list(ns.config), model=ns.model, sandbox=ns.sandbox, cd=ns.cd,
        add_dirs=list(ns.add_dirs), skip_git_repo_check=ns.skip_git_repo_check, ephemeral=ns.ephemeral,
        output_schema=ns.output_schema, output_last_message=ns.output_last_message, color=ns.color,
        json=ns.json, bypass=ns.bypass, thread_source=ns.thread_source, images=list(ns.images),
    )
    if index is None:
        return args
    args.command = argv[index]
    tail = list(argv[index + 1 :])
    if args.command == "resume":
        sub = _resume_parser(prog)
        sns = sub.parse_args(tail)
        args.last, args.all = sns.last, sns.all
        positionals = list(sns.positionals)
        if args.last:
            if len(positionals) > 1:
                sub.error("--last takes no SESSION_ID; pass only the PROMPT")
            args.session_id = None
            sub_prompt = positionals[0] if positionals else None
        else:
            if not positionals:
                sub.error("give a SESSION_ID or --last")
            if len(positionals) > 2:
                sub.error(f"unexpected argument '{positionals[2]}'")
            args.session_id = positionals[0]
            sub_prompt = positionals[1] if len(positionals) > 1 else None
    else:
        sub = _fork_parser(prog)
        sns = sub.parse_args(tail)
        args.session_id = sns.session_id
        sub_prompt = sns.prompt
    if sub_prompt is not None:
        args.prompt = sub_prompt
    args.config += sns.config
    args.images += sns.images
    for name in ("model", "output_schema", "output_last_message", "thread_source"):
        value = getattr(sns, name)
        if value is not None:
            setattr(args, name, value)
    for flag in ("skip_git_repo_check", "ephemeral", "json", "bypass"):
        if getattr(sns, flag):
            setattr(args, flag, True)
    return args
