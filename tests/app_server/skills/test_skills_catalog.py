"""Skill discovery for a cwd and the `skills/list` result: roots, order, errors, cache, limits, escapes."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from app_server.protocol.base import to_wire
from app_server.protocol.server_info import SkillsListResponse
from app_server.skills import FsEntry, LocalSkillReader, SkillLimits, SkillsCatalog
from app_server.skills.reader import SkillEntry
from tests.support.hermetic import ABSENT_MARKER, stop_walks_at


def write_skill(
    folder: Path, name: str | None, description: str = "Does a thing.", body: str = "Body.\n"
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    head = f"name: {name}\n" if name is not None else ""
    path = folder / "SKILL.md"
    path.write_text(f"---\n{head}description: {description}\n---\n{body}")
    return path


@pytest.fixture(autouse=True)
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty $HOME, so the runner's own `~/.agents/skills` never leaks in."""
    path = tmp_path / "user_home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return stop_walks_at(path)  # a repository root (`.git` holding HEAD)


def names(listing: dict[str, object], index: int = 0) -> list[str]:
    entry = listing["data"][index]  # type: ignore[index]
    return [s["name"] for s in entry["skills"]]


async def test_a_repo_skill_is_listed_in_codexs_exact_shape(home: Path, repo: Path) -> None:
    path = write_skill(repo / ".agents/skills/greeter", "greeter", "Greets people.")
    listing = await SkillsCatalog(home).list_for_cwds([str(repo)], force_reload=True)
    assert listing == {
        "data": [
            {
                "cwd": str(repo),
                "skills": [
                    {
                        "name": "greeter",
                        "description": "Greets people.",
                        "path": str(path),
                        "scope": "repo",
                        "enabled": True,
                        "pluginId": None,
                    }
                ],
                "errors": [],
            }
        ]
    }
    assert list(listing["data"][0]["skills"][0]) == [
        "name",
        "description",
        "path",
        "scope",
        "enabled",
        "pluginId",
    ]


async def test_the_listing_round_trips_through_the_protocol_model(home: Path, repo: Path) -> None:
    folder = repo / ".agents/skills/short"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: short\ndescription: d\nmetadata:\n  short-description: S\n---\n"
    )
    (repo / ".agents/skills/broken").mkdir()
    (repo / ".agents/skills/broken/SKILL.md").write_text("nothing\n")
    write_skill(repo / ".agents/skills/ui", "ui")
    (repo / ".agents/skills/ui/agents").mkdir()
    (repo / ".agents/skills/ui/agents/openai.yaml").write_text(
        'interface:\n  display_name: "UI"\n  icon_small: "./assets/s.svg"\ndependencies:\n  tools:\n'
        '    - type: "mcp"\n      value: "github"\n'
    )
    listing = await SkillsCatalog(home).list_for_cwds([str(repo)])
    short, ui = listing["data"][0]["skills"]
    assert short["shortDescription"] == "S"
    assert list(ui) == [
        "name",
        "description",
        "interface",
        "dependencies",
        "path",
        "scope",
        "enabled",
        "pluginId",
    ]
    assert ui["interface"]["iconSmall"] == str(repo / ".agents/skills/ui/assets/s.svg")
    assert ui["dependencies"] == {"tools": [{"type": "mcp", "value": "github"}]}
    assert to_wire(SkillsListResponse.model_validate(listing)) == listing


async def test_user_skills_come_from_codex_home_at_any_depth_but_hidden_folders_are_skipped(
    home: Path, repo: Path
) -> None:
    write_skill(home / "skills/u1", "u1")
    user_nested = write_skill(home / "skills/group/u2", "u2")
    write_skill(home / "skills/.system/sys", "sys")
    write_skill(repo / ".agents/skills/.hidden/h", "h")
    set_ = await SkillsCatalog(home).skills_for_cwd(repo)
    write_skill(home / "skills/.pycodex-system/mine", "mine")
    set_ = await SkillsCatalog(home).skills_for_cwd(repo)
    # pycodex's own system folder is listed once, as system; Codex's `.system` is not ours to list.
    assert [(s.name, s.scope) for s in set_.skills] == [("u1", "user"), ("u2", "user"), ("mine", "system")]
    assert set_.skills[1].path == str(user_nested)
    assert set_.skills[1].relative_path == "group/u2/SKILL.md"


