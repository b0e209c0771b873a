"""The fast line diff equals difflib's on sparse edits and is a correct diff on any input."""

from __future__ import annotations

import difflib
import random

import pytest

from app_server.tools.line_diff import opcodes, unified_diff


def _apply(a: list[str], b: list[str]) -> list[str]:
    out: list[str] = []
    for tag, i1, i2, j1, j2 in opcodes(a, b):
        out += a[i1:i2] if tag == "equal" else b[j1:j2]
    return out


def _edit(rng: random.Random, lines: list[str], edits: int) -> list[str]:
    out = list(lines)
    for k in range(edits):
        at = rng.randrange(len(out) + 1)
        kind = rng.choice(["insert", "delete", "replace"])
        if kind == "insert" or not out or at == len(out):
            out.insert(at, f"new {k}\n")
        elif kind == "delete":
            del out[at]
        else:
            out[at] = f"changed {k}\n"
    return out


@pytest.mark.parametrize("seed", range(40))
def test_sparse_edits_give_difflibs_diff(seed: int) -> None:
    rng = random.Random(seed)
    a = [f"line {i}\n" for i in range(rng.randrange(0, 400))]
    b = _edit(rng, a, rng.randrange(0, 6))
    ours = list(unified_diff(a, b, "a/f", "b/f"))
    assert _apply(a, b) == b
    assert ours == list(difflib.unified_diff(a, b, "a/f", "b/f", n=3))


@pytest.mark.parametrize("seed", range(40))
def test_any_edit_is_a_correct_diff(seed: int) -> None:
    rng = random.Random(1000 + seed)
    alphabet = [f"{c}\n" for c in "abcab"]  # repeated lines: resynchronising is ambiguous
    a = [rng.choice(alphabet) for _ in range(rng.randrange(0, 120))]
    b = _edit(rng, a, rng.randrange(0, 30))
    assert _apply(a, b) == b
    text = list(unified_diff(a, b, "a/f", "b/f"))
    assert (text == []) == (a == b)
    removed = [line[1:] for line in text if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in text if line.startswith("+") and not line.startswith("+++")]
    assert len(a) - len(removed) + len(added) == len(b)


def test_a_big_file_with_a_hundred_edits_matches_difflib() -> None:
    a = [f"{i:08d} " + "x" * 80 + "\n" for i in range(20_000)]
    b = list(a)
    for k in range(100):
        b[k * 200 + 100] = f"patched {k}\n"
    assert list(unified_diff(a, b, "a/f", "b/f")) == list(difflib.unified_diff(a, b, "a/f", "b/f", n=3))
