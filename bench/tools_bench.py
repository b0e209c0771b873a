"""Agent-tool benchmarks: a patch turn that updates a 5 MB file with 100 hunks, and an image turn.

Both measure what a user waits for (turn/start to turn/completed) and the server's peak RSS, for pycodex and
Codex side by side. The patch goes through the shell (`apply_patch <<'EOF'`), the form every model slug
gets; turns alternate between a patch and its inverse so that each applies to the file the previous left.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

from bench.app_server_bench import _peak_rss_mib
from bench.harness import (
    PAIRED_RUNS,
    Driver,
    Impl,
    alternating,
    implementations,
    median,
    paired,
    print_table,
    start_fake_model,
    temp_dirs,
    timed_turns,
    write_config,
)

__all__ = ["image_turn", "patch_turn", "run"]

PATCH_TURNS = 3  # odd: the file ends patched, which proves the patches applied
IMAGE_TURNS = 4
LINES = 50_000  # 100 bytes each: 5 MB
HUNKS = 100


def _line(i: int, tag: str = "") -> str:
    return f"{tag}{i:08d} " + "x" * (98 - 9 - len(tag))


def _patch(forward: bool) -> str:
    """100 hunks over big.txt, each replacing one line (with 3 lines of context either side)."""
    out = ["*** Begin Patch", "*** Update File: big.txt"]
    step = LINES // HUNKS
    for h in range(HUNKS):
        target = h * step + step // 2
        out.append("@@")
        out += [" " + _line(i) for i in range(target - 3, target)]
        old, new = _line(target), _line(target, "patched-")
        out += ["-" + (old if forward else new), "+" + (new if forward else old)]
        out += [" " + _line(i) for i in range(target + 1, target + 4)]
    out.append("*** End Patch")
    return "\n".join(out) + "\n"


def _patch_call(n: int) -> dict[str, Any]:
    cmd = f"apply_patch <<'EOF'\n{_patch(n % 2 == 0)}EOF\n"
    return {"type": "function_call", "name": "exec_command", "call_id": f"call_patch_{n}",
            "arguments": json.dumps({"cmd": cmd, "yield_time_ms": 30_000})}


async def patch_turn(impl: Impl) -> tuple[float, float]:
    """(median seconds per patch turn, peak RSS MiB) for 100 hunks applied to a 5 MB file."""
    script: list[Any] = []
    for n in range(PATCH_TURNS):
        script += [{"output": [_patch_call(n)]}, {"output": [{"type": "message", "text": "patched"}]}]
    tmp, home, work = temp_dirs()
    with tmp:
        (work / "big.txt").write_text("".join(_line(i) + "\n" for i in range(LINES)))
        model = await start_fake_model(script, home.parent)
        write_config(home, model.url)
        driver = await Driver.spawn(impl, home, work)
        try:
            thread = (await driver.call("thread/start", {"cwd": str(work)}))["thread"]["id"]
            samples = await timed_turns(driver, thread, [{"type": "text", "text": "go"}], PATCH_TURNS)
            first = LINES // HUNKS // 2
            if _line(first, "patched-") not in (work / "big.txt").read_text():
                raise AssertionError(f"{impl.name} did not apply the patch")
            return median(samples), _peak_rss_mib(driver.proc.pid)
        finally:
            await driver.close()
            await model.stop()


def _png(path: Path, side: int = 600) -> None:
    """A valid RGB PNG of random pixels (about 1 MB: random data does not compress)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + os.urandom(side * 3) for _ in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 1))
                     + chunk(b"IEND", b""))


async def image_turn(impl: Impl) -> tuple[float, float]:
    """(median seconds per turn, peak RSS MiB) for a turn whose input is a ~1 MB local PNG."""
    script = [{"output": [{"type": "message", "text": "seen"}]}] * IMAGE_TURNS
    tmp, home, work = temp_dirs()
    with tmp:
        image = work / "shot.png"
        _png(image)
        model = await start_fake_model(script, home.parent)
        write_config(home, model.url)
        driver = await Driver.spawn(impl, home, work)
        try:
            thread = (await driver.call("thread/start", {"cwd": str(work)}))["thread"]["id"]
            inputs = [{"type": "text", "text": "what is this?"}, {"type": "localImage", "path": str(image)}]
            samples = await timed_turns(driver, thread, inputs, IMAGE_TURNS)
            sent = json.dumps(model.requests()[-1]["body"]["input"])
            if "data:image/png;base64," not in sent:
                raise AssertionError(f"{impl.name} did not send the image to the model")
            return median(samples), _peak_rss_mib(driver.proc.pid)
        finally:
            await driver.close()
            await model.stop()


async def run() -> None:
    """Print the agent-tool rows: pycodex and Codex side by side."""
    rows: dict[str, dict[str, list[float]]] = {key: {} for key in ("patch_s", "patch_rss", "image_s", "image_rss")}
    for run_index in range(PAIRED_RUNS):
        for impl in alternating(implementations(), run_index):
            values = (*await patch_turn(impl), *await image_turn(impl))
            for key, value in zip(rows, values, strict=True):
                rows[key].setdefault(impl.name, []).append(value)
    print_table("agent tools", [
        ("patch turn: 5 MB file, 100 hunks", "s", paired(rows["patch_s"]), "lower", 1.0),
        ("patch turn peak RSS", "MiB", paired(rows["patch_rss"]), "lower", 1.5),
        ("image turn: 1 MB PNG input", "s", paired(rows["image_s"]), "lower", 1.0),
        ("image turn peak RSS", "MiB", paired(rows["image_rss"]), "lower", 1.5),
    ])
