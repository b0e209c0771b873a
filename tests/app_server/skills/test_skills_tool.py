"""The `skills` namespace tool: listing selected skills and reading their files, confined and paged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app_server.skills import (
    LocalSkillReader,
    SelectedSkill,
    SkillsTool,
    discover_selected,
    parse_selected_roots,
)
from app_server.skills.tool import NOT_AVAILABLE, OUTSIDE, PAGE_CHARS, READ_FAILED, skills_tool_spec


def write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)


async def selected_in(cap: Path, root_id: str = "demo@1") -> list[SelectedSkill]:
    roots = parse_selected_roots(
        [{"id": root_id, "location": {"type": "environment", "environmentId": "local", "path": str(cap)}}]
    )
    return list((await discover_selected(roots, lambda env: LocalSkillReader())).skills)


@pytest.fixture
async def cap(tmp_path: Path) -> Path:
    root = tmp_path / "cap"
    write(
        root / "skills/capskill/SKILL.md", "---\nname: capskill\ndescription: Capability skill.\n---\nCap.\n"
    )
    write(root / "skills/capskill/references/extra.md", "extra file contents\n")
    write(root / "direct/SKILL.md", "---\nname: direct\ndescription: Direct child.\n---\nDirect.\n")
    return root


@pytest.fixture
async def tool(cap: Path) -> SkillsTool:
    return SkillsTool(await selected_in(cap), lambda env: LocalSkillReader() if env == "local" else None)


async def call(tool: SkillsTool, name: str, **args: object) -> object:
    out = await tool.call(name, json.dumps(args))
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        return out


async def test_list_gives_every_executor_skill_with_its_package_and_main_resource(
    tool: SkillsTool, cap: Path
) -> None:
    got = await call(tool, "list", authority={"kind": "executor"})
    base = f"skill://demo@1{cap}"
    assert got == {
        "skills": [
            {
                "authority": {"kind": "executor", "id": "demo@1"},
                "package": f"{base}/skills/capskill",
                "name": "capskill",
                "description": "Capability skill.",
                "main_resource": f"{base}/skills/capskill/SKILL.md",
            },
            {
                "authority": {"kind": "executor", "id": "demo@1"},
                "package": f"{base}/direct",
                "name": "direct",
                "description": "Direct child.",
                "main_resource": f"{base}/direct/SKILL.md",
            },
        ],
        "warnings": [],
        "next_cursor": None,
    }
    assert await call(tool, "list", authority={"kind": "cloud"}) == {
        "skills": [],
        "warnings": [],
        "next_cursor": None,
    }


async def test_bad_list_calls_get_a_plain_error_text(tool: SkillsTool) -> None:
    assert await call(tool, "list") == "missing field `authority`"
    assert "invalid authority" in str(await call(tool, "list", authority={"kind": "moon"}))
    assert (
        await tool.call("list", "{not json")
        == "invalid arguments: Expecting property name enclosed in double quotes at line 1 column 2"
    )
    assert await tool.call("write", "{}") == "unsupported call: skills.write"


async def test_read_takes_an_alias_or_a_full_locator_and_defaults_to_skill_md(
    tool: SkillsTool, cap: Path
) -> None:
    expected = {
        "resource": f"skill://demo@1{cap}/skills/capskill/SKILL.md",
        "contents": "---\nname: capskill\ndescription: Capability skill.\n---\nCap.\n",
        "skill_root": f"{cap}/skills/capskill",
        "next_cursor": None,
    }
    assert await call(tool, "read", package="e0/skills/capskill") == expected
    assert await call(tool, "read", package=f"skill://demo@1{cap}/skills/capskill") == expected
    extra = await call(
        tool,
        "read",
        package="e0/skills/capskill",
        resource=f"skill://demo@1{cap}/skills/capskill/references/extra.md",
    )
    assert isinstance(extra, dict) and extra["contents"] == "extra file contents\n"


async def test_read_is_confined_to_the_skills_own_folder(tool: SkillsTool, cap: Path, tmp_path: Path) -> None:
    write(tmp_path / "secret.md", "secret\n")
    base = f"skill://demo@1{cap}/skills/capskill"
    for resource in (
        f"skill://demo@1{cap}/direct/SKILL.md",  # another skill of the same root
        f"{base}/../../../secret.md",
        "references/extra.md",
        str(tmp_path / "secret.md"),
        base,
    ):
        assert await call(tool, "read", package="e0/skills/capskill", resource=resource) == OUTSIDE, resource
    (cap / "skills/capskill/link.md").symlink_to(tmp_path / "secret.md")
    assert await call(tool, "read", package="e0/skills/capskill", resource=f"{base}/link.md") == OUTSIDE


async def test_read_failures_are_plain_texts(tool: SkillsTool, cap: Path) -> None:
    base = f"skill://demo@1{cap}/skills/capskill"
    write(cap / "skills/capskill/bin.dat", bytes(range(256)))
    assert await call(tool, "read", package="e0/nope") == NOT_AVAILABLE
    assert await call(tool, "read") == "missing field `package`"
    assert (
        await call(tool, "read", package="e0/skills/capskill", resource=f"{base}/missing.md") == READ_FAILED
    )
    assert await call(tool, "read", package="e0/skills/capskill", resource=f"{base}/bin.dat") == READ_FAILED


async def test_a_long_file_comes_in_pages_joined_by_the_cursor(tool: SkillsTool, cap: Path) -> None:
    text = "".join(f"line {i:06d} {'x' * 40}\n" for i in range(600))
    write(cap / "skills/capskill/big.txt", text)
    resource = f"skill://demo@1{cap}/skills/capskill/big.txt"
    pages: list[str] = []
    cursor = None
    for _ in range(10):
        args: dict[str, object] = {"package": "e0/skills/capskill", "resource": resource}
        if cursor is not None:
            args["cursor"] = cursor
        page = await call(tool, "read", **args)
        assert isinstance(page, dict)
        assert len(page["contents"]) <= PAGE_CHARS
        pages.append(page["contents"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert "".join(pages) == text and len(pages) == 3
    first = await call(tool, "read", package="e0/skills/capskill", resource=resource)
    assert isinstance(first, dict) and first["next_cursor"]
    write(cap / "skills/capskill/big.txt", text + "changed\n")
    for bad in (first["next_cursor"], "nonsense", f"{first['next_cursor']}9999999"):
        stale = await call(tool, "read", package="e0/skills/capskill", resource=resource, cursor=bad)
        assert stale == "cursor is stale or invalid: read again without a cursor"


async def test_the_tool_spec_is_a_namespace_with_list_and_read() -> None:
    spec = skills_tool_spec()
    assert spec["type"] == "namespace" and spec["name"] == "skills"
    assert [(t["name"], t["parameters"]["required"]) for t in spec["tools"]] == [
        ("list", ["authority"]),
        ("read", ["package"]),
    ]
