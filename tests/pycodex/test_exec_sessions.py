"""`pycodex exec` sessions as a subprocess: resume, fork, ephemeral runs, and Ctrl-C during a turn."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from typing import Any

import pytest

from tests.support.exec_cli_env import RUN_TIMEOUT_S, make_env, reply, user_texts
from tests.support.fake_model import message
from tests.support.procs import stop_process

__all__ = ["make_env"]


async def test_resume_last_and_by_id_continue_the_thread_and_fork_copies_it(make_env: Any) -> None:
    env = await make_env([reply("one"), reply("two"), reply("three"), reply("four")])
    first = await env.exec("--json", "--skip-git-repo-check", "first prompt")
    thread_id = first.events[0]["thread_id"]
    again = await env.exec("--json", "--skip-git-repo-check", "resume", "--last", "-", stdin="second prompt\n")
    assert again.code == 0, again.stderr
    assert again.events[0] == {"type": "thread.started", "thread_id": thread_id}
    assert again.events[-2]["item"]["text"] == "two"
    # Usage is the thread's total, history included (as Codex reports it after a resume).
    assert again.events[-1]["usage"]["input_tokens"] > first.events[-1]["usage"]["input_tokens"]
    by_id = await env.exec("--json", "resume", thread_id, "third prompt", "--skip-git-repo-check")
    assert by_id.code == 0, by_id.stderr
    assert by_id.events[0]["thread_id"] == thread_id
    fork = await env.exec("--json", "--skip-git-repo-check", "fork", thread_id, "fourth prompt")
    assert fork.code == 0, fork.stderr
    assert fork.events[0]["thread_id"] != thread_id
    texts = [user_texts(r) for r in env.requests()]
    assert texts[1][-2:] == ["first prompt", "second prompt\n"]
    assert texts[2][-3:] == ["first prompt", "second prompt\n", "third prompt"]
    assert texts[3][-4:] == ["first prompt", "second prompt\n", "third prompt", "fourth prompt"]


async def test_resume_last_with_no_session_here_starts_a_new_one_as_codex_and_unknown_ids_are_errors(
    make_env: Any,
) -> None:
    """Codex 0.169 (checked on the binary): `resume --last` with no session of this directory, even when another
    directory has one, starts a new session and exits 0; it does not resume the other directory's session."""
    env = await make_env({"responses": [reply("ok")], "when_exhausted": "repeat_last"})
    other = env.work / "elsewhere"
    other.mkdir()
    empty = await env.exec("--json", "--skip-git-repo-check", "resume", "--last", "hi")
    assert empty.code == 0, empty.stderr
    assert (empty.events[0]["type"], empty.events[-1]["type"]) == ("thread.started", "turn.completed")
    here = await env.exec("--json", "--skip-git-repo-check", "first prompt")
    thread_id = here.events[0]["thread_id"]
    there = await env.exec("--json", "--skip-git-repo-check", "resume", "--last", "from elsewhere", cwd=other)
    assert there.code == 0, there.stderr
    assert there.events[0]["thread_id"] not in (thread_id, empty.events[0]["thread_id"])
    assert user_texts(env.requests()[-1])[-1:] == ["from elsewhere"]  # a fresh history
    assert "first prompt" not in json.dumps(env.requests()[-1]["body"])
    human = await env.exec("--skip-git-repo-check", "resume", "--last", "hi", cwd=other)
    assert human.code == 0 and "No recorded session to resume in " not in human.stderr  # it has one now
    fresh = other / "fresh"
    fresh.mkdir()
    new_here = await env.exec("--skip-git-repo-check", "resume", "--last", "hi", cwd=fresh)
    assert new_here.code == 0 and f"No recorded session to resume in {fresh}; starting a new one." in new_here.stderr
    requests = len(env.requests())
    unknown = str(uuid.uuid4())
    by_id = await env.exec("--json", "--skip-git-repo-check", "resume", unknown, "hi")
    assert by_id.code == 1 and by_id.stdout == ""
    assert f"Error: thread/resume failed: no rollout found for thread id {unknown}" in by_id.stderr
    named = await env.exec("--json", "--skip-git-repo-check", "resume", "no-such-name", "hi")
    assert named.code == 1 and "no session found with id or name `no-such-name`" in named.stderr
    fork = await env.exec("--json", "--skip-git-repo-check", "fork", unknown, "hi")
    assert fork.code == 1 and "no rollout found" in fork.stderr
    assert len(env.requests()) == requests  # none of the errors reached the model