async def test_legacy_codex_folders_and_home_agents_skills_are_searched_too(
    home: Path, repo: Path, user_home: Path
) -> None:
    (repo / "sub").mkdir()
    write_skill(repo / ".codex/skills/legacy", "legacy")
    write_skill(user_home / ".agents/skills/homeskill", "homeskill")
    write_skill(user_home / ".codex/skills/not-read", "not-read")  # only a repo folder when the cwd is $HOME
    found = (await SkillsCatalog(home).skills_for_cwd(repo / "sub")).skills
    assert [(s.name, s.scope, s.root) for s in found] == [
        ("legacy", "repo", str(repo / ".codex/skills")),
        ("homeskill", "user", str(user_home / ".agents/skills")),
    ]
    # A cwd at $HOME sees that folder once, as a repo folder. (Its parent is made a repository root so
    # that no skill above the temp folder joins in.)
    stop_walks_at(user_home.parent)
    at_home = (await SkillsCatalog(home).skills_for_cwd(user_home)).skills
    assert [(s.name, s.scope) for s in at_home] == [("homeskill", "repo"), ("not-read", "repo")]


async def test_repo_skills_are_gathered_from_the_project_root_down_to_the_cwd(home: Path, repo: Path) -> None:
    (repo / "a/b").mkdir(parents=True)
    write_skill(repo / ".agents/skills/top", "top")
    write_skill(repo / "a/.agents/skills/mid", "mid")
    write_skill(repo / "a/b/.agents/skills/low", "low")
    write_skill(repo.parent / ".agents/skills/above", "above")  # outside the project: not seen
    catalog = SkillsCatalog(home)
    assert names(await catalog.list_for_cwds([str(repo / "a/b")])) == ["low", "mid", "top"]
    assert names(await catalog.list_for_cwds([str(repo / "a")])) == ["mid", "top"]


async def test_without_a_root_marker_only_the_cwd_is_searched(home: Path, tmp_path: Path) -> None:
    cwd = tmp_path / "plain/a/b"
    cwd.mkdir(parents=True)
    write_skill(tmp_path / "plain/a/.agents/skills/parent", "parent")
    write_skill(cwd / ".agents/skills/here", "here")
    # A marker no folder has: no project root, whatever lies above the temp folder.
    assert names(await SkillsCatalog(home, [ABSENT_MARKER]).list_for_cwds([str(cwd)])) == ["here"]


async def test_custom_root_markers_decide_the_project_root(home: Path, tmp_path: Path) -> None:
    top = tmp_path / "proj"
    (top / "sub").mkdir(parents=True)
    (top / "pyproject.toml").write_text("")
    write_skill(top / ".agents/skills/top", "top")
    cwd = str(top / "sub")
    assert names(await SkillsCatalog(home, ["pyproject.toml"]).list_for_cwds([cwd])) == ["top"]
    assert names(await SkillsCatalog(home, [ABSENT_MARKER]).list_for_cwds([cwd])) == []
    assert names(await SkillsCatalog(home, []).list_for_cwds([cwd])) == []


async def test_skills_are_ordered_repo_then_user_by_name_and_errors_by_path(home: Path, repo: Path) -> None:
    for name in ("zeta", "Alpha", "beta"):
        write_skill(repo / f".agents/skills/{name}", name)
    write_skill(home / "skills/aaa", "aaa")
    (repo / ".agents/skills/z-bad").mkdir()
    (repo / ".agents/skills/z-bad/SKILL.md").write_text("no front matter")
    (repo / ".agents/skills/a-bad").mkdir()
    (repo / ".agents/skills/a-bad/SKILL.md").write_text("---\nname: a-bad\n---\n")
    listing = await SkillsCatalog(home).list_for_cwds([str(repo)])
    assert names(listing) == ["Alpha", "beta", "zeta", "aaa"]
    assert listing["data"][0]["errors"] == [
        {"path": str(repo / ".agents/skills/a-bad/SKILL.md"), "message": "missing field `description`"},
        {
            "path": str(repo / ".agents/skills/z-bad/SKILL.md"),
            "message": "missing YAML frontmatter delimited by ---",
        },
    ]


