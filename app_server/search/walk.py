"""Listing a tree for fuzzy file search, honouring ignore files the way Codex's walker (ripgrep's) does.

Hidden files and folders are listed (`.git` included, as Codex does); `.gitignore` and `.ignore` apply
at every level, deeper files overriding shallower ones and `.ignore` overriding `.gitignore`; the
`.gitignore` files of the root's parent folders and `.git/info/exclude` apply too. Symlinked folders are
followed once (a loop is cut at the second visit).

    entries = walk_tree(Path("/repo"))   # [Entry("src", True), Entry("src/main.py", False), ...]
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter
from pathlib import Path
from typing import NamedTuple

import pathspec

from pycodex.git_repo import is_repository_root

IGNORE_FILES = (".gitignore", ".ignore")  # lowest precedence first
_name = attrgetter("name")
_is_dir_or_raise = os.DirEntry.is_dir


class Entry(NamedTuple):
    """A listed path. A named tuple, not a frozen dataclass: a walk makes 100k of them, and a frozen
    dataclass's __init__ costs several times a tuple's."""

    path: str  # relative to the root, "/"-separated
    is_dir: bool


def _combined(spec: pathspec.GitIgnoreSpec) -> re.Pattern[str] | None:
    """One regex for a rule set without `!` negations (then any match means ignored), else None.

    Checking 100k paths pattern by pattern through pathspec is the walk's main cost; one alternation
    does the same in a single C-level match.
    """
    parts = []
    for pattern in spec.patterns:
        regex = getattr(pattern, "regex", None)
        include = getattr(pattern, "include", None)
        if include is None:
            continue
        if include is False or regex is None:
            return None
        parts.append("(?:" + re.sub(r"\(\?P<\w+>", "(?:", regex.pattern) + ")")
    return re.compile("|".join(parts)) if parts else None


@dataclass(frozen=True)
class _Rules:
    spec: pathspec.GitIgnoreSpec
    base: str = ""  # the folder the rules live in, relative to the root
    prefix: str = ""  # for rules above the root: the root's path relative to their folder
    fast: re.Pattern[str] | None = None

    @classmethod
    def of(cls, spec: pathspec.GitIgnoreSpec, base: str = "", prefix: str = "") -> _Rules:
        return cls(spec, base, prefix, _combined(spec))

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: explicitly kept (`!`); None: these rules say nothing."""
        local = self.local(rel) + ("/" if is_dir else "")
        if self.fast is not None:
            return True if self.fast.match(local) else None
        return self.spec.check_file(local).include

    def local(self, rel: str) -> str:
        """`rel` (relative to the root) as the rules' own folder sees it."""
        if self.prefix:
            return f"{self.prefix}/{rel}"
        return rel[len(self.base) + 1 :] if self.base else rel