async def test_ephemeral_runs_leave_no_session(make_env: Any) -> None:
    env = await make_env([reply("ok"), reply("ok")])
    run = await env.exec("--json", "--skip-git-repo-check", "--ephemeral", "-m", "flag-model", "x")
    assert run.code == 0, run.stderr
    resumed = await env.exec("--json", "--skip-git-repo-check", "resume", "--last", "y")
    assert resumed.code == 0, resumed.stderr  # nothing to resume: a new session, as Codex
    assert resumed.events[0]["thread_id"] != run.events[0]["thread_id"]
    assert env.requests()[0]["body"]["model"] == "flag-model"
    assert "x" not in user_texts(env.requests()[1])


async def test_resume_last_picks_the_most_recently_updated_session_of_the_directory(make_env: Any) -> None:
    env = await make_env({"responses": [reply("ok")], "when_exhausted": "repeat_last"})
    older = (await env.exec("--json", "--skip-git-repo-check", "a")).events[0]["thread_id"]
    newer = (await env.exec("--json", "--skip-git-repo-check", "b")).events[0]["thread_id"]
    assert older != newer
    elsewhere = env.work / "sub"
    elsewhere.mkdir()
    assert (await env.exec("--json", "--skip-git-repo-check", "c", cwd=elsewhere)).code == 0
    assert (await env.exec("--json", "--skip-git-repo-check", "resume", older, "touch")).code == 0
    last = await env.exec("--json", "--skip-git-repo-check", "resume", "--last", "which")
    assert last.events[0]["thread_id"] == older


@pytest.mark.parametrize("as_json", [False, True])
async def test_ctrl_c_interrupts_the_turn_says_so_and_exits_1_as_codex(make_env: Any, as_json: bool) -> None:
    """Codex 0.169 (checked by hand against a stalled mock model): "turn interrupted" on stderr and exit
    status 1; with --json, no further event after turn.started. The stored turn is interrupted."""
    env = await make_env([{"output": [message("never finished")], "stall_after": 1, "stall_s": 60}])
    argv = [*(["--json"] if as_json else []), "--skip-git-repo-check", "x"]
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "PYCODEX_", "OPENAI_"))}
    full_env.update(CODEX_HOME=str(env.home), CODEX_API_KEY="dummy", PYCODEX_FSYNC="0")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pycodex", "exec", *argv, cwd=env.work, env=full_env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert proc.stderr is not None and proc.stdout is not None
        for _ in range(2000):  # bounded: the model has the turn's request once it streams
            if env.requests():
                break
            await asyncio.sleep(0.01)
        assert env.requests(), "the turn never reached the model"
        proc.send_signal(2)
        out, err = await asyncio.wait_for(proc.communicate(), RUN_TIMEOUT_S)
    finally:
        await stop_process(proc)
    assert proc.returncode == 1, err
    assert "Traceback" not in err.decode()
    if not as_json:
        assert err.decode().splitlines()[-1] == "turn interrupted"
    else:
        types = [json.loads(line)["type"] for line in out.decode().splitlines()]
        assert types[0] == "thread.started" and types[-1] == "turn.started", types
    rollouts = list((env.home / "sessions").rglob("rollout-*.jsonl"))
    assert len(rollouts) == 1 and '"turn_aborted"' in rollouts[0].read_text()
