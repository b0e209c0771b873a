"""What the model is told about skills: the `<skills_instructions>` parts, mentions and `<skill>` messages."""

from __future__ import annotations

from dataclasses import replace

from app_server.protocol.user_input import SkillUserInput, TextUserInput
from app_server.skills import (
    SelectedRoot,
    SelectedSkill,
    Skill,
    injections_for,
    instructions_section,
    mentioned_names,
    selected_instructions_section,
    skill_message,
    skills_sections,
    skills_to_inject,
)
from app_server.skills.model import SkillScope

REPO = "/w/.agents/skills"
SUB = "/w/sub/.agents/skills"
USER = "/h/skills"


def skill(name: str, root: str = REPO, scope: SkillScope = "repo", rel: str | None = None) -> Skill:
    relative = rel or f"{name}/SKILL.md"
    return Skill(
        name=name,
        description=f"About {name}.",
        path=f"{root}/{relative}",
        scope=scope,
        root=root,
        relative_path=relative,
        contents=f"---\nname: {name}\ndescription: About {name}.\n---\n{name} body\n",
    )


ROOT_A = SelectedRoot("demo@1", "local", "/cap")
ROOT_B = SelectedRoot("other", "remote", "/srv/more")


def selected(name: str, package_dir: str, root: SelectedRoot = ROOT_A) -> SelectedSkill:
    return SelectedSkill(
        name, f"Selected {name}.", root, package_dir, f"---\nname: {name}\n---\n{name} body\n"
    )


def section_lines(text: str | None) -> list[str]:
    assert text is not None
    return text.split("\n")


def test_the_local_section_lists_roots_sorted_and_skills_with_short_paths() -> None:
    skills = [
        skill("u2", USER, "user", "group/u2/SKILL.md"),
        skill("greeter"),
        skill("subskill", SUB),
        skill("deep", rel="deep/nested/SKILL.md"),
    ]
    lines = section_lines(instructions_section(skills))
    assert (
        lines[0] == "<skills_instructions>"
        and lines[1] == "## Skills"
        and lines[-1] == "</skills_instructions>"
    )
    roots_at, list_at = lines.index("### Skill roots"), lines.index("### Available skills")
    assert lines[roots_at + 1 : list_at] == [f"- `r0` = `{USER}`", f"- `r1` = `{REPO}`", f"- `r2` = `{SUB}`"]
    assert lines[list_at + 1 : -1] == [
        "- deep: About deep. (file: r1/deep/nested/SKILL.md)",
        "- greeter: About greeter. (file: r1/greeter/SKILL.md)",
        "- subskill: About subskill. (file: r2/subskill/SKILL.md)",
        "- u2: About u2. (file: r0/group/u2/SKILL.md)",
    ]
    assert "SKILL.md" in lines[2]  # our own explanation of what a skill is


def test_only_roots_that_hold_a_listed_skill_get_an_alias() -> None:
    lines = section_lines(instructions_section([skill("only", SUB)]))
    assert [ln for ln in lines if ln.startswith("- `")] == [f"- `r0` = `{SUB}`"]


def test_no_skills_means_no_section() -> None:
    assert instructions_section([]) is None
    assert selected_instructions_section([]) is None
    assert skills_sections([], []) == []


def test_the_selected_section_uses_source_locators_and_e_aliases() -> None:
    found = [
        selected("direct", "direct"),
        selected("capskill", "skills/capskill"),
        selected("rootskill", ""),
        selected("far", "x", ROOT_B),
    ]
    lines = section_lines(selected_instructions_section(found))
    roots_at, list_at = lines.index("### Skill roots"), lines.index("### Available skills")
    assert lines[roots_at + 1 : roots_at + 3] == [
        "- `e0` = `skill://demo@1/cap`",
        "- `e1` = `skill://other/srv/more`",
    ]
    assert any("skills.read" in ln and "skills.list" in ln for ln in lines[roots_at:list_at])
    assert lines[list_at + 1 : -1] == [
        "- capskill: Selected capskill. (executor package: e0/skills/capskill)",
        "- direct: Selected direct. (executor package: e0/direct)",
        "- far: Selected far. (executor package: e1/x)",
        "- rootskill: Selected rootskill. (executor package: skill://demo@1/cap)",
    ]


def test_sections_come_local_first_then_selected() -> None:
    parts = skills_sections([skill("a")], [selected("b", "b")])
    assert len(parts) == 2 and "(file: r0/a/SKILL.md)" in parts[0] and "(executor package: e0/b)" in parts[1]
    assert skills_sections([], [selected("b", "b")]) == [selected_instructions_section([selected("b", "b")])]


def test_the_skill_message_wraps_the_whole_file_like_codex() -> None:
    contents = "---\nname: greeter\ndescription: Greets people.\n---\nSay ahoy.\n"
    assert skill_message("greeter", "/w/.agents/skills/greeter/SKILL.md", contents) == (
        "<skill>\n<name>greeter</name>\n<path>/w/.agents/skills/greeter/SKILL.md</path>\n"
        "---\nname: greeter\ndescription: Greets people.\n---\nSay ahoy.\n\n</skill>"
    )


