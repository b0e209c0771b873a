"""The debugging commands on a recorded session: a turn with an approval on a remote executor (via the relay)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.recorded_session import ANSWER, PYCODEX, RecordedSession, record_session


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> RecordedSession:
    return asyncio.run(record_session(tmp_path_factory.mktemp("recorded")))


def pycodex(session: RecordedSession, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "PYCODEX_"))}
    return subprocess.run([*PYCODEX, *args], env=environ | {"CODEX_HOME": str(session.home)} | env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_the_recorded_turn_ran_remotely_after_an_approval(session: RecordedSession) -> None:
    methods = [m.get("method") for m in session.messages]
    assert "item/commandExecution/requestApproval" in methods
    assert (session.workspace / "approved.txt").read_text() == "approved"
    completed = [m for m in session.messages if m.get("method") == "turn/completed"]
    assert completed[-1]["params"]["turn"]["status"] == "completed"
    # The model was the CLI's mock-model: it logged both requests of the turn.
    assert len(session.requests.read_text().splitlines()) == 2


def test_every_stderr_line_is_one_json_object_and_turn_records_carry_their_ids(session: RecordedSession) -> None:
    lines = session.stderr.read_text().splitlines()
    assert len(lines) > 5
    records = [json.loads(line) for line in lines]  # raises on any line that is not JSON
    assert all(isinstance(r, dict) and {"ts", "level", "target", "message"} <= r.keys() for r in records)
    in_turn = [r for r in records if r["turn_id"] == session.turn_id]
    assert in_turn and all(r["thread_id"] == session.thread_id for r in in_turn)
    # The model requests of the turn (and their timings) are logged inside it, so they carry both ids.
    model = [r for r in records if r["target"] == "app_server.model.client"]
    assert len(model) >= 4 and all(r in in_turn for r in model)
    # debug, not trace: the HTTP libraries keep quiet
    assert not [r for r in records if r["target"].split(".")[0] in ("httpx", "httpcore", "websockets")]


def test_threads_list_show_and_export(session: RecordedSession) -> None:
    listed = pycodex(session, "threads", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [session.thread_id]
    table = pycodex(session, "threads", "list")
    assert session.thread_id in table.stdout and "write the file" in table.stdout

    shown = pycodex(session, "threads", "show", session.thread_id)
    assert shown.returncode == 0, shown.stderr
    assert session.turn_id in shown.stdout and "completed" in shown.stdout
    assert "printf approved > approved.txt" in shown.stdout and ANSWER in shown.stdout

    exported = pycodex(session, "threads", "export", session.thread_id, "--format", "json")
    thread = json.loads(exported.stdout)
    assert thread["id"] == session.thread_id and [t["id"] for t in thread["turns"]] == [session.turn_id]
    kinds = [item["type"] for item in thread["turns"][0]["items"]]
    assert kinds[0] == "userMessage" and "commandExecution" in kinds and kinds[-1] == "agentMessage"

    markdown = pycodex(session, "threads", "export", session.thread_id, "--format", "md").stdout
    assert markdown.startswith(f"# Thread {session.thread_id}\n")
    assert f"## turn {session.turn_id} (completed" in markdown and f"**assistant**: {ANSWER}" in markdown


@pytest.mark.parametrize("thread_id", ["019a0000-0000-7000-8000-000000000000", "not-an-id"])
def test_threads_unknown_or_bad_id_is_one_line(session: RecordedSession, thread_id: str) -> None:
    for action in ("show", "export"):
        done = pycodex(session, "threads", action, thread_id)
        assert done.returncode == 1 and done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("error: ")


def test_config_show_origin(session: RecordedSession) -> None:
    done = pycodex(session, "-c", "model=override-model", "config", "show", "--origin", "--json")
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    config = str(session.home / "config.toml")
    assert shown["model"] == {"value": "override-model", "origin": "-c model"}
    assert shown["approval_policy"] == {"value": "on-request", "origin": f"{config}:2"}
    assert shown["model_providers.mock_provider.base_url"]["origin"] == f"{config}:8"
    assert shown["project_root_markers"] == {"value": [".git"], "origin": "default"}
    text = pycodex(session, "config", "show", "--origin").stdout
    assert any(line.startswith("sandbox_mode") and line.endswith(f"# {config}:3") for line in text.splitlines())


def test_doctor_reports_each_check_and_fails_on_a_bad_config(session: RecordedSession, tmp_path: Path) -> None:
    # The recording's mock model is gone: the provider check fails with its fix, the others still run.
    done = pycodex(session, "doctor")
    lines = {line.split()[1]: line for line in done.stdout.splitlines()}
    assert set(lines) == {"config", "provider", "sandbox", "codex", "remote"}
    assert lines["config"].startswith("ok ") and lines["remote"].startswith("skip")
    assert lines["provider"].startswith("FAIL") and "-> fix:" in lines["provider"]
    assert done.returncode == 1
    # A bad value in config.toml: the loader's own file:line:column error.
    home = tmp_path / "bad"
    home.mkdir()
    (home / "config.toml").write_text('model = "m"\nsandbox_mode = "everything"\n')
    bad = subprocess.run([*PYCODEX, "doctor"], env={**os.environ, "CODEX_HOME": str(home)},
                         capture_output=True, text=True, timeout=60, check=False)
    config_line = bad.stdout.splitlines()[0]
    assert config_line.startswith("FAIL config") and f"{home / 'config.toml'}:2:16:" in config_line
    assert bad.returncode == 1


def test_doctor_passes_against_a_live_mock_model_and_relay_url(session: RecordedSession, tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text('[["hi"]]')
    with subprocess.Popen([*PYCODEX, "mock-model", "--script", str(script)], stdout=subprocess.PIPE,
                          text=True) as mock:
        try:
            assert mock.stdout is not None
            url = mock.stdout.readline().strip()
            home = tmp_path / "home"
            home.mkdir()
            (home / "config.toml").write_text(
                f'model_provider = "m"\n[model_providers.m]\nname = "m"\nbase_url = "{url}"\nenv_key = "MOCK_KEY"\n')
            env = {**os.environ, "CODEX_HOME": str(home), "MOCK_KEY": "sk-secret-value",
                   "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": url}
            done = subprocess.run([*PYCODEX, "doctor"], env=env, capture_output=True, text=True, timeout=60,
                                  check=False)
        finally:
            mock.terminate()
    provider = next(line for line in done.stdout.splitlines() if line.split()[1] == "provider")
    assert provider.startswith("ok ") and url in provider
    remote = next(line for line in done.stdout.splitlines() if line.split()[1] == "remote")
    assert remote.startswith("ok ") and f"relay {url} reachable" in remote
    assert "sk-secret-value" not in done.stdout + done.stderr