async def test_a_skill_without_a_name_takes_its_directory_name(home: Path, repo: Path) -> None:
    write_skill(repo / ".agents/skills/from-dir", None)
    write_skill(repo / ".agents/skills" / ("d" * 65), None)
    listing = await SkillsCatalog(home).list_for_cwds([str(repo)])
    assert names(listing) == ["from-dir"]
    assert (
        listing["data"][0]["errors"][0]["message"] == "invalid name: exceeds maximum length of 64 characters"
    )


async def test_undecodable_and_unreadable_files_become_errors_not_crashes(home: Path, repo: Path) -> None:
    binary = repo / ".agents/skills/binary/SKILL.md"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"---\nname: binary\ndescription: \xff\xfe\n---\n")
    listing = await SkillsCatalog(home).list_for_cwds([str(repo)])
    assert listing["data"][0]["errors"] == [
        {
            "path": str(binary),
            "message": "failed to read file: invalid utf-8 sequence of 1 bytes from index 30",
        }
    ]


async def test_results_are_cached_per_cwd_until_force_reload(home: Path, repo: Path, tmp_path: Path) -> None:
    other = stop_walks_at(tmp_path) / "other"
    other.mkdir()
    write_skill(repo / ".agents/skills/first", "first")
    catalog = SkillsCatalog(home)
    assert names(await catalog.list_for_cwds([str(repo)])) == ["first"]
    write_skill(repo / ".agents/skills/second", "second")
    write_skill(other / ".agents/skills/third", "third")
    assert names(await catalog.list_for_cwds([str(repo)], force_reload=False)) == ["first"]
    assert names(await catalog.list_for_cwds([str(other)], force_reload=False)) == ["third"]
    assert names(await catalog.list_for_cwds([str(repo)], force_reload=True)) == ["first", "second"]
    write_skill(repo / ".agents/skills/third", "fourth")
    catalog.invalidate(repo)
    assert names(await catalog.list_for_cwds([str(repo)])) == ["first", "fourth", "second"]


async def test_several_cwds_get_one_entry_each_in_request_order(
    home: Path, repo: Path, tmp_path: Path
) -> None:
    other = stop_walks_at(tmp_path) / "other"
    write_skill(other / ".agents/skills/o", "o")
    write_skill(repo / ".agents/skills/r", "r")
    listing = await SkillsCatalog(home).list_for_cwds([str(other), str(repo), str(tmp_path / "missing")])
    assert [e["cwd"] for e in listing["data"]] == [str(other), str(repo), str(tmp_path / "missing")]
    assert [names(listing, i) for i in range(3)] == [["o"], ["r"], []]


# ---- limits -----------------------------------------------------------------------------------


async def test_a_skill_file_over_the_size_cap_is_refused_with_its_size(home: Path, repo: Path) -> None:
    big = write_skill(repo / ".agents/skills/big", "big", body="x" * 70_000)
    write_skill(repo / ".agents/skills/small", "small")
    listing = await SkillsCatalog(home).list_for_cwds([str(repo)])
    assert names(listing) == ["small"]
    size = big.stat().st_size
    assert listing["data"][0]["errors"] == [
        {"path": str(big), "message": f"SKILL.md is too large: {size} bytes, the limit is 65536"}
    ]


async def test_the_number_of_skills_is_capped_with_one_error(home: Path, repo: Path) -> None:
    for i in range(5):
        write_skill(repo / f".agents/skills/s{i}", f"s{i}")
    write_skill(home / "skills/user", "user")
    catalog = SkillsCatalog(home, limits=SkillLimits(max_skills=3))
    listing = await catalog.list_for_cwds([str(repo)])
    assert names(listing) == ["s0", "s1", "s2"]
    errors = listing["data"][0]["errors"]
    assert [e["message"] for e in errors] == ["too many skills: only the first 3 are loaded"]


