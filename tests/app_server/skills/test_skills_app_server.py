"""Skills through the app-server: skills/list, the skills listed to the model, and injected bodies."""

from __future__ import annotations

from pathlib import Path

from tests.support.fake_model import exec_call, message, model_config

SKILL_BODY = "Repository instructions loaded across executor versions."
SELECTED_BODY = "Selected instructions loaded across executor versions."


def _workspace_with_skills(workspace: Path) -> tuple[Path, Path]:
    skill_dir = workspace / ".agents/skills/version-skew"
    skill_dir.mkdir(parents=True)
    skill_path = skill_dir / "SKILL.md"
    skill_path.write_text(f"---\nname: version-skew\ndescription: Check executor compatibility.\n---\n{SKILL_BODY}\n")
    selected_root = workspace / "selected-skills"
    (selected_root / "selected-version-skew").mkdir(parents=True)
    (selected_root / "selected-version-skew/SKILL.md").write_text(
        "---\nname: selected-version-skew\ndescription: Check selected skill compatibility.\n---\n"
        f"{SELECTED_BODY}\n")
    return skill_path, selected_root


async def test_skills_list_reports_repo_skills_and_front_matter_errors(app_server, workspace: Path) -> None:
    _workspace_with_skills(workspace)
    broken = workspace / ".agents/skills/broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("no front matter here\n")
    client = await app_server()
    result = await client.call("skills/list", {"cwds": [str(workspace)], "forceReload": True})
    entry = result["data"][0]
    names = {s["name"]: s for s in entry["skills"]}
    assert names["version-skew"]["scope"] == "repo"
    assert names["version-skew"]["description"] == "Check executor compatibility."
    assert any("broken" in e["path"] for e in entry["errors"])


async def test_selected_root_and_workspace_skill_reach_the_first_model_request(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    skill_path, selected_root = _workspace_with_skills(workspace)
    model = await fake_model([
        {"output": [exec_call("call_1", "printf ok > out.txt")]},
        {"output": [message("done")]},
    ])
    model_config(codex_home, model.url)
    client = await app_server(experimental=True)
    thread = (await client.call("thread/start", {
        "cwd": str(workspace),
        "selectedCapabilityRoots": [{"id": "version-skew-selected", "location": {
            "type": "environment", "environmentId": "local", "path": str(selected_root)}}],
    }))["thread"]
    await client.call("turn/start", {"threadId": thread["id"], "input": [
        {"type": "text", "text": "Use $selected-version-skew and run the command.", "textElements": []},
        {"type": "skill", "name": "version-skew", "path": str(skill_path)},
    ]})
    done = await client.wait_notification("turn/completed", timeout=20)
    assert done["params"]["turn"]["status"] == "completed"
    first = model.requests()[0]["body"]
    items = first["input"]
    assert any(i.get("role") == "developer" and "selected-version-skew" in str(i["content"]) for i in items)
    for body in (SKILL_BODY, SELECTED_BODY):
        assert any(i.get("role") == "user" and body in str(i["content"]) for i in items), body
    assert any(t.get("name") == "skills" or t.get("namespace") == "skills" or "skills" in str(t.get("name"))
               for t in first["tools"])


async def test_bad_selected_root_is_refused_with_a_clear_error(app_server, workspace: Path) -> None:
    client = await app_server(experimental=True)
    reply = await client.request("thread/start", {"cwd": str(workspace), "selectedCapabilityRoots": [
        {"id": "x", "location": {"type": "environment", "environmentId": "local", "path": "relative/dir"}}]})
    assert "error" in reply and "path" in reply["error"]["message"]
    assert (await client.call("thread/loaded/list", {}))["data"] == []
