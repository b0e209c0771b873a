"""A fake agent CLI for the agent_api tests, run as ``python fake_agent_backend.py ARGV...``.

``... exec --json ...`` plays ``codex exec --json`` (scenario from ``FAKE_CODEX_SCENARIO``);
``... app-server`` plays a tiny stdio app-server (initialize, thread/list, thread/fork, turn/start).

Exec scenarios: ``ok`` (default), ``add_dirs_runtime_rejection_resume_{last,id}_buffered_tail``,
``add_dirs_runtime_rejection_exec``, ``resume_{last,id}_not_found`` (stderr only),
``resume_{last,id}_not_found_buffered_transport_errors``, ``block_until_killed``, ``many_events_then_exit``,
``buffered_then_exit``, ``parse_error_midstream``, ``nonzero_exit``, ``tool_lifecycle_ok``,
``model_runtime_rejection_after_thread_started``, ``transport_error_then_exit``.
Tuning: ``FAKE_CODEX_BUFFERED_EVENT_COUNT`` / ``_PADDING_BYTES`` / ``_SLEEP_EVERY`` / ``_SLEEP_MILLIS``.
Assertions (each failure is an ``error`` line and exit 1): ``FAKE_CODEX_EXPECT_PROMPT`` (stdin == prompt + LF,
closed within 1 s), ``FAKE_CODEX_EXPECT_RESUME_ID``, ``FAKE_CODEX_EXPECT_ADD_DIR_COUNT`` + ``_ADD_DIR_<i>``,
``FAKE_CODEX_EXPECT_MODEL`` (``<absent>`` for none), ``FAKE_CODEX_EXPECT_SANDBOX``, ``FAKE_CODEX_EXPECT_APPROVAL``,
``FAKE_CODEX_EXPECT_DANGEROUS_BYPASS`` (the bypass flag once, no sandbox/approval flags).
``FAKE_CODEX_PID_FILE``: ``block_until_killed`` writes its own pid and a grandchild's there.

App-server: ``FAKE_CODEX_THREADS`` (JSON list for thread/list; default one exec thread ``thread-123``),
``FAKE_CODEX_APP_SERVER_SCENARIO``: ``ok``, ``fork_not_found``, ``block_turn``, ``approval_during_turn``.
Stdlib only, so it runs under any interpreter.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from typing import Any

ADD_DIRS_REJECTION = {
    "type": "error",
    "message": "add_dirs rejected by runtime",
    "code": "add_dirs_runtime_rejection",
    "details": {"raw_path": "ADD_DIR_RAW_PATH_SECRET", "stdout": "ADD_DIR_STDOUT_SECRET",
                "stderr": "ADD_DIR_STDERR_SECRET"},
}


def emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")


def fail(message: str, code: int = 1) -> None:
    emit({"type": "error", "message": message})
    sys.stdout.flush()
    sys.exit(code)


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def flag_values(argv: list[str], flag: str) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == flag]


def read_stdin(deadline_s: float = 1.0) -> bytes | None:
    """All of stdin, or None if it is not closed within the deadline."""
    fd = sys.stdin.fileno()
    data = b""
    end = time.monotonic() + deadline_s
    while True:
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return data
        data += chunk


def check_expectations(argv: list[str]) -> None:
    if "--json" not in argv or "--skip-git-repo-check" not in argv:
        fail("missing required flag: --json / --skip-git-repo-check")
    expected_prompt = os.environ.get("FAKE_CODEX_EXPECT_PROMPT")
    if expected_prompt is not None:
        got = read_stdin()
        if got is None:
            fail("stdin was not closed within 1s")
        want = expected_prompt.encode() + b"\n"
        if got != want:
            fail(f"stdin prompt mismatch: expected {len(want)} bytes, got {len(got or b'')} bytes")
    count = os.environ.get("FAKE_CODEX_EXPECT_ADD_DIR_COUNT")
    if count is not None:
        want_dirs = [os.environ[f"FAKE_CODEX_EXPECT_ADD_DIR_{i}"] for i in range(int(count))]
        if flag_values(argv, "--add-dir") != want_dirs:
            fail("add-dir mismatch")
    for env_name, flag in (("FAKE_CODEX_EXPECT_MODEL", "--model"), ("FAKE_CODEX_EXPECT_SANDBOX", "--sandbox"),
                           ("FAKE_CODEX_EXPECT_APPROVAL", "--ask-for-approval")):
        want = os.environ.get(env_name)
        if want is not None and flag_values(argv, flag) != ([] if want == "<absent>" else [want]):
            fail(f"{flag} mismatch")
    if os.environ.get("FAKE_CODEX_EXPECT_DANGEROUS_BYPASS") and (
        argv.count("--dangerously-bypass-approvals-and-sandbox") != 1
        or {"--full-auto", "--ask-for-approval", "--sandbox"} & set(argv)
    ):
        fail("dangerous bypass mismatch")
    if "--model" in argv and "--add-dir" in argv and argv.index("--model") > argv.index("--add-dir"):
        fail("--model must come before --add-dir")


def check_resume(argv: list[str], selector: str) -> None:
    if "resume" not in argv:
        fail("expected a resume subcommand")
    tail = argv[argv.index("resume") + 1 :]
    want = ["--last", "-"] if selector == "last" else [os.environ.get("FAKE_CODEX_EXPECT_RESUME_ID", ""), "-"]
    if tail != want:
        fail("resume argv mismatch")


def buffered(kind: str, thread_id: str = "thread-1") -> None:
    count = env_int("FAKE_CODEX_BUFFERED_EVENT_COUNT", 4096)
    padding = "x" * env_int("FAKE_CODEX_BUFFERED_EVENT_PADDING_BYTES", 2048)
    sleep_every = env_int("FAKE_CODEX_BUFFERED_EVENT_SLEEP_EVERY", 0)
    sleep_s = env_int("FAKE_CODEX_BUFFERED_EVENT_SLEEP_MILLIS", 0) / 1000
    for i in range(count):
        if kind == "turn":
            emit({"type": "turn.started", "thread_id": thread_id, "turn_id": f"buffered-turn-{i}", "padding": padding})
        else:
            emit({"type": "error", "message": f"transient transport failure {i}", "code": "transport_error",
                  "padding": padding})
        if sleep_every and (i + 1) % sleep_every == 0:
            sys.stdout.flush()
            time.sleep(sleep_s)


def write_last_message(argv: list[str], text: str) -> None:
    for path in flag_values(argv, "--output-last-message"):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


def run_exec(argv: list[str]) -> int:
    check_expectations(argv)
    scenario = os.environ.get("FAKE_CODEX_SCENARIO", "ok")
    exit_code = 0
    if scenario == "ok":
        reply = "FAKE-REPLY: " + os.environ.get("FAKE_CODEX_EXPECT_PROMPT", "done")
        emit({"type": "thread.started", "thread_id": "thread-1"})
        emit({"type": "turn.started"})
        emit({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": reply}})
        emit({"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}})
        write_last_message(argv, reply)
    elif scenario.startswith("add_dirs_runtime_rejection_resume_"):
        check_resume(argv, "last" if "_resume_last" in scenario else "id")
        emit({"type": "thread.resumed", "thread_id": "thread-1"})
        if scenario.endswith("_buffered_tail"):
            buffered("turn")
        emit(ADD_DIRS_REJECTION)
        sys.stderr.write("ADD_DIR_STDERR_SECRET\n")
        exit_code = 1
    elif scenario == "add_dirs_runtime_rejection_exec":
        emit({"type": "thread.started", "thread_id": "thread-1"})
        emit(ADD_DIRS_REJECTION)
        exit_code = env_int("FAKE_CODEX_RUNTIME_REJECTION_EXIT_CODE", 1)
    elif scenario in ("resume_last_not_found", "resume_id_not_found"):
        check_resume(argv, "last" if "_last_" in scenario else "id")
        sys.stderr.write("no session found\n" if "_last_" in scenario else "session not found\n")
        exit_code = 1
    elif scenario.startswith("resume_") and scenario.endswith("_not_found_buffered_transport_errors"):
        last = scenario.startswith("resume_last")
        check_resume(argv, "last" if last else "id")
        buffered("error")
        emit({"type": "error", "message": "no session found" if last else "session not found"})
        exit_code = 1
    elif scenario == "block_until_killed":
        emit({"type": "thread.started", "thread_id": "thread-1"})
        sys.stdout.flush()
        sys.stderr.write("RAW-STDERR-SECRET-CANCEL\n")
        sys.stderr.flush()
        grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pid_file = os.environ.get("FAKE_CODEX_PID_FILE")
        if pid_file:
            with open(pid_file + ".tmp", "w") as handle:
                handle.write(f"{os.getpid()} {grandchild.pid}\n")
            os.replace(pid_file + ".tmp", pid_file)
        time.sleep(600)
    elif scenario in ("many_events_then_exit", "buffered_then_exit"):
        emit({"type": "thread.started", "thread_id": "thread-1"})
        if scenario == "many_events_then_exit":
            os.environ.setdefault("FAKE_CODEX_BUFFERED_EVENT_COUNT", "200")
            os.environ.setdefault("FAKE_CODEX_BUFFERED_EVENT_PADDING_BYTES", "1024")
        buffered("turn")
    elif scenario == "parse_error_midstream":
        emit({"type": "thread.started", "thread_id": "thread-1"})
        sys.stdout.write("THIS IS NOT JSON RAW-LINE-SECRET-PARSE\n")
        emit({"type": "turn.started"})
    elif scenario == "nonzero_exit":
        emit({"type": "thread.started", "thread_id": "thread-1"})
        sys.stderr.write("RAW-STDERR-SECRET\n")
        exit_code = 3
    elif scenario == "tool_lifecycle_ok":
        emit({"type": "thread.started", "thread_id": "thread-1"})
        emit({"type": "turn.started"})
        command = {"id": "item_1", "type": "command_execution", "command": "echo STDOUT-SENTINEL-DO-NOT-LEAK",
                   "aggregated_output": "", "exit_code": None, "status": "in_progress"}
        emit({"type": "item.started", "item": command})
        emit({"type": "item.completed", "item": {**command, "aggregated_output": "STDOUT-SENTINEL-DO-NOT-LEAK\n",
                                                 "exit_code": 3, "status": "failed"}})
        emit({"type": "turn.completed", "usage": {}})
    elif scenario == "model_runtime_rejection_after_thread_started":
        emit({"type": "thread.started", "thread_id": "thread-1"})
        secret = os.environ.get("FAKE_CODEX_MODEL_RUNTIME_REJECTION_SECRET", "MODEL-SECRET")
        emit({"type": "error", "message": f"unknown model ({secret})", "code": "model_runtime_rejection"})
        exit_code = 1
    elif scenario == "transport_error_then_exit":
        emit({"type": "thread.started", "thread_id": "thread-1"})
        emit({"type": "error", "message": "Reconnecting... 1/2 (transport failure)"})
        emit({"type": "turn.failed", "error": {"message": "transport failure"}})
        exit_code = 1
    else:
        fail(f"unknown scenario {scenario}", 2)
    sys.stdout.flush()
    return exit_code


def run_app_server() -> int:
    scenario = os.environ.get("FAKE_CODEX_APP_SERVER_SCENARIO", "ok")
    default_threads = [{"id": "thread-123", "name": None, "cwd": os.getcwd(), "source": "exec",
                        "createdAt": 1, "updatedAt": 2}]
    threads = json.loads(os.environ.get("FAKE_CODEX_THREADS", json.dumps(default_threads)))

    def send(obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    for raw in sys.stdin:
        if not raw.strip():
            continue
        msg = json.loads(raw)
        method, request_id, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if request_id is None:
            continue
        if method == "initialize":
            send({"id": request_id, "result": {"userAgent": "fake/0", "codexHome": "/nonexistent"}})
        elif method == "thread/list":
            send({"method": "configWarning", "params": {"summary": "fake warning", "details": None}})
            send({"id": request_id, "result": {"data": threads, "nextCursor": None}})
        elif method == "thread/fork":
            source = params.get("threadId")
            if scenario == "fork_not_found":
                send({"id": request_id, "error": {"code": -32600, "message": f"no rollout found for thread id {source}"}})
            else:
                send({"id": request_id, "result": {"thread": {"id": f"fork-of-{source}", "forkedFromId": source}}})
        elif method == "turn/start":
            thread_id = params.get("threadId")
            text = params["input"][0]["text"]
            send({"id": request_id, "result": {"turn": {"id": "turn-1", "status": "inProgress"}}})
            if scenario == "block_turn":
                time.sleep(600)
            base = {"threadId": thread_id, "turnId": "turn-1"}
            send({"method": "turn/started", "params": {**base, "turn": {"id": "turn-1"}}})
            if scenario == "approval_during_turn":
                send({"id": 900, "method": "item/commandExecution/requestApproval", "params": {**base, "itemId": "x"}})
                continue  # the turn waits for an answer that never approves; stdin EOF ends the server
            reply = f"FORK-REPLY: {text}"
            send({"method": "item/agentMessage/delta", "params": {**base, "itemId": "msg_1", "delta": reply}})
            send({"method": "item/completed", "params": {**base, "item": {"type": "agentMessage", "id": "msg_1",
                                                                          "text": reply}}})
            send({"method": "turn/completed", "params": {"threadId": thread_id,
                                                        "turn": {"id": "turn-1", "status": "completed"}}})
        else:
            send({"id": request_id, "error": {"code": -32601, "message": f"unknown method {method}"}})
    return 0


def main() -> int:
    argv = sys.argv[1:]
    if "app-server" in argv:
        return run_app_server()
    if "exec" not in argv:
        sys.stderr.write('expected argv to include "exec"\n')
        return 2
    return run_exec(argv)


if __name__ == "__main__":
    sys.exit(main())