def test_selected_skills_are_addressed_by_skill_locators() -> None:
    assert selected("capskill", "skills/capskill").path == "skill://demo@1/cap/skills/capskill/SKILL.md"
    assert selected("rootskill", "").path == "skill://demo@1/cap/SKILL.md"
    assert selected("capskill", "skills/capskill").local_path == "/cap/skills/capskill/SKILL.md"


def test_mentions_follow_codexs_name_characters() -> None:
    # Observed with Codex 0.169.0: what comes before `$` does not matter; `.`, `/`, `)` end a name.
    assert mentioned_names("x$greeter ($b) $c. $d/x `$e` $$f \\$g") == [
        "greeter",
        "b",
        "c",
        "d",
        "e",
        "f",
        "g",
    ]
    # `_`, `:` and `-` belong to the name, so these name other skills.
    assert mentioned_names("$greeter_x $greeter:x $colon-in") == ["greeter_x", "greeter:x", "colon-in"]
    assert mentioned_names("$a $a") == ["a"]
    assert mentioned_names("no mentions, just $ alone") == []


def test_mentions_are_case_sensitive_and_exact() -> None:
    skills = [skill("greeter")]
    assert skills_to_inject([{"type": "text", "text": "$Greeter $greeter_x $greete"}], skills) == []
    assert skills_to_inject([{"type": "text", "text": "hi $greeter."}], skills) == [skills[0]]


def test_a_skill_item_is_matched_by_path_and_its_name_is_ignored() -> None:
    skills = [skill("greeter"), skill("other")]
    item = {"type": "skill", "name": "foo", "path": skills[0].path}
    assert skills_to_inject([item], skills) == [skills[0]]
    unknown = {"type": "skill", "name": "greeter", "path": "/elsewhere/SKILL.md"}
    assert skills_to_inject([unknown], skills) == []


def test_items_come_first_then_mentions_in_listing_order_each_once() -> None:
    repo, user = skill("subskill"), skill("u1", USER, "user")
    greeter = skill("greeter")
    chosen = skills_to_inject(
        [
            {"type": "text", "text": "use $u1 and $subskill and $greeter"},
            {"type": "skill", "name": "greeter", "path": greeter.path},
        ],
        [greeter, repo, user],
    )
    assert chosen == [greeter, repo, user]


def test_an_ambiguous_name_injects_nothing() -> None:
    one, two = skill("dup"), skill("dup", USER, "user")
    assert skills_to_inject([{"type": "text", "text": "$dup"}], [one, two]) == []
    # ...but a skill item still names one of them exactly.
    assert skills_to_inject([{"type": "skill", "name": "dup", "path": two.path}], [one, two]) == [two]


def test_a_selected_skill_wins_a_name_shared_with_a_local_skill() -> None:
    local = skill("greeter")
    chosen_selected = selected("greeter", "g/greeter")
    assert skills_to_inject([{"type": "text", "text": "$greeter"}], [local], [chosen_selected]) == [
        chosen_selected
    ]


def test_selected_mentions_follow_local_ones_in_discovery_order() -> None:
    local = skill("subskill")
    direct, capskill = selected("direct", "direct"), selected("capskill", "skills/capskill")
    text = "Use $capskill and $direct and $subskill"
    assert skills_to_inject([{"type": "text", "text": text}], [local], [direct, capskill]) == [
        local,
        direct,
        capskill,
    ]


def test_a_skill_item_may_name_a_selected_skill_by_its_locator_but_not_its_local_path() -> None:
    capskill = selected("capskill", "skills/capskill")
    by_locator = {"type": "skill", "name": "capskill", "path": capskill.path}
    by_local = {"type": "skill", "name": "capskill", "path": capskill.local_path}
    assert skills_to_inject([by_locator], [], [capskill]) == [capskill]
    assert skills_to_inject([by_local], [], [capskill]) == []


def test_injections_are_skill_messages_and_accept_protocol_models() -> None:
    greeter = skill("greeter")
    items = [TextUserInput(text="$greeter please"), SkillUserInput(name="greeter", path=greeter.path)]
    assert injections_for(items, [greeter]) == [skill_message("greeter", greeter.path, greeter.contents)]
    assert injections_for([], [greeter], text="explicit $greeter") == [
        skill_message("greeter", greeter.path, greeter.contents)
    ]
    assert injections_for([{"type": "text", "text": "nothing"}], [greeter]) == []


def test_a_skill_barred_from_implicit_use_is_not_advertised_but_a_mention_still_injects_it() -> None:
    quiet = replace(skill("quiet"), allow_implicit_invocation=False)
    loud = skill("loud")
    section = instructions_section([quiet, loud])
    assert section is not None and "- loud:" in section and "quiet" not in section
    assert instructions_section([quiet]) is None
    assert skills_to_inject([{"type": "text", "text": "$quiet"}], [quiet, loud]) == [quiet]
    hidden_selected = replace(selected("hush", "hush"), allow_implicit_invocation=False)
    assert selected_instructions_section([hidden_selected]) is None
    assert skills_to_inject([{"type": "text", "text": "$hush"}], [], [hidden_selected]) == [hidden_selected]
