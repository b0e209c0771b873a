"""One CODEX_HOME, two builds: threads the app build (writer A) stored are read and continued by the exec build
(reader B), then read again by A.

A's stdio app-server writes six threads (a plain turn, to which it gives a name; a command; an escalated
command the client approves; an apply_patch; a turn then a compaction; a turn then a fork with one turn on the
fork), reads each back (thread/read includeTurns, thread/list) and exits on stdin EOF. B, on the same home and
work folder, must list every thread with the same preview and name and read the same turns and items
(support/storage.py says which fields), then resumes the command thread for one more turn whose model
request must carry A's user text, A's command output and A's answer. B exits, and a new A must read that
thread as B left it. One fake model serves all three, routing each response to its thread by a tag in the
user text. Pairs are ``app=WRITER,exec=READER``.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from compat_tests.support.artifacts import PairLog
from compat_tests.support.builds import Build, releases
from compat_tests.support.processes import ProcessGroup, clean_env
from compat_tests.support.rpc import STEP, AppServerRpc, ScenarioError
from compat_tests.support.scenario import TOKEN, start_model, write_config
from compat_tests.support.storage import (
    JsonObj,
    StorageRpc,
    compare_listing,
    compare_thread,
    compare_turns,
    history_problems,
    requests_with_user_text,
    split_acknowledged,
)

pytestmark = [pytest.mark.compat, pytest.mark.timeout(300)]
SCENARIO = "storage"

EXEC_OUTPUT = "storage-exec-output"
PATCH = "*** Begin Patch\n*** Add File: storage-notes.txt\n+first line\n*** End Patch\n"
ESCALATED = {"cmd": "echo approved", "sandbox_permissions": "require_escalated", "justification": "compat"}
THREAD_NAME = "storage plain thread"
#: role -> the user text of its (first) turn; each tag routes the fake model's responses to its thread.
PROMPTS = {
    "plain": "storage-plain: say hello",
    "exec": "storage-exec: run the command",
    "approval": "storage-approval: run it once approved",
    "patch": "storage-patch: add the notes file",
    "compact": "storage-compact: say hello",
    "fork-parent": "storage-fork-parent: say hello",
    "fork": "storage-fork-child: and again",
}
RESUMED_PROMPT = "storage-resumed: what did the command print?"
RESUMED_ANSWER = "it printed storage-exec-output"
EXEC_ANSWER = "ran it"
RESUMED = "exec"  # the thread B continues
#: role -> the item types the writer's own thread/read must show, so each thread exercises what it is for.
WRITES = {
    "plain": ("userMessage", "agentMessage"),
    "exec": ("userMessage", "commandExecution", "agentMessage"),
    "approval": ("userMessage", "commandExecution", "agentMessage"),
    "patch": ("userMessage", "fileChange", "agentMessage"),
    "compact": ("userMessage", "agentMessage", "contextCompaction"),
    "fork-parent": ("userMessage", "agentMessage"),
    "fork": ("userMessage", "agentMessage"),
}
#: Reviewed differences between builds that are not losses, per (writer, reader), thread ids as ``<role>``.
#: Codex 0.168's thread/list previews a fork by its own first user message, where 0.169 and later (and the
#: writer's own thread/read) take the first one it inherited. A listed line that stops occurring fails.
_FORK_PREVIEW_0168 = (
    'codex@0.168.0 thread/list thread <fork>: preview "storage-fork-child: and again", '
    'writer had "storage-fork-parent: say hello"'
)
ACKNOWLEDGED: dict[tuple[str, str], list[str]] = {
    (writer, "codex@0.168.0"): [_FORK_PREVIEW_0168] for writer in ("codex@0.169.0", "codex@0.171.0")
}
# The same rule the other way: 0.168 wrote the preview of its own fork, the readers after it take the parent's.
_FORK_PREVIEW_AFTER_0168 = 'preview "storage-fork-parent: say hello", writer had "storage-fork-child: and again"'
#: pycodex releases from before the shared on-disk format (docs/storage_format.md): they read only their own
#: records, and Codex cannot read theirs (this build migrates them when it opens the store). Their pairs with
#: another format are expected to fail, strictly: one that passes must be moved out of here.
PRE_FORMAT_RELEASES = frozenset({"pycodex@0.1.0"})


def _expected_to_fail(writer: str, reader: str) -> str | None:
    """Why the pair cannot pass (a release before the shared format on one side only), or None."""
    if reader in PRE_FORMAT_RELEASES and writer != reader:
        return f"{reader} predates the shared format: it cannot read what {writer} writes"
    if writer in PRE_FORMAT_RELEASES and reader.startswith("codex@"):
        return f"{writer} predates the shared format: Codex cannot read its rollouts until pycodex migrates them"
    return None


def _fresh_home_name(reader: str) -> list[str]:
    """Codex lists a thread's name from its own index (state_5.sqlite) only, and its first start in a home it
    never ran in builds that index from the rollouts without names (as it does for its own threads when the
    index is lost); the name comes back when Codex loads the thread (session_index.jsonl). In a home Codex
    has used, pycodex writes the name into that index too (tests/app_server/store/test_shared_with_codex.py)."""
    had = 'name null, writer had "storage plain thread"'
    return [f"{reader} thread/list thread <plain>: {had}", f"{reader} thread/read <plain> (plain): {had}"]


#: pycodex builds that write the shared format: this checkout and every release after PRE_FORMAT_RELEASES.
_SHARED_FORMAT_WRITERS = [
    "current",
    *(f"pycodex@{v}" for v, _ in releases() if f"pycodex@{v}" not in PRE_FORMAT_RELEASES),
]
for _writer in _SHARED_FORMAT_WRITERS:
    for _reader in ("codex@0.168.0", "codex@0.169.0", "codex@0.171.0"):
        ACKNOWLEDGED.setdefault((_writer, _reader), []).extend(_fresh_home_name(_reader))
    # Every shared-format pycodex reads 0.168's fork as 0.169 does (the parent's preview).
    ACKNOWLEDGED[("codex@0.168.0", _writer)] = [
        f"{_writer} thread/list thread <fork>: {_FORK_PREVIEW_AFTER_0168}",
        f"{_writer} thread/read <fork> (fork): {_FORK_PREVIEW_AFTER_0168}",
    ]


def _message(tag: str, text: str) -> JsonObj:
    return {"when": tag, "output": [{"type": "message", "id": f"msg-{tag}", "text": text}]}


def _call(tag: str, item: JsonObj) -> JsonObj:
    return {"when": tag, "output": [item]}


def _function_call(call_id: str, arguments: JsonObj) -> JsonObj:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": "exec_command",
        "arguments": json.dumps(arguments),
    }


def _script() -> list[JsonObj]:
    """Responses in the order each thread asks; a request takes the first unused one its tag matches."""
    return [
        _message("storage-plain", "hello from the plain thread"),
        _call("storage-exec", _function_call("call-storage-exec", {"cmd": f"echo {EXEC_OUTPUT}"})),
        _message("storage-exec", EXEC_ANSWER),
        _call("storage-approval", _function_call("call-storage-approval", ESCALATED)),
        _message("storage-approval", "approved and ran"),
        _call(
            "storage-patch",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "input": PATCH,
                "call_id": "call-storage-patch",
            },
        ),
        _message("storage-patch", "patched"),
        _message("storage-compact", "hello before compaction"),
        _message("storage-compact", "SUMMARY: the user said hello"),
        _message("storage-fork-parent", "hello from the parent"),
        _message("storage-fork-child", "hello from the fork"),
        _message("storage-resumed", RESUMED_ANSWER),
    ]


@dataclass
class Store:
    """What the writer left and read back, and what each phase's client saw (for the artifacts)."""

    home: Path
    work: Path
    #: The reviewed differences of this pair (ACKNOWLEDGED) and those that occurred.
    accepted: list[str] = field(default_factory=list)
    occurred: list[str] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)
    reads: dict[str, JsonObj] = field(default_factory=dict)
    listing: list[JsonObj] = field(default_factory=list)
    reader_reads: dict[str, JsonObj] = field(default_factory=dict)
    #: Steps the writer build does not have (an older release): role -> the method it refused with -32601.
    unsupported: dict[str, str] = field(default_factory=dict)
    continued: JsonObj = field(default_factory=dict)
    clients: dict[str, AppServerRpc] = field(default_factory=dict)


