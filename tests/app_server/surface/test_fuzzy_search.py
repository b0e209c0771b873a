"""fuzzyFileSearch and its sessions against Codex 0.169's recorded answers (tests/data/frontends)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app_server.search.fuzzy import COMPLETED, UPDATED, FuzzySessions, fuzzy_file_search
from app_server.search.score import score_path
from app_server.search.walk import walk_tree
from pycodex.jsonrpc.errors import RpcError
from tests.support.hermetic import below_a_repository_root
from tests.support.recorded import load, normalise, write_tree

RECORDED = load("fuzzy_search")
QUERIES = [s["params"]["query"] for s in RECORDED["searches"]]


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    """The test's folder, one below a repository root: the walk for ignore rules stops there and reads no
    `.gitignore` above the temp folder (tests/support/hermetic.py)."""
    return below_a_repository_root(tmp_path)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    write_tree(root, RECORDED["tree"])
    return root


def _places(tree: Path) -> dict[str, Path | str]:
    return {"$ROOT": tree, "$MISSING": tree.parent / "missing"}


def _denormalise(params: dict[str, Any], tree: Path) -> dict[str, Any]:
    if "roots" not in params:
        return params
    roots = [r.replace("$ROOT", str(tree)).replace("$MISSING", str(tree.parent / "missing")) for r in params["roots"]]
    return {**params, "roots": roots}


@pytest.mark.parametrize("index", range(len(RECORDED["searches"])), ids=[repr(q) for q in QUERIES])
def test_search_equals_codex(tree: Path, index: int) -> None:
    exchange = RECORDED["searches"][index]
    params = _denormalise(exchange["params"], tree)
    files = fuzzy_file_search(params["query"], params["roots"])
    assert {"result": {"files": normalise(files, _places(tree))}} == exchange["answer"]


def _session_answer(sessions: FuzzySessions, method: str, params: dict[str, Any]) -> tuple[Any, list[Any]]:
    try:
        if method.endswith("sessionStart"):
            return {"result": sessions.start(params["sessionId"], params["roots"])}, []
        if method.endswith("sessionStop"):
            return {"result": sessions.stop(params["sessionId"])}, []
        notes = sessions.update(params["sessionId"], params["query"])
        return {"result": {}}, [{"method": m, "params": p} for m, p in notes]
    except RpcError as exc:
        return {"error": exc.to_wire()}, []


def test_session_flow_equals_codex(tree: Path) -> None:
    sessions = FuzzySessions()
    pending: list[Any] = []
    for step in RECORDED["session"]:
        if "notifications" in step:
            assert normalise(pending, _places(tree)) == step["notifications"]
            pending = []
            continue
        answer, notes = _session_answer(sessions, step["method"], _denormalise(step["params"], tree))
        assert answer == step["answer"], step
        pending += notes
    assert len(sessions) == 0


def test_a_session_update_with_an_empty_query_completes_with_no_files(tree: Path) -> None:
    sessions = FuzzySessions()
    sessions.start("s", [str(tree)])
    assert sessions.update("s", "") == [(UPDATED, {"sessionId": "s", "query": "", "files": []}),
                                         (COMPLETED, {"sessionId": "s"})]


def test_nested_ignore_files_and_negation(tree: Path) -> None:
    paths = {e.path for e in walk_tree(tree)}
    assert "logs/keep.log" in paths and "logs/drop.log" not in paths and "x.log" not in paths
    assert "vendor/b.txt" in paths and "vendor/a.tmp" not in paths
    assert "sub/deep/other.txt" in paths and "sub/deep/mainframe.txt" not in paths
    assert "build" not in paths and ".hidden/secret.txt" in paths and ".git/HEAD" in paths


def test_a_parent_gitignore_above_the_root_applies(tmp_path: Path) -> None:
    write_tree(tmp_path / "repo", {".gitignore": "proj/gen/\n", ".git/HEAD": "ref: x\n",
                                   "proj/gen/out.txt": "", "proj/src/in.txt": ""})
    paths = {e.path for e in walk_tree(tmp_path / "repo" / "proj")}
    assert paths == {"src", "src/in.txt"}


def test_scores_follow_codex_s_bonuses() -> None:
    assert score_path("main", "src/app/main.py", is_dir=False) == (65645, [8, 9, 10, 11])
    assert score_path("mdl", "node_modules", is_dir=True) == (58, [5, 7, 9])
    assert score_path("app", "src/app", is_dir=True) == (84, [4, 5, 6])
    assert score_path("app", "src/app", is_dir=True, exact=True) == (131156, [4, 5, 6])
    assert score_path("log", "logs/keep.log", is_dir=False) == (65616, [10, 11, 12])  # scored on the name
    assert score_path("zz", "src/app", is_dir=True) is None


def test_one_file_and_one_folder_of_the_exact_name_rank_first(tmp_path: Path) -> None:
    write_tree(tmp_path, {"b/app/x": "", "a/app/y": "", "deep/er/app/z": "", "c/app": ""})
    files = fuzzy_file_search("app", [str(tmp_path)])
    assert [(f["path"], f["score"] >> 16) for f in files[:2]] == [("c/app", 3), ("a/app", 2)]
    assert all(f["score"] < 1 << 16 for f in files[2:])


def test_a_symlink_loop_is_listed_but_not_entered(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a/b/file.txt": ""})
    (tmp_path / "a" / "b" / "up").symlink_to(tmp_path / "a")
    assert {e.path for e in walk_tree(tmp_path)} == {"a", "a/b", "a/b/file.txt", "a/b/up"}


def test_many_name_matches_still_rank_an_exact_folder_first(tmp_path: Path) -> None:
    write_tree(tmp_path, {**{f"x/note{i}.txt": "" for i in range(60)}, "deep/note/inner.md": ""})
    files = fuzzy_file_search("note", [str(tmp_path)])
    assert files[0]["path"] == "deep/note" and len(files) == 50
    assert all(f["score"] >> 16 == 1 for f in files[1:])


def test_results_are_capped_at_fifty_and_ordered(tmp_path: Path) -> None:
    write_tree(tmp_path, {f"dir{i}/file{i:03}.txt": "" for i in range(80)})
    files = fuzzy_file_search("file", [str(tmp_path)])
    assert len(files) == 50
    keys = [(-f["score"], f["path"]) for f in files]
    assert keys == sorted(keys)


@pytest.mark.codex
def test_recorded_answers_match_the_live_binary(codex_bin: Path, tmp_path: Path) -> None:
    from scripts.record_config_read import record_fuzzy_searches

    live = record_fuzzy_searches(codex_bin, tmp_path.resolve())
    assert live["searches"] == RECORDED["searches"]
