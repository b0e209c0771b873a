"""`pycodex exec` as a subprocess against the fake Responses server on loopback."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.exec_cli_env import (
    METADATA_WARNING,
    RUN_TIMEOUT_S,
    make_env,
    reply,
    user_texts,
)
from tests.support.fake_model import exec_call, message
from tests.support.hermetic import stop_walks_at
from tests.support.procs import stop_process

__all__ = ["make_env"]


async def test_json_stream_matches_codex_field_for_field(make_env: Any) -> None:
    env = await make_env([{"output": [{"type": "reasoning", "summary": ["**Plan** think"]}, message("hello there")]}])
    run = await env.exec("--json", "--skip-git-repo-check", "say hi")
    assert run.code == 0, run.stderr
    events = run.events
    thread_id = events[0]["thread_id"]
    uuid.UUID(thread_id)
    assert events == [
        {"type": "thread.started", "thread_id": thread_id},
        {"type": "item.completed", "item": {"id": "item_0", "type": "error", "message": METADATA_WARNING}},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "item_1", "type": "reasoning", "text": "**Plan** think"}},
        {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": "hello there"}},
        {"type": "turn.completed", "usage": events[-1]["usage"]},
    ]
    assert list(events[-1]["usage"]) == ["input_tokens", "cached_input_tokens", "cache_write_input_tokens",
                                         "output_tokens", "reasoning_output_tokens"]
    assert all(isinstance(v, int) for v in events[-1]["usage"].values()) and events[-1]["usage"]["input_tokens"] > 0
    # Compact JSON, as serde prints it.
    assert run.stdout.splitlines()[2] == '{"type":"turn.started"}'
    [request] = env.requests()
    assert request["headers"]["originator"] == "codex_exec" and user_texts(request)[-1] == "say hi"
    # Stored as an exec session: listed with sourceKinds exec, hidden from the default listing.
    from app_server.app import AppServer
    from pycodex.exec_cli.inproc import InProcessClient

    app = AppServer(codex_home=env.home)
    client = InProcessClient(app, session_source="vscode")
    await client.start()
    try:
        await client.request("initialize", {"clientInfo": {"name": "t", "version": "0"}})
        listed = await client.request("thread/list", {"sourceKinds": ["exec"]})
        default = await client.request("thread/list", {})
    finally:
        await client.close()
        await app.shutdown()
    assert [t["id"] for t in listed["data"]] == [thread_id] and listed["data"][0]["source"] == "exec"
    assert default["data"] == []


async def test_experimental_json_alias_and_a_command_turn(make_env: Any) -> None:
    env = await make_env([{"output": [exec_call("c1", "echo hello-from-mock")]},
                          {"output": [exec_call("c2", "echo to-stderr >&2; exit 3")]}, reply("done")])
    run = await env.exec("--experimental-json", "--skip-git-repo-check", "run it")
    assert run.code == 0, run.stderr  # a failed command does not fail the turn
    assert run.types == ["thread.started", "item.completed:error", "turn.started", "item.started:command_execution",
                         "item.completed:command_execution", "item.started:command_execution",
                         "item.completed:command_execution", "item.completed:agent_message", "turn.completed"]
    started, completed, _, failed = (e["item"] for e in run.events[3:7])
    assert started == {"id": "item_1", "type": "command_execution", "command": started["command"],
                       "aggregated_output": "", "exit_code": None, "status": "in_progress"}
    assert "echo hello-from-mock" in started["command"]
    assert completed["id"] == "item_1" and completed["status"] == "completed" and completed["exit_code"] == 0
    assert "hello-from-mock\n" in completed["aggregated_output"]
    assert failed["id"] == "item_2" and failed["status"] == "failed" and failed["exit_code"] == 3
    assert "to-stderr" in failed["aggregated_output"]


async def test_output_last_message_and_output_schema_reach_file_and_request(make_env: Any, tmp_path: Path) -> None:
    env = await make_env([reply('{"a":1}')])
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
              "additionalProperties": False}
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    last = tmp_path / "last.txt"
    run = await env.exec("--skip-git-repo-check", "--output-schema", str(tmp_path / "schema.json"),
                         "-o", str(last), "x")
    assert run.code == 0, run.stderr
    assert last.read_text() == '{"a":1}'
    assert run.stdout == '{"a":1}\n'  # without --json stdout carries the final message only
    assert "tokens used" in run.stderr and "user\nx\n" in run.stderr
    assert "sandbox: workspace-write [workdir, /tmp, $TMPDIR]\n" in run.stderr and "approval: never\n" in run.stderr
    [request] = env.requests()
    assert request["body"]["text"] == {"format": {"type": "json_schema", "strict": True, "schema": schema,
                                                  "name": "codex_output_schema"}}


async def test_stdin_prompt_forms(make_env: Any) -> None:
    env = await make_env({"responses": [reply("ok")], "when_exhausted": "repeat_last"})
    dash = await env.exec("--json", "--skip-git-repo-check", "-", stdin="from stdin\n")
    assert dash.code == 0, dash.stderr
    assert "Reading prompt from stdin" not in dash.stderr
    bare = await env.exec("--json", "--skip-git-repo-check", stdin="bare stdin")
    assert bare.code == 0 and "Reading prompt from stdin..." in bare.stderr
    both = await env.exec("--json", "--skip-git-repo-check", "the prompt", stdin="piped data\n")
    assert both.code == 0 and "Reading additional input from stdin..." in both.stderr
    texts = [user_texts(r)[-1] for r in env.requests()]
    assert texts == ["from stdin\n", "bare stdin", "the prompt\n\n<stdin>\npiped data\n</stdin>"]
    empty = await env.exec("--json", "--skip-git-repo-check", stdin="")
    assert empty.code == 1 and empty.stderr.strip().endswith("No prompt provided via stdin.")
    assert empty.stdout == "" and len(env.requests()) == 3


async def test_exit_codes_for_model_errors_usage_errors_and_git_check(make_env: Any) -> None:
    env = await make_env([{"status": 400, "body": {"error": {"message": "bad thing", "type": "invalid_request"}}}])
    failed = await env.exec("--json", "--skip-git-repo-check", "x")
    assert failed.code == 1
    assert failed.types == ["thread.started", "item.completed:error", "turn.started", "error", "turn.failed"]
    assert failed.events[-1]["error"]["message"] == failed.events[-2]["message"] != ""
    human = await env.exec("--skip-git-repo-check", "x")  # the script is exhausted: HTTP 500
    assert human.code == 1 and human.stdout == "" and human.stderr.count("ERROR: ") == 1  # Codex: 2
    usage = await env.exec("--bogus-flag", "x")
    assert usage.code == 2 and "unrecognized arguments: --bogus-flag" in usage.stderr
    bad_sandbox = await env.exec("-s", "nope", "x")
    assert bad_sandbox.code == 2
    # git's own ceiling keeps the walk inside the test's folder, whatever lies above the temp folder.
    no_git = await env.exec("--json", "x", env={"GIT_CEILING_DIRECTORIES": str(env.work.parent)})
    assert no_git.code == 1 and no_git.stdout == ""
    assert "Not inside a trusted directory and --skip-git-repo-check was not specified." in no_git.stderr
    assert len(env.requests()) == 2  # neither the usage errors nor the refusal reached the model
    missing_cd = await env.exec("--json", "-C", str(env.work / "missing"), "x")
    assert missing_cd.code == 1 and "No such file or directory" in missing_cd.stderr


async def test_cd_and_add_dir_shape_the_workspace(make_env: Any, tmp_path: Path) -> None:
    env = await make_env([reply("ok")])
    (tmp_path / "repo").mkdir()
    stop_walks_at(tmp_path / "repo")  # a repository (an empty `.git` folder is none, for Codex as for us)
    extra = tmp_path / "extra"
    extra.mkdir()
    run = await env.exec("--json", "-C", str(tmp_path / "repo"), "--add-dir", str(extra), "--add-dir", "rel",
                         "-c", 'model="from-config"', "x", cwd=tmp_path)
    assert run.code == 0, run.stderr
    assert env.requests()[0]["body"]["model"] == "from-config"
    body = json.dumps(env.requests()[0]["body"])
    assert str(tmp_path / "repo") in body and str(extra) in body and str(tmp_path / "repo" / "rel") in body


async def test_an_unreachable_model_fails_the_turn_in_bounded_time(make_env: Any) -> None:
    env = await make_env(None)
    run = await env.exec("--json", "--skip-git-repo-check", "x", env={"PYCODEX_EXEC_MAX_NETWORK_WAITS": "1"})
    assert run.code == 1
    assert run.types[:3] == ["thread.started", "item.completed:error", "turn.started"]
    assert run.types[-1] == "turn.failed"
    assert run.events[-1]["error"]["message"]


def _shape(events: list[dict[str, Any]]) -> list[tuple[str, list[str], str, list[str]]]:
    """Event types and key sets, without Codex's warning about the mock model's unknown metadata."""
    kept = [e for e in events if not (e.get("item", {}).get("type") == "error"
                                      and e["item"]["message"].startswith("Model metadata for"))]
    return [(e["type"], sorted(e), e.get("item", {}).get("type", ""), sorted(e.get("item", {}))) for e in kept]


@pytest.mark.codex
@pytest.mark.parametrize("script", [
    [{"output": [{"type": "reasoning", "summary": ["**Plan** x"]}, exec_call("c1", "echo hi")]}, reply("done")],
    [{"status": 400, "body": {"error": {"message": "bad thing", "type": "invalid_request"}}}],
], ids=["command_turn", "http_400"])
async def test_same_event_shapes_as_codex_exec_json(make_env: Any, codex_bin: Path, script: list[Any]) -> None:
    ours_env = await make_env(script)
    ours = await ours_env.exec("--json", "--skip-git-repo-check", "go")
    theirs_env = await make_env(script)
    theirs = await theirs_env.exec("--json", "--skip-git-repo-check", "go", binary=codex_bin)
    assert ours.code == theirs.code, (ours.stderr, theirs.stderr)
    assert _shape(ours.events) == _shape(theirs.events)
    if ours.code:
        # The same turn.failed message, except that for an HTTP 400 Codex shows the raw JSON body where
        # pycodex shows the body's `error.message`.
        expected = theirs.events[-1]
        if script[0].get("status") == 400:
            assert json.loads(expected["error"]["message"]) == script[0]["body"]
            expected = {**expected, "error": {"message": script[0]["body"]["error"]["message"]}}
        assert ours.events[-1] == expected
    else:
        assert [e["item"]["status"] for e in ours.events if e.get("item", {}).get("type") == "command_execution"] \
            == [e["item"]["status"] for e in theirs.events if e.get("item", {}).get("type") == "command_execution"]


async def test_a_stalled_model_stream_is_given_up_after_the_idle_bound(make_env: Any) -> None:
    env = await make_env([{"output": [message("never finished")], "stall_after": 1, "stall_s": 30}])
    run = await env.exec("--json", "--skip-git-repo-check", "x", env={"PYCODEX_EXEC_IDLE_TIMEOUT_S": "1"})
    assert run.code == 1, run.stderr
    assert run.types[-2:] == ["error", "turn.failed"]
    assert run.events[-1]["error"]["message"] == "no progress from the model for 1 s" == run.events[-2]["message"]


def test_root_options_before_exec_and_subcommand_options_after_it() -> None:
    from pycodex.exec_cli.args import UsageError, parse_exec_args, split_root_args

    argv = split_root_args(["--ask-for-approval", "never", "--sandbox=read-only", "-c", "a=1", "--enable", "x",
                            "exec", "--color", "never", "--json", "--add-dir", "A", "resume", "--last", "-"])
    assert argv == ["-a", "never", "-s", "read-only", "-c", "a=1", "--enable", "x",
                    "--color", "never", "--json", "--add-dir", "A", "resume", "--last", "-"]
    args = parse_exec_args(argv)
    assert (args.command, args.last, args.prompt, args.sandbox, args.approval) == ("resume", True, "-", "read-only", "never")
    assert args.config == ["a=1", "features.x=true"] and args.add_dirs == ["A"] and args.json
    assert split_root_args(["-c", "a=1", "app-server"]) is None and split_root_args(["exec-server"]) is None
    assert split_root_args(["e", "hi"]) == ["hi"]
    # A prompt that is not a subcommand; options after `resume` win; `--add-dir` after `resume` is refused.
    before = parse_exec_args(["-m", "a", "say", "resume", "--last"])
    assert (before.command, before.prompt) == ("resume", "say")
    assert parse_exec_args(["say", "resume", "--last", "later"]).prompt == "later"
    assert parse_exec_args(["say", "-m", "x"]).command is None
    late = parse_exec_args(["-m", "a", "resume", "ID", "p", "-m", "b", "--json"])
    assert (late.session_id, late.prompt, late.model, late.json) == ("ID", "p", "b", True)
    with pytest.raises(UsageError):
        parse_exec_args(["resume", "--last", "--add-dir", "x"])
    with pytest.raises(UsageError):
        parse_exec_args(["resume", "--last", "id", "prompt"])
    fork = parse_exec_args(["fork", "ID"])
    assert (fork.command, fork.session_id, fork.prompt) == ("fork", "ID", None)


async def test_the_rust_wrapper_argv_shape_runs(make_env: Any, tmp_path: Path) -> None:
    env = await make_env([reply("one"), reply("two")])
    first = await env.exec("--json", "--skip-git-repo-check", "first")
    last = tmp_path / "last.txt"
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "PYCODEX_", "OPENAI_"))}
    full_env.update(CODEX_HOME=str(env.home), CODEX_API_KEY="dummy", PYCODEX_FSYNC="0")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pycodex", "--ask-for-approval", "never", "--sandbox", "workspace-write", "exec",
        "--color", "never", "--skip-git-repo-check", "--json", "--add-dir", str(tmp_path), "--output-last-message",
        str(last), "resume", "--last", "-", cwd=env.work, env=full_env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(b"second\n"), RUN_TIMEOUT_S)
    finally:
        await stop_process(proc)
    assert proc.returncode == 0, err.decode()
    assert json.loads(out.decode().splitlines()[0])["thread_id"] == first.events[0]["thread_id"]
    assert last.read_text() == "two"


async def test_the_transcript_goes_to_stderr_and_the_answer_to_stdout(make_env: Any) -> None:
    env = await make_env([{"output": [{"type": "reasoning", "summary": ["**Plan** x"]},
                                      exec_call("c1", "echo hi-cmd")]}, reply("done cmd")])
    run = await env.exec("--skip-git-repo-check", "--color", "never", "run")
    assert run.code == 0, run.stderr
    assert run.stdout == "done cmd\n"
    err = run.stderr
    session = err.split("session id: ", 1)[1].split("\n", 1)[0]
    uuid.UUID(session)
    order = ["workdir: ", "model: mock-model\n", "provider: mock_provider\n", "user\nrun\n", "**Plan** x\n",
             "exec\n", "echo hi-cmd", f" in {env.work}\n", " succeeded in ", "hi-cmd\n", "codex\ndone cmd\n",
             "tokens used\n"]
    positions = [err.index(part) for part in order]
    assert positions == sorted(positions), err
    assert "\x1b[" not in err


async def test_an_unreachable_provider_is_reported_once(make_env: Any) -> None:
    """Codex prints a failed turn's error twice (when it happens and when the turn ends); pycodex once."""
    env = await make_env(None)
    run = await env.exec("--skip-git-repo-check", "x", env={"PYCODEX_EXEC_MAX_NETWORK_WAITS": "1"})
    assert run.code == 1
    errors = [line for line in run.stderr.splitlines() if line.startswith("ERROR: ")]
    assert len(errors) == 1 and "connection refused" in errors[0], run.stderr
    assert "tokens used" not in run.stderr
