"""apply_patch under workspace-write cannot reach outside the writable roots through a link.

A symlink inside the workspace that points outside, and a hard link of an outside file, both look like
workspace paths. Codex applies its patches inside the OS sandbox, which resolves the symlink (refused)
but writes through the hard link; pycodex refuses both, with the same reason as a path outside.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.app_server.tools.test_patch_tool import OUTSIDE_REASON, outputs, outside_dir, patch_call, patch_of
from tests.support.fake_model import message, model_config, run_turn

__all__ = ["outside_dir"]


async def _patch_turn(app_server, fake_model, codex_home: Path, workspace: Path, patch: str) -> str:
    model = await fake_model([{"output": [patch_call("p", patch)]}, {"output": [message("done")]}])
    model_config(codex_home, model.url, approval_policy="never")
    client = await app_server()
    thread = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    await run_turn(client, thread, "edit")
    return outputs(model)["p"]


async def test_a_symlink_to_outside_the_roots_is_refused(
    app_server, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    target = outside_dir / "secret.txt"
    target.write_text("keep\n")
    (workspace / "link.txt").symlink_to(target)
    (workspace / "linked-dir").symlink_to(outside_dir, target_is_directory=True)
    patch = patch_of("*** Update File: link.txt\n@@\n-keep\n+changed\n",
                     "*** Add File: linked-dir/new.txt\n+x\n")
    assert await _patch_turn(app_server, fake_model, codex_home, workspace, patch) == OUTSIDE_REASON
    assert target.read_text() == "keep\n" and not (outside_dir / "new.txt").exists()


async def test_a_hard_link_of_an_outside_file_is_refused(
    app_server, fake_model, codex_home: Path, workspace: Path, outside_dir: Path
) -> None:
    target = outside_dir / "shared.txt"
    target.write_text("keep\n")
    try:
        os.link(target, workspace / "hard.txt")
    except OSError as exc:  # /var/tmp and the workspace on different filesystems
        import pytest

        pytest.skip(f"cannot hard-link across these folders: {exc}")
    patch = patch_of("*** Update File: hard.txt\n@@\n-keep\n+changed\n")
    assert await _patch_turn(app_server, fake_model, codex_home, workspace, patch) == OUTSIDE_REASON
    assert target.read_text() == "keep\n"


async def test_a_symlink_within_the_workspace_still_applies(
    app_server, fake_model, codex_home: Path, workspace: Path
) -> None:
    (workspace / "real.txt").write_text("one\n")
    (workspace / "alias.txt").symlink_to(workspace / "real.txt")
    patch = patch_of("*** Update File: alias.txt\n@@\n-one\n+two\n")
    text = await _patch_turn(app_server, fake_model, codex_home, workspace, patch)
    assert text.endswith("Success. Updated the following files:\nM alias.txt\n"), text
    assert (workspace / "real.txt").read_text() == "two\n"