def _read_rules(directory: Path, names: tuple[str, ...]) -> pathspec.GitIgnoreSpec | None:
    lines: list[str] = []
    for name in names:
        try:
            lines += (directory / name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def _outer_rules(root: Path) -> list[_Rules]:
    """Rules from above the root: parent `.gitignore`s (up to the repository) and `.git/info/exclude`."""
    rules: list[_Rules] = []
    for directory in [root, *root.parents]:
        prefix = root.relative_to(directory).as_posix() if directory != root else ""
        if prefix:
            spec = _read_rules(directory, (".gitignore",))
            if spec is not None:
                rules.append(_Rules.of(spec, prefix=prefix))
        if is_repository_root(directory):  # the product's one repository check
            exclude = _read_rules(directory / ".git" / "info", ("exclude",))
            if exclude is not None:
                rules.append(_Rules.of(exclude, prefix=prefix))
            break
    rules.reverse()  # lowest precedence (outermost) first
    return rules


def _ignored(rules: list[_Rules], rel: str, is_dir: bool) -> bool:
    """The deepest rule set with an opinion decides; within one, the last matching pattern does."""
    for rule in reversed(rules):
        verdict = rule.verdict(rel, is_dir)
        if verdict is not None:
            return verdict
    return False


def _fast_match(rules: list[_Rules]) -> Callable[[str], re.Match[str] | None] | None:
    """The common case, a single root rule set without negations: one regex match per entry (with "/"
    after a folder's path) decides. Calling it inline skips the general path's calls per entry, which
    were most of a 100k-file walk's time."""
    if len(rules) == 1 and rules[0].fast is not None and not rules[0].base and not rules[0].prefix:
        return rules[0].fast.match
    return None


def walk_tree(root: Path, cancelled: Callable[[], bool] = lambda: False) -> list[Entry]:
    """Every file and folder under `root` that the ignore rules keep (the root itself excluded); the walk
    stops early (with a partial list) once `cancelled()` is true."""
    paths, dirs = walk_lists(root, cancelled)
    return [Entry(path, is_dir) for path, is_dir in zip(paths, dirs, strict=True)]


def walk_lists(root: Path, cancelled: Callable[[], bool] = lambda: False) -> tuple[list[str], list[bool]]:
    """`walk_tree` as two parallel lists, paths and whether each is a folder: a search builds an Entry only
    for the few paths its pre-filter keeps, not for all 100k."""
    paths: list[str] = []
    flags: list[bool] = []
    if root.is_dir():
        _walk(root, cancelled, paths, flags)
    return paths, flags


def _walk(root: Path, cancelled: Callable[[], bool], paths: list[str], flags: list[bool]) -> None:
    # Per-folder comprehensions (no generator, no loop body per entry) keep the per-entry work mostly
    # in C: a walk lists 100k entries.
    outer = _outer_rules(root)
    # Only symlinked folders can make a loop: remember where they lead, and never enter an ancestor.
    followed: set[str] = set()
    stack: list[tuple[str, list[_Rules], str]] = [("", outer, os.path.realpath(root))]
    while stack and not cancelled():
        rel_dir, rules, real_dir = stack.pop()
        directory = os.path.join(root, rel_dir) if rel_dir else str(root)
        try:
            with os.scandir(directory) as it:
                children = list(it)
        except OSError:
            continue
        names = list(map(_name, children))  # map over C callables: no bytecode per entry
        present = tuple(name for name in IGNORE_FILES if name in names)
        if present:
            spec = _read_rules(Path(directory), present)
            if spec is not None:
                rules = [*rules, _Rules.of(spec, base=rel_dir)]
        prefix = f"{rel_dir}/" if rel_dir else ""
        match = _fast_match(rules) if rules else None
        rels = list(map(prefix.__add__, names))
        dirs: list[bool | None]
        try:
            dirs = list(map(_is_dir_or_raise, children))  # follows symlinks, as Codex's walker does
        except OSError:  # rare (a symlink's target vanished): judge child by child
            dirs = [_is_dir(child) for child in children]
        # `drops[i]` is truthy when entry i is left out (ignored, or unreadable: dirs[i] is None).
        # The fast rules judge every path as a file in one C-level map, then re-judge the few folders
        # with their "/"; a folder where nothing is left out (the usual one) costs no loop per entry.
        drops: list[object]
        if match is not None:
            drops = list(map(match, rels))
            for i in compress(range(len(rels)), dirs):
                drops[i] = match(rels[i] + "/")
            if None in dirs:
                drops = [d is None or drop for d, drop in zip(dirs, drops, strict=True)]
        elif rules:
            drops = [d is None or _ignored(rules, rel, d) for rel, d in zip(rels, dirs, strict=True)]
        else:
            drops = [d is None for d in dirs]
        if not any(drops):
            paths += rels
            flags += dirs  # type: ignore[arg-type]  # no None: an unreadable entry is a drop
            folders = list(compress(range(len(rels)), dirs))
        else:
            kept = [i for i, drop in enumerate(drops) if not drop]
            paths += [rels[i] for i in kept]
            flags += [bool(dirs[i]) for i in kept]
            folders = [i for i in kept if dirs[i]]
        for i in folders:
            child, rel = children[i], rels[i]
            real = os.path.join(real_dir, names[i])
            if child.is_symlink():
                real = os.path.realpath(child.path)
                if real in followed or real_dir == real or real_dir.startswith(real + os.sep):
                    continue
                followed.add(real)
            stack.append((rel, rules, real))


def _is_dir(child: os.DirEntry[str]) -> bool | None:
    """Whether ``child`` is a folder (following symlinks); None when it cannot be told (it is skipped)."""
    try:
        return child.is_dir()
    except OSError:
        return None
