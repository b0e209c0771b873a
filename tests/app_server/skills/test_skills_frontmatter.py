"""The SKILL.md front matter parser (YAML subset, Codex's normalisation, clear errors) and agents/openai.yaml."""

from __future__ import annotations

import pytest

from app_server.skills import FrontMatterError, parse_front_matter, parse_skill_header
from app_server.skills.agents_yaml import AgentsMetadata, parse_agents_yaml


def header(text: str) -> tuple[str | None, str, str | None]:
    parsed = parse_skill_header(text)
    return parsed.name, parsed.description, parsed.short_description


def test_plain_key_value_lines_give_name_and_description() -> None:
    assert header("---\nname: greeter\ndescription: Greets people.\n---\nbody\n") == (
        "greeter",
        "Greets people.",
        None,
    )


def test_double_and_single_quoted_values_are_unquoted_with_escapes() -> None:
    text = "---\nname: \"q\\\"x\"\ndescription: 'it''s: fine'\n---\n"
    assert header(text) == ('q"x', "it's: fine", None)


def test_a_colon_inside_a_plain_value_is_kept_and_a_spaced_hash_starts_a_comment() -> None:
    text = "---\nname: c\ndescription: a: b # trailing comment\n---\n"
    assert header(text) == ("c", "a: b", None)


def test_a_hash_glued_to_text_is_not_a_comment() -> None:
    assert header("---\nname: c#sharp\ndescription: d\n---\n")[0] == "c#sharp"


def test_whitespace_is_collapsed_like_codex_does() -> None:
    text = '---\nname:\tspaced\ndescription: "line1\\nline2   tail"\n---\n'
    assert header(text) == ("spaced", "line1 line2 tail", None)


def test_folded_and_literal_block_scalars_are_supported() -> None:
    folded = "---\nname: f\ndescription: >\n  folded line one\n  line two\n---\n"
    literal = "---\nname: l\ndescription: |\n  first\n  second\n---\n"
    assert header(folded)[1] == "folded line one line two"
    assert header(literal)[1] == "first second"
    assert parse_front_matter("k: |\n  a\n  b")["k"] == "a\nb\n"
    assert parse_front_matter("k: >-\n  a\n  b")["k"] == "a b"


def test_indented_continuation_lines_extend_a_plain_value() -> None:
    assert (
        header("---\nname: m\ndescription: starts here\n  and goes on\n---\n")[1] == "starts here and goes on"
    )


def test_metadata_short_description_becomes_the_short_description() -> None:
    text = "---\nname: s\ndescription: d\nmetadata:\n  short-description: Short one\n---\n"
    assert header(text) == ("s", "d", "Short one")


def test_other_keys_lists_and_crlf_line_endings_are_accepted() -> None:
    text = "---\r\nname: x\r\ndescription: d\r\nlicense: MIT\r\nallowed-tools: [a, 'b c']\r\ntags:\r\n  - one\r\n---\r\n"
    assert header(text) == ("x", "d", None)
    fields = parse_front_matter("allowed-tools: [a, 'b c']\ntags:\n  - one\n  - two")
    assert fields == {"allowed-tools": ["a", "b c"], "tags": ["one", "two"]}


def test_numbers_and_booleans_are_kept_as_their_text() -> None:
    assert header("---\nname: 123\ndescription: true\n---\n") == ("123", "true", None)


def test_a_missing_or_empty_name_is_left_for_the_directory_name() -> None:
    assert header("---\ndescription: d\n---\n")[0] is None
    assert header('---\nname: ""\ndescription: d\n---\n')[0] is None


def test_opening_delimiter_may_carry_spaces_but_must_be_the_first_line() -> None:
    assert header("  ---\nname: a\ndescription: d\n---\n")[0] == "a"
    for text in ("\n---\nname: a\ndescription: d\n---\n", "\ufeff---\nname: a\ndescription: d\n---\n"):
        with pytest.raises(FrontMatterError, match=r"^missing YAML frontmatter delimited by ---$"):
            parse_skill_header(text)


@pytest.mark.parametrize(
    "text",
    ["no front matter\n", "---\nname: a\ndescription: never closed\n", ""],
)
def test_missing_front_matter_uses_codexs_message(text: str) -> None:
    with pytest.raises(FrontMatterError, match=r"^missing YAML frontmatter delimited by ---$"):
        parse_skill_header(text)


@pytest.mark.parametrize(
    "body",
    ["name: a\n", 'name: a\ndescription: ""\n', "name: a\ndescription: ~\n", "name: a\ndescription:\n"],
)
def test_an_absent_or_empty_description_is_a_missing_field(body: str) -> None:
    with pytest.raises(FrontMatterError, match=r"^missing field `description`$"):
        parse_skill_header(f"---\n{body}---\n")


def test_a_duplicate_key_is_refused() -> None:
    with pytest.raises(FrontMatterError, match=r"^invalid YAML: duplicate field `name`$"):
        parse_skill_header("---\nname: a\nname: b\ndescription: d\n---\n")


