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

__all__ = ["ExecArgs", "UsageError", "parse_exec_args", "split_root_args"]

SUBCOMMANDS = ("resume", "fork")
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
APPROVAL_POLICIES = ("untrusted", "on-failure", "on-request", "never")
# Root options (`codex -a never -s workspace-write exec ...`) and the exec option each becomes.
_ROOT_VALUE_FLAGS = {
    "-c": "-c", "--config": "-c", "-m": "-m", "--model": "-m", "-s": "-s", "--sandbox": "-s",
    "-a": "-a", "--ask-for-approval": "-a", "-C": "-C", "--cd": "-C", "--add-dir": "--add-dir",
    "-i": "-i", "--image": "-i", "--enable": "--enable", "--disable": "--disable",
}
_ROOT_SWITCHES = ("--dangerously-bypass-approvals-and-sandbox", "--strict-config")


class UsageError(Exception):
    """Bad command line: printed with the usage line, exit status 2 (as clap does)."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


@dataclass
class ExecArgs:
    """The parsed ``pycodex exec`` command line (options as ``codex exec`` names them)."""

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
    approval: str | None = None
    strict_config: bool = False
    profile: str | None = None
    remote: str | None = None  # Codex 0.171: run on an app-server already running at this address
    remote_auth_token_env: str | None = None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message, self.format_usage().strip())


def _common(parser: argparse.ArgumentParser) -> None:
    """Options ``codex exec`` accepts both before and after ``resume``/``fork``."""
    parser.add_argument("-c", "--config", action="append", default=[], metavar="key=value",
                        help="override a config.toml value (dotted key; the value is parsed as TOML)")
    parser.add_argument("--enable", action="append", default=[], metavar="FEATURE",
                        help="enable a feature (same as -c features.FEATURE=true)")
    parser.add_argument("--disable", action="append", default=[], metavar="FEATURE",
                        help="disable a feature (same as -c features.FEATURE=false)")
    parser.add_argument("--strict-config", action="store_true", help="treat unknown config keys as errors")
    parser.add_argument("-p", "--profile", metavar="NAME",
                        help="layer $CODEX_HOME/NAME.config.toml on top of the base user config")
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
    """The ``pycodex exec`` argument parser (errors worded as ``codex exec`` words them)."""
    parser = _Parser(prog=prog, description="Run the agent non-interactively (one turn), like `codex exec`.",
                     epilog="Subcommands: `resume [--last|SESSION_ID] [PROMPT]`, `fork SESSION_ID [PROMPT]`.")
    _common(parser)
    parser.add_argument("-s", "--sandbox", choices=SANDBOX_MODES, help="sandbox policy for model commands")
    parser.add_argument("-a", "--ask-for-approval", choices=APPROVAL_POLICIES, dest="approval",
                        help="approval policy (default never; requests for approval are declined)")
    parser.add_argument("-C", "--cd", metavar="DIR", help="use DIR as the agent's working root")
    parser.add_argument("--add-dir", action="append", default=[], dest="add_dirs", metavar="DIR",
                        help="another writable directory beside the workspace (repeatable)")
    parser.add_argument("--color", choices=("always", "never", "auto"), default="auto")
    parser.add_argument("--remote", metavar="ADDR", help="connect to an existing app server "
                        "(ws://host:port, wss://host:port, unix:// or unix://PATH)")
    parser.add_argument("--remote-auth-token-env", metavar="ENV_VAR",
                        help="environment variable containing the remote WebSocket bearer token")
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


def _features(ns: argparse.Namespace) -> list[str]:
    return [f"features.{f}=true" for f in ns.enable] + [f"features.{f}=false" for f in ns.disable]


def split_root_args(argv: Sequence[str]) -> list[str] | None:
    """The exec argv when ``argv`` (after ``pycodex``) runs ``exec``/``e``, with root options moved after it."""
    moved: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        name, eq, value = token.partition("=")
        if token in ("exec", "e"):
            return [*moved, *argv[i + 1 :]]
        if name in _ROOT_VALUE_FLAGS and name.startswith("--") and eq:
            moved += [_ROOT_VALUE_FLAGS[name], value]
            i += 1
        elif token in _ROOT_VALUE_FLAGS and i + 1 < len(argv):
            moved += [_ROOT_VALUE_FLAGS[token], argv[i + 1]]
            i += 2
        elif token in _ROOT_SWITCHES:
            moved.append(token)
            i += 1
        else:
            return None
    return None


def _subcommand_index(argv: Sequence[str], parser: argparse.ArgumentParser) -> int | None:
    """Index of ``resume``/``fork`` if it is the first positional of ``argv``, or the second after a PROMPT
    (Codex takes ``exec "prompt" resume --last``; a prompt after the subcommand wins)."""
    takes_value = {
        opt for action in parser._actions if action.nargs != 0 and action.option_strings
        for opt in action.option_strings
    }
    i = 0
    seen_prompt = False
    while i < len(argv):
        token = argv[i]
        if token == "--":
            return None
        if token.startswith("-") and token != "-":
            if token in takes_value:
                i += 1  # its value follows
            i += 1
            continue
        if token in SUBCOMMANDS:
            return i
        if seen_prompt:
            return None
        seen_prompt = True
        i += 1
    return None


def parse_exec_args(argv: Sequence[str], prog: str = "pycodex exec") -> ExecArgs:
    """Parse ``argv`` of ``pycodex exec``, with its ``resume`` and ``fork`` subcommands."""
    parser = build_exec_parser(prog)
    index = _subcommand_index(argv, parser)
    head = list(argv if index is None else argv[:index])
    ns = parser.parse_args(head)
    args = ExecArgs(
        prompt=ns.prompt, config=list(ns.config), model=ns.model, sandbox=ns.sandbox, cd=ns.cd,
        add_dirs=list(ns.add_dirs), skip_git_repo_check=ns.skip_git_repo_check, ephemeral=ns.ephemeral,
        output_schema=ns.output_schema, output_last_message=ns.output_last_message, color=ns.color,
        json=ns.json, bypass=ns.bypass, thread_source=ns.thread_source, images=list(ns.images),
        approval=ns.approval, strict_config=ns.strict_config, profile=ns.profile, remote=ns.remote,
        remote_auth_token_env=ns.remote_auth_token_env,
    )
    args.config += _features(ns)
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
    args.config += [*sns.config, *_features(sns)]
    args.images += sns.images
    for name in ("model", "output_schema", "output_last_message", "thread_source", "profile"):
        value = getattr(sns, name)
        if value is not None:
            setattr(args, name, value)
    for flag in ("skip_git_repo_check", "ephemeral", "json", "bypass", "strict_config"):
        if getattr(sns, flag):
            setattr(args, flag, True)
    return args
