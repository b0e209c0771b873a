"""``pycodex threads list|show|export``: the stored threads of CODEX_HOME in the terminal.

Reads the app-server's store (JSONL rollouts plus the SQLite list index) without writing a rollout; only
the index, a cache of the rollouts, may be created or refreshed. An unknown or malformed id is one line
on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from app_server.config import resolve_codex_home
from app_server.store import StoreError, ThreadStore
from pycodex.debug.render import item_summary, thread_markdown, timestamp, turn_heading
from pycodex.item_views import ITEM_VIEWS
from pycodex.json_types import JsonObj

__all__ = ["add_threads_arguments", "run_threads"]

# Every ThreadSourceKind: a debugging listing shows `exec` and sub-agent threads too (thread/list does not).
ALL_SOURCE_KINDS = ("cli", "vscode", "exec", "appServer", "subAgentReview", "subAgentCompact",
                    "subAgentThreadSpawn", "subAgentOther", "unknown")


def add_threads_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``list``, ``show`` and ``export`` actions to the ``pycodex threads`` parser."""
    sub = parser.add_subparsers(dest="threads_command", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="stored threads, newest first")
    listing.add_argument("--archived", action="store_true", help="list archived threads instead")
    listing.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    listing.add_argument("--json", action="store_true", help="one JSON Thread per line")
    show = sub.add_parser("show", help="a thread's turns and items")
    show.add_argument("thread_id", metavar="ID")
    export = sub.add_parser("export", help="a thread as markdown or JSON on stdout")
    export.add_argument("thread_id", metavar="ID")
    export.add_argument("--format", choices=("md", "json"), default="md")


def run_threads(args: argparse.Namespace, codex_home: Path | None = None) -> int:
    """Run one ``pycodex threads`` action against the threads stored under ``codex_home``; the exit status."""
    home = resolve_codex_home() if codex_home is None else codex_home
    # Piped output (a file, grep) is not cut to 80 columns.
    console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 240)
    try:
        if args.threads_command == "list":
            return _list(console, home, args)
        if not (home / "sessions").is_dir() and not (home / "archived_sessions").is_dir():
            print(f"error: no rollout found for thread id {args.thread_id} (no threads in {home})", file=sys.stderr)
            return 1
        with ThreadStore(home, fsync=False, reconcile=False) as store:
            thread = store.load_thread(args.thread_id).thread(include_turns=True)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.threads_command == "export":
        sys.stdout.write(json.dumps(thread, indent=2, ensure_ascii=False) + "\n" if args.format == "json"
                         else thread_markdown(thread))
        return 0
    _show(console, thread)
    return 0


def _list(console: Console, home: Path, args: argparse.Namespace) -> int:
    threads: list[JsonObj] = []
    if (home / "sessions").is_dir() or (home / "archived_sessions").is_dir():
        with ThreadStore(home, fsync=False) as store:
            threads = store.list_threads(limit=args.limit, archived=args.archived,
                                         source_kinds=ALL_SOURCE_KINDS).threads
    if args.json:
        for thread in threads:
            print(json.dumps(thread, ensure_ascii=False))
        return 0
    if not threads:
        print(f"no {'archived ' if args.archived else ''}threads in {home}")
        return 0
    table = Table(box=None, header_style="bold")
    table.add_column("id", no_wrap=True)
    table.add_column("updated", no_wrap=True)
    for column in ("source", "provider", "name / preview", "cwd"):
        table.add_column(column, overflow="fold")
    for thread in threads:
        label = str(thread.get("name") or next(iter(str(thread.get("preview") or "").splitlines()), ""))
        source = thread.get("source")
        table.add_row(str(thread["id"]), timestamp(thread.get("updatedAt")),
                      source if isinstance(source, str) else "subAgent", str(thread.get("modelProvider") or ""),
                      escape(label[:60]), escape(str(thread.get("cwd") or "")))
    console.print(table)
    return 0


def _show(console: Console, thread: JsonObj) -> None:
    console.print(f"[bold]thread {thread['id']}[/bold]  {escape(str(thread.get('name') or ''))}")
    console.print(f"  provider {thread.get('modelProvider')}  cwd {escape(str(thread.get('cwd')))}  "
                  f"created {timestamp(thread.get('createdAt'))}")
    console.print(f"  rollout {escape(str(thread.get('path')))}")
    for turn in thread.get("turns") or []:
        console.print()
        console.print(f"[bold underline]{escape(turn_heading(turn))}[/]")
        for item in turn.get("items") or []:
            label, body = item_summary(item)
            indented = body.replace("\n", "\n" + " " * 11)  # continuation lines under the body, not the label
            style = ITEM_VIEWS.view_of(item.get("type")).summary_style
            console.print(f"[{style}]{label:>10}[/] {escape(indented)}")