def test_a_sequence_where_a_string_belongs_is_refused() -> None:
    with pytest.raises(FrontMatterError, match="description: invalid type: sequence, expected a string"):
        parse_skill_header("---\nname: a\ndescription:\n  - x\n---\n")


def test_a_name_over_64_characters_is_refused() -> None:
    with pytest.raises(FrontMatterError, match=r"^invalid name: exceeds maximum length of 64 characters$"):
        parse_skill_header("---\nname: " + "n" * 65 + "\ndescription: d\n---\n")
    assert header("---\nname: " + "n" * 64 + "\ndescription: d\n---\n")[0] == "n" * 64


@pytest.mark.parametrize(
    ("yaml", "fragment"),
    [
        ("name: [oops", "line 2: unterminated flow sequence"),
        ('name: "open', "line 2: unterminated double-quoted string"),
        ("name: 'open", "line 2: unterminated single-quoted string"),
        ('name: "a" b', "line 2: unexpected text after a quoted string"),
        ("just text", "line 2: expected `key: value`"),
        ("  indented: x", "line 2: unexpected indentation"),
        ("name: {a: b}", "line 2: unsupported YAML syntax `{`"),
        ("name: &anchor x", "line 2: unsupported YAML syntax `&`"),
        ('name: "bad \\q"', "line 2: unknown escape `\\q`"),
        ("a: b\nc: [x, [y]]", "line 3: nested flow collections are not supported"),
        ("meta:\n  k: v\n  nope", "line 4: expected `key: value`"),
        ("k: >x\n  a", "line 2: unsupported block scalar header `>x`"),
    ],
)
def test_malformed_front_matter_names_the_line_and_the_problem(yaml: str, fragment: str) -> None:
    with pytest.raises(FrontMatterError) as caught:
        parse_front_matter(yaml)
    assert str(caught.value).startswith("invalid YAML: ")
    assert fragment in str(caught.value)


def test_comments_and_blank_lines_between_keys_are_ignored() -> None:
    fields = parse_front_matter("# leading comment\n\nname: a\n\n# another\ndescription: d # note")
    assert fields == {"name": "a", "description": "d"}


# ---- agents/openai.yaml -----------------------------------------------------------------------

FULL_AGENTS_YAML = """\
interface:
  display_name: "UI Skill"
  short_description: "Short UI"
  icon_small: "./assets/s.svg"
  icon_large: "assets/l.png"
  brand_color: "#3B82F6"
  default_prompt: "Use $ui now"
dependencies:
  tools:
    - type: "mcp"
      value: "github"
      description: "GitHub MCP server"
      url: "https://example.invalid/mcp/"
policy:
  allow_implicit_invocation: false
"""


def test_agents_yaml_gives_the_interface_dependencies_and_policy() -> None:
    meta = parse_agents_yaml(FULL_AGENTS_YAML, "/w/skills/ui")
    assert meta is not None
    assert meta.interface == {
        "displayName": "UI Skill",
        "shortDescription": "Short UI",
        "iconSmall": "/w/skills/ui/assets/s.svg",
        "iconLarge": "/w/skills/ui/assets/l.png",
        "iconSmallUrl": None,
        "iconLargeUrl": None,
        "brandColor": "#3B82F6",
        "defaultPrompt": "Use $ui now",
    }
    assert list(meta.interface) == [
        "displayName",
        "shortDescription",
        "iconSmall",
        "iconLarge",
        "iconSmallUrl",
        "iconLargeUrl",
        "brandColor",
        "defaultPrompt",
    ]
    assert meta.dependencies == {
        "tools": [
            {
                "type": "mcp",
                "value": "github",
                "description": "GitHub MCP server",
                "url": "https://example.invalid/mcp/",
            }
        ]
    }
    assert meta.allow_implicit_invocation is False


def test_agents_yaml_defaults_and_partial_interfaces() -> None:
    assert parse_agents_yaml("", "/s") == AgentsMetadata()
    partial = parse_agents_yaml('interface:\n  display_name: "Partial"\n', "/s")
    assert partial is not None and partial.interface is not None
    assert partial.interface["displayName"] == "Partial" and partial.interface["shortDescription"] is None
    assert partial.allow_implicit_invocation is True
    policy_only = parse_agents_yaml("policy:\n  allow_implicit_invocation: true\n", "/s")
    assert policy_only == AgentsMetadata(interface=None, dependencies=None, allow_implicit_invocation=True)


def test_an_icon_path_that_climbs_out_of_the_skill_folder_is_dropped() -> None:
    meta = parse_agents_yaml('interface:\n  icon_small: "../../etc/passwd"\n', "/w/skills/ui")
    assert meta is not None and meta.interface is not None and meta.interface["iconSmall"] is None


@pytest.mark.parametrize(
    "text",
    [
        "interface: [oops\n",
        "  indented: first\n",
        "interface:\n  display_name: |\n    block\n",
        "a: 1\na: 2\n",
        "dependencies:\n  tools:\n    - value: no-type\n",
        "not yaml at all",
    ],
)
def test_unusable_agents_yaml_is_ignored_not_an_error(text: str) -> None:
    assert parse_agents_yaml(text, "/s") is None