def _fail(problems: list[str]) -> None:
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ScenarioError(f"{problems[0]}{more}", "\n".join(problems))


async def _open(group: ProcessGroup, build: Build, store: Store, phase: str) -> StorageRpc:
    """``build``'s stdio app-server on the shared home, initialized; its client is kept as ``phase``."""
    env = clean_env(
        CODEX_HOME=str(store.home),
        CODEX_API_KEY=TOKEN,
        CODEX_APP_SERVER_MANAGED_CONFIG_PATH=str(store.home / "managed_config.toml"),
    )
    handle = await group.start(
        f"{phase}-app-server",
        build.command("app-server"),
        env=env,
        cwd=store.work,
        protocol_stdout=True,
        stdin=True,
    )
    rpc = StorageRpc(AppServerRpc(handle), build.name, str(store.home))
    store.clients[phase] = rpc
    info = {"name": "pycodex-compat", "version": "0.1.0"}
    await rpc.request("initialize", {"clientInfo": info, "capabilities": {"experimentalApi": True}})
    await rpc.notify("initialized")
    return rpc


async def _close(rpc: StorageRpc) -> None:
    """Close stdin and wait (bounded) for the server to exit on its own, as a client quitting would."""
    proc = rpc.handle.proc
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), STEP)
    except TimeoutError:
        raise ScenarioError(
            f"{rpc.build} app-server did not exit within {STEP:.0f}s of stdin closing"
        ) from None
    await rpc.handle.stop()
    if proc.returncode != 0:
        raise ScenarioError(f"{rpc.build} app-server exited rc={proc.returncode} after stdin closed")