async def test_skills_deeper_than_six_levels_are_not_found(home: Path, repo: Path) -> None:
    base = repo / ".agents/skills"
    for depth in range(1, 9):
        write_skill(base.joinpath(*[f"d{i}" for i in range(1, depth + 1)]), f"depth{depth}")
    write_skill(base, "atroot")
    found = names(await SkillsCatalog(home).list_for_cwds([str(repo)]))
    assert found == ["atroot"] + [f"depth{d}" for d in range(1, 7)]


async def test_the_directory_walk_is_bounded(home: Path, repo: Path) -> None:
    for i in range(10):
        (repo / f".agents/skills/empty{i}").mkdir(parents=True)
    catalog = SkillsCatalog(home, limits=SkillLimits(max_directories=4))
    errors = (await catalog.list_for_cwds([str(repo)]))["data"][0]["errors"]
    assert errors == [
        {
            "path": str(repo / ".agents/skills"),
            "message": "stopped scanning: more than 4 directories below the root",
        }
    ]


# ---- escapes ----------------------------------------------------------------------------------


async def test_a_symlinked_skill_folder_outside_the_root_is_refused(
    home: Path, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside/evil"
    write_skill(outside, "evil")
    (repo / ".agents/skills").mkdir(parents=True)
    link = repo / ".agents/skills/evil"
    link.symlink_to(outside)
    listing = await SkillsCatalog(home).list_for_cwds([str(repo)])
    assert names(listing) == []
    [error] = listing["data"][0]["errors"]
    assert error["path"] == str(link)
    assert error["message"].startswith("refusing symlink that escapes the skills root")
    assert str(outside) in error["message"]


async def test_a_symlinked_skill_file_outside_the_root_is_refused(
    home: Path, repo: Path, tmp_path: Path
) -> None:
    target = write_skill(tmp_path / "outside", "linked")
    folder = repo / ".agents/skills/linked"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(target)
    listing = await SkillsCatalog(home).list_for_cwds([str(repo)])
    assert names(listing) == []
    assert "refusing symlink that escapes" in listing["data"][0]["errors"][0]["message"]


async def test_a_symlink_inside_the_root_is_followed_once(home: Path, repo: Path) -> None:
    real = write_skill(repo / ".agents/skills/real", "real")
    (repo / ".agents/skills/alias").symlink_to(repo / ".agents/skills/real")
    (repo / ".agents/skills/loop").symlink_to(repo / ".agents/skills")
    listing = await SkillsCatalog(home).list_for_cwds([str(repo)])
    assert [s["path"] for s in listing["data"][0]["skills"]] == [str(real)]
    assert listing["data"][0]["errors"] == []


class DotDotReader(LocalSkillReader):
    """A hostile listing (as a remote environment could send) that names `..` as a sub-directory."""

    async def list_dir(self, path: Path) -> Sequence[SkillEntry]:
        return [*await super().list_dir(path), FsEntry("..", True, False), FsEntry("a/b", True, False)]


async def test_directory_entries_that_would_climb_out_are_refused(home: Path, repo: Path) -> None:
    write_skill(repo / ".agents/skills/ok", "ok")
    write_skill(repo / ".agents/other", "sibling")  # what `..` would reach
    listing = await SkillsCatalog(home, reader=DotDotReader()).list_for_cwds([str(repo)])
    assert names(listing) == ["ok"]
    messages = {e["message"] for e in listing["data"][0]["errors"]}
    assert messages == {
        "refusing directory entry with an invalid name: '..'",
        "refusing directory entry with an invalid name: 'a/b'",
    }


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of permissions")
async def test_an_unreadable_skill_file_is_an_error_entry(home: Path, repo: Path) -> None:
    path = write_skill(repo / ".agents/skills/locked", "locked")
    path.chmod(0)
    try:
        listing = await SkillsCatalog(home).list_for_cwds([str(repo)])
    finally:
        path.chmod(0o644)
    assert listing["data"][0]["errors"][0]["message"].startswith("failed to read file: ")
