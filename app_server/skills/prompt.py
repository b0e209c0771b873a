"""What the model sees of skills: the `<skills_instructions>` developer text and the `<skill>` user messages.

Pure functions. The shapes (tags, headings, `r0`/`e0` root aliases, `(file: …)` and
`(executor package: …)` suffixes, the `<skill>` message layout) follow Codex 0.169.0 (app_server.md §8–9);
the explanatory sentences are pycodex's own.

Which skills a turn injects (in this order, each once):
1. every `{"type":"skill","path"}` input whose path is a known skill's path (the name is not consulted);
2. `$name` mentions in the turn's text (`$` then letters, digits, `_`, `-`, `:`), case-sensitive: a local
   skill when exactly one local skill and no selected skill has that name, in listing order; then a
   selected skill when exactly one selected skill has that name, in discovery order.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from pycodex.json_types import JsonValue

from .model import SelectedSkill, Skill

__all__ = [
    "MENTION_PATTERN",
    "injections_for",
    "instructions_section",
    "mentioned_names",
    "root_aliases",
    "selected_instructions_section",
    "skill_message",
    "skills_sections",
    "skills_to_inject",
]

MENTION_PATTERN = re.compile(r"\$([A-Za-z0-9_:\-]+)")
# The model's list puts system skills first, then repo, user and admin ones.
_PROMPT_SCOPE_ORDER = {"system": 0, "repo": 1, "user": 2, "admin": 3}

_LOCAL_INTRO = (
    "Skills are reusable instruction sets, each kept in a `SKILL.md` file. The skills below can be used in "
    "this session. Every entry gives the skill's name, what it is for, and its file as a short path that "
    "starts with an alias from the roots table. When a task fits a skill's description, or the user names "
    "it as `$name`, open that file and follow it."
)
_SELECTED_INTRO = (
    "These skills come from `SKILL.md` sources in the capability roots selected for this thread. Every entry "
    "gives the skill's name, what it is for, and its source locator; a locator that starts with an alias "
    "expands through the roots table."
)
_SELECTED_HOWTO = (
    'To open a skill, call `skills.read({"package":"<package>"})`: it returns the SKILL.md, and root aliases '
    "are expanded for you. For another file of the same skill, keep that `package` and pass the file's full "
    "`skill://` identifier as `resource`. If you do not have a package, find one with `skills.list`."
)


def instructions_section(skills: Sequence[Skill]) -> str | None:
    """The `<skills_instructions>` part for the app-server's own skills; None when there are none.

    Skills whose `agents/openai.yaml` sets `policy.allow_implicit_invocation: false` are left out.
    """
    skills = [s for s in skills if s.allow_implicit_invocation]
    if not skills:
        return None
    aliases = {root: f"r{i}" for i, root in enumerate(sorted({s.root for s in skills}))}
    ordered = sorted(skills, key=lambda s: (_PROMPT_SCOPE_ORDER.get(s.scope, 9), s.name, s.path))
    lines = ["<skills_instructions>", "## Skills", _LOCAL_INTRO, "### Skill roots"]
    lines += [f"- `{alias}` = `{root}`" for root, alias in aliases.items()]
    lines.append("### Available skills")
    lines += [f"- {s.name}: {s.description} (file: {aliases[s.root]}/{s.relative_path})" for s in ordered]
    lines.append("</skills_instructions>")
    return "\n".join(lines)


def selected_instructions_section(skills: Sequence[SelectedSkill]) -> str | None:
    """The second `<skills_instructions>` part, for selected capability roots; None when they hold no skill."""
    skills = [s for s in skills if s.allow_implicit_invocation]
    if not skills:
        return None
    aliases = root_aliases(skills)
    lines = ["<skills_instructions>", "## Skills", _SELECTED_INTRO, "### Skill roots"]
    lines += [f"- `{alias}` = `{locator}`" for locator, alias in aliases.items()]
    lines += [_SELECTED_HOWTO, "### Available skills"]
    for s in sorted(skills, key=lambda s: (s.name, s.package)):
        # A skill at the root itself is named by the full locator, as Codex does.
        package = f"{aliases[s.root.locator]}/{s.package_dir}" if s.package_dir else s.package
        lines.append(f"- {s.name}: {s.description} (executor package: {package})")
    lines.append("</skills_instructions>")
    return "\n".join(lines)


def root_aliases(skills: Sequence[SelectedSkill]) -> dict[str, str]:
    """`e0`, `e1`, ... per root locator, in root order, for roots with an advertised skill."""
    aliases: dict[str, str] = {}
    for skill in skills:
        if skill.allow_implicit_invocation:
            aliases.setdefault(skill.root.locator, f"e{len(aliases)}")
    return aliases


def skills_sections(local: Sequence[Skill], selected: Sequence[SelectedSkill] = ()) -> list[str]:
    """The developer-message parts, in Codex's order (own skills, then selected roots), empty ones left out."""
    return [
        s for s in (instructions_section(local), selected_instructions_section(selected)) if s is not None
    ]


def skill_message(name: str, path: str, contents: str) -> str:
    """The user message that hands a skill's whole SKILL.md (front matter included) to the model."""
    return f"<skill>\n<name>{name}</name>\n<path>{path}</path>\n{contents}\n</skill>"


def mentioned_names(text: str) -> list[str]:
    """`$name` mentions in order of first appearance, each once."""
    return list(dict.fromkeys(MENTION_PATTERN.findall(text)))


def _field(item: object, key: str) -> JsonValue:
    if isinstance(item, Mapping):
        return item.get(key)
    return getattr(item, key, None)


def _turn_text(items: Iterable[object]) -> str:
    return "\n".join(str(_field(i, "text") or "") for i in items if _field(i, "type") == "text")


def skills_to_inject(
    items: Sequence[object],
    skills: Sequence[Skill],
    selected: Sequence[SelectedSkill] = (),
    *,
    text: str | None = None,
) -> list[Skill | SelectedSkill]:
    """The skills a turn's input invokes, in injection order (see the module docstring).

    `items` are the turn's `UserInput`s, as wire dicts or models with `type`/`path`/`text` attributes;
    `text` overrides the text otherwise joined from the text items.
    """
    chosen: list[Skill | SelectedSkill] = []
    taken: set[str] = set()

    def take(skill: Skill | SelectedSkill) -> None:
        if skill.path not in taken:
            taken.add(skill.path)
            chosen.append(skill)

    by_path: dict[str, Skill | SelectedSkill] = {s.path: s for s in skills}
    by_path.update({s.path: s for s in selected})
    for item in items:
        if _field(item, "type") == "skill":
            found = by_path.get(str(_field(item, "path") or ""))
            if found is not None:
                take(found)
    names = set(mentioned_names(_turn_text(items) if text is None else text))
    if names:
        local_count = Counter(s.name for s in skills)
        selected_count = Counter(s.name for s in selected)
        for skill in skills:
            if skill.name in names and local_count[skill.name] == 1 and not selected_count[skill.name]:
                take(skill)
        for chosen_selected in selected:
            if chosen_selected.name in names and selected_count[chosen_selected.name] == 1:
                take(chosen_selected)
    return chosen


def injections_for(
    items: Sequence[object],
    skills: Sequence[Skill],
    selected: Sequence[SelectedSkill] = (),
    *,
    text: str | None = None,
) -> list[str]:
    """The `<skill>` user-message texts to append after the turn's user message, in order."""
    return [
        skill_message(s.name, s.path, s.contents)
        for s in skills_to_inject(items, skills, selected, text=text)
    ]