async def _read(rpc: StorageRpc, thread_id: str) -> JsonObj:
    result = await rpc.request("thread/read", {"threadId": thread_id, "includeTurns": True}, thread_id)
    thread = result.get("thread")
    if not isinstance(thread, dict):
        raise ScenarioError(f"{rpc.build} thread/read {thread_id}: answer has no thread object")
    return thread


async def _list(rpc: StorageRpc) -> list[JsonObj]:
    data = (await rpc.request("thread/list", {"limit": 100})).get("data")
    return [entry for entry in data if isinstance(entry, dict)] if isinstance(data, list) else []


async def _start_thread(rpc: StorageRpc, store: Store, role: str, **params: str) -> str:
    started = await rpc.request("thread/start", {"cwd": str(store.work), **params}, f"({role} thread)")
    thread_id = str(started["thread"]["id"])
    store.ids[role] = thread_id
    return thread_id


def _written(build: str, role: str, store: Store) -> list[str]:
    """What the writer's own read of ``role`` lacks (item types; the patched file; the fork's two turns)."""
    thread = store.reads[role]
    turns = thread.get("turns") or []
    types = {item.get("type") for turn in turns for item in turn.get("items") or []}
    where = f"{build} thread/read {store.ids[role]} ({role}) right after writing it"
    if build in PRE_FORMAT_RELEASES and role == "patch":
        # That release offers gpt-5.5 no apply_patch: the thread is still written (and compared), unpatched.
        store.unsupported["patch"] = "apply_patch"
        return []
    expected = [k for k in WRITES[role] if not (role in store.unsupported and k == "contextCompaction")]
    problems = [f"{where}: no {kind} item" for kind in expected if kind not in types]
    if role == "fork" and len(turns) != 2:
        problems.append(f"{where}: {len(turns)} turns, expected the inherited one and its own")
    if role == "patch" and not (store.work / "storage-notes.txt").is_file():
        problems.append(f"{where}: apply_patch did not write storage-notes.txt")
    return problems


async def _write(group: ProcessGroup, build: Build, store: Store) -> None:
    """Writer A: the six threads and the fork, each read back, the listing, then exit."""
    rpc = await _open(group, build, store, "writer")
    plain = await _start_thread(rpc, store, "plain")
    await rpc.turn(plain, PROMPTS["plain"])
    await rpc.request("thread/name/set", {"threadId": plain, "name": THREAD_NAME}, plain)
    await rpc.turn(await _start_thread(rpc, store, "exec"), PROMPTS["exec"])
    approval = await _start_thread(rpc, store, "approval", approvalPolicy="on-request")
    await rpc.turn(approval, PROMPTS["approval"], approve=True)
    # The freeform apply_patch tool is offered to gpt-5.5's family only (as in capture_codex_storage.py).
    await rpc.turn(await _start_thread(rpc, store, "patch", model="gpt-5.5"), PROMPTS["patch"])
    compact = await _start_thread(rpc, store, "compact")
    await rpc.turn(compact, PROMPTS["compact"])
    rpc.messages.clear()
    try:
        await rpc.request("thread/compact/start", {"threadId": compact}, compact)
    except ScenarioError as exc:
        if "-32601" not in str(exc):
            raise
        # A release before compaction existed writes the thread without one; the rest still applies.
        store.unsupported["compact"] = "thread/compact/start"
    else:
        await rpc.until_turn_completed(compact)
    parent = await _start_thread(rpc, store, "fork-parent")
    await rpc.turn(parent, PROMPTS["fork-parent"])
    forked = await rpc.request("thread/fork", {"threadId": parent}, parent)
    store.ids["fork"] = str(forked["thread"]["id"])
    await rpc.turn(store.ids["fork"], PROMPTS["fork"])
    for role, thread_id in store.ids.items():
        store.reads[role] = await _read(rpc, thread_id)
    _fail([problem for role in store.ids for problem in _written(build.name, role, store)])
    listed = {str(entry.get("id")): entry for entry in await _list(rpc)}
    missing = [f"{role} {tid}" for role, tid in store.ids.items() if tid not in listed]
    if missing:
        raise ScenarioError(f"{build.name} thread/list misses its own threads: {', '.join(missing)}")
    store.listing = [listed[tid] for tid in store.ids.values()]
    await _close(rpc)


async def _read_and_continue(group: ProcessGroup, build: Build, store: Store) -> None:
    """Reader B: the listing and every thread as A read them; one more turn on the resumed thread; exit."""
    rpc = await _open(group, build, store, "reader")
    # Server errors come first in the cause (they say why), then what the listing and the reads lack.
    errors: list[str] = []
    problems: list[str] = []
    try:
        listing = compare_listing(store.listing, await _list(rpc), build.name)
        remaining, occurred = split_acknowledged(listing, store.ids, store.accepted)
        problems += remaining
        store.occurred += occurred
    except ScenarioError as exc:
        errors.append(exc.cause)
    for role, thread_id in store.ids.items():
        try:
            store.reader_reads[role] = await _read(rpc, thread_id)
        except ScenarioError as exc:
            errors.append(f"{exc.cause} ({role} thread)")
            continue
        where = f"{build.name} thread/read {thread_id} ({role})"
        remaining, occurred = split_acknowledged(
            compare_thread(store.reads[role], store.reader_reads[role], where), store.ids, store.accepted
        )
        problems += remaining
        store.occurred += occurred
    _fail(errors + problems)
    resumed = store.ids[RESUMED]
    await rpc.request("thread/resume", {"threadId": resumed}, resumed)
    await rpc.turn(resumed, RESUMED_PROMPT)
    store.continued = await _read(rpc, resumed)
    where = f"{build.name} thread/read {resumed} after its turn"
    turns = store.continued.get("turns") or []
    _fail(compare_turns(store.reads[RESUMED].get("turns") or [], turns[:-1], where))
    said = json.dumps(turns[-1:])
    if RESUMED_PROMPT not in said or RESUMED_ANSWER not in said:
        raise ScenarioError(f"{where}: the new turn lacks its user message or answer: {said[:200]}")
    await _close(rpc)


def _check_history(model_log: Path, reader: str) -> None:
    records = [json.loads(line) for line in model_log.read_text().splitlines()] if model_log.exists() else []
    requests = requests_with_user_text(records, RESUMED_PROMPT)
    if not requests:
        raise ScenarioError(f"{reader} sent no model request for the resumed turn")
    expected = [("user", PROMPTS[RESUMED]), ("function_call_output", EXEC_OUTPUT), ("assistant", EXEC_ANSWER)]
    _fail(history_problems(requests[0]["body"], expected, f"{reader}'s request for the resumed turn"))


async def _read_again(group: ProcessGroup, build: Build, store: Store) -> None:
    """Writer A again: the thread B continued, as B read it."""
    rpc = await _open(group, build, store, "writer-again")
    thread_id = store.ids[RESUMED]
    where = f"{build.name} thread/read {thread_id} (continued by the reader)"
    _fail(compare_thread(store.continued, await _read(rpc, thread_id), where))
    await _close(rpc)


def _keep(log: PairLog, group: ProcessGroup, store: Store, model_log: Path) -> None:
    log.processes(group)
    log.model_requests(model_log)
    for phase, rpc in store.clients.items():
        log.write_lines(f"{phase}.jsonrpc.jsonl", rpc.transcript_lines())
    reads = {
        "ids": store.ids,
        "writer": store.reads,
        "reader": store.reader_reads,
        "continued": store.continued,
    }
    log.write_lines("thread-reads.json", [json.dumps(reads, indent=1)])
    log.write_lines("acknowledged.txt", [f"acknowledged: {line}" for line in store.occurred])


async def test_threads_one_build_stored_are_read_and_continued_by_another(
    app_build: Build,
    exec_build: Build,
    process_group: ProcessGroup,
    tmp_path: Path,
    pair_log: PairLog,
    request: pytest.FixtureRequest,
) -> None:
    reason = _expected_to_fail(app_build.name, exec_build.name)
    if reason is not None:
        request.applymarker(pytest.mark.xfail(strict=True, raises=ScenarioError, reason=reason))
    store = Store(tmp_path / "codex-home", tmp_path / "work")
    store.accepted = ACKNOWLEDGED.get((app_build.name, exec_build.name), [])
    store.work.mkdir()
    model_log = tmp_path / "model-requests.jsonl"
    try:
        write_config(store.home, await start_model(process_group, tmp_path, _script()))
        await _write(process_group, app_build, store)
        await _read_and_continue(process_group, exec_build, store)
        _check_history(model_log, exec_build.name)
        if app_build.name in PRE_FORMAT_RELEASES and exec_build.name != app_build.name:
            # The reader migrated the store to the shared format, which a release before it cannot read back.
            store.occurred.append(f"not checked: {app_build.name} reading the store again after the migration")
        else:
            await _read_again(process_group, app_build, store)
        stale = [line for line in store.accepted if line not in store.occurred]
        if stale:
            raise ScenarioError(
                f"acknowledged difference no longer occurs (remove it from ACKNOWLEDGED): {stale[0]}"
            )
    except ScenarioError as exc:
        await process_group.stop_all()
        pair_log.write_lines("failure.txt", str(exc).splitlines())
        raise ScenarioError(
            exc.cause, f"{exc}\n{process_group.diagnostics()}\nlogs: {pair_log.folder}"
        ) from exc
    finally:
        await process_group.stop_all()
        _keep(pair_log, process_group, store, model_log)
