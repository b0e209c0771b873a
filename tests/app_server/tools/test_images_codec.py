"""Images are prepared for the model as Codex 0.169 prepares them (facts recorded from the real binary).

tests/data/images/codex_0169_images.json holds, per model and fixture (rebuilt here from its recipe), what
Codex sent for a ``-i`` image and for ``view_image`` of the same file: MIME type, decoded size, whether the
bytes were the file's, or the text sent instead. Each fact is checked against ``image_codec.prepare`` and,
for a few files, end to end on the in-memory harness (a localImage input and a ``view_image`` call).
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageStat

from app_server.tools import image_codec as codec
from app_server.tools.images import OMITTED, TOO_LARGE, UNSUPPORTED, image_mime
from tests.support.fake_model import message, model_config
from tests.support.images import data_url, decode, fixture, giant_png
from tests.support.tools import require_codex

DATA = Path(__file__).resolve().parents[2] / "data" / "images" / "codex_0169_images.json"
DETAIL = {"mock-model": "high", "gpt-5.5": "original"}


def _cases() -> list[dict[str, Any]]:
    return list(json.loads(DATA.read_text())["cases"])


@cache
def _source(fmt: str, width: int, height: int) -> bytes:
    return fixture(fmt, width, height)


def _facts(sent: dict[str, Any]) -> dict[str, Any]:
    """A recorded part without its detail (checked on its own)."""
    return {k: v for k, v in sent.items() if k != "detail"}


def _ours(data: bytes, detail: str, *, tool: bool) -> dict[str, Any]:
    """What pycodex sends for ``data``, in the recording's terms."""
    try:
        image = codec.prepare(data, image_mime(data), detail, max_decoded=codec.MAX_DECODED_BYTES if tool else None)
    except codec.UnprocessableImage:
        return {"text": UNSUPPORTED if tool else OMITTED}
    got = decode(data_url(image.data, image.mime))
    assert (got["width"], got["height"]) == (image.width, image.height)
    return {"mime": image.mime, "width": image.width, "height": image.height, "identical": image.data == data}


def _case_param(case: dict[str, Any]) -> Any:
    """One recorded case; gpt-5.5's big JPEG, GIF and WebP files are slow-marked.

    Each of those costs a decode and a re-encode of a multi-megapixel image, twice (~2 s). In `prepare`
    the target size comes from the detail's budget alone (format-blind, see fit_dimensions below), and
    keep-or-re-encode and the resize mode from the format alone. The default run keeps every file under
    mock-model (each format resized and re-encoded), every small file under gpt-5.5 (each format within
    budget: kept or converted) and big/wide/tall.png under gpt-5.5 (the "original" budget on big images);
    gpt-5.5's big.jpg/.gif/.webp only combine branches already taken, and run with PYCODEX_SLOW=1 (big.bmp
    is kept: it costs next to nothing)."""
    slow = case["model"] == "gpt-5.5" and case["file"] in ("big.jpg", "big.gif", "big.webp")
    return pytest.param(case, id=f"{case['model']}-{case['file']}", marks=[pytest.mark.slow] if slow else [])


# The 12000x12000 fixture takes 576 MB to decode: its user-image side is left to the codex-marked run.
@pytest.mark.parametrize("case", [_case_param(c) for c in _cases() if c["format"] != "giant"])
def test_prepared_image_matches_codex(case: dict[str, Any]) -> None:
    source = _source(case["format"], case["width"], case["height"])
    assert hashlib.sha256(source).hexdigest() == case["sha256"], "fixture drifted from the recording"
    detail = DETAIL[case["model"]]
    opened, middle, closed = case["user"]
    assert (opened["text"], closed["text"]) == (f'<image name=[Image #1] path="{case["file"]}">', "</image>")
    assert _ours(source, detail, tool=False) == _facts(middle)
    assert _ours(source, detail, tool=True) == _facts(case["view_image"])
    for sent in (middle, case["view_image"]):
        assert sent.get("detail", detail) == detail


@pytest.mark.filterwarnings("ignore::PIL.Image.DecompressionBombWarning")
def test_view_image_fails_a_giant_image_from_its_header() -> None:
    (case,) = [c for c in _cases() if c["format"] == "giant"]
    assert case["view_image"] == {"text": UNSUPPORTED}  # Codex: over the image crate's 512 MiB
    assert case["user"][1]["width"] == 1600  # ...which a user's image is not held to
    header_only = giant_png(case["width"], case["height"], pixels=False)
    with pytest.raises(codec.UnprocessableImage, match="decoding memory limit"):
        codec.prepare(header_only, "image/png", "high", max_decoded=codec.MAX_DECODED_BYTES)
    with pytest.raises(codec.UnprocessableImage) as raised:  # unbounded: decoding is tried (and fails here)
        codec.prepare(header_only, "image/png", "high")
    assert "memory limit" not in str(raised.value)


def test_fit_dimensions_follows_codex_budget() -> None:
    # Codex's own examples: a 2048 square is over 2500 patches; 3201 is over 10000 at 6000 px.
    assert codec.fit_dimensions(2048, 2048, codec.HIGH) == (1600, 1600)
    assert codec.fit_dimensions(3201, 3201, codec.ORIGINAL) == (3200, 3200)
    assert codec.fit_dimensions(1600, 1600, codec.HIGH) == (1600, 1600)
    assert codec.fit_dimensions(4097, 2, codec.HIGH) == (2048, 1)  # 2048/4097*2 rounds to 1, never 0
    assert codec.too_large(805_306_368) is False and codec.too_large(805_306_369) is True


async def _turn(app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, model_slug: str,
                files: list[str]) -> tuple[list[dict[str, Any]], list[Any]]:
    """A turn with ``files`` as localImage inputs whose model views each; returns the user content and the
    view_image outputs the model got."""
    calls = [{"type": "function_call", "name": "view_image", "call_id": f"v{i}",
              "arguments": json.dumps({"path": f}), } for i, f in enumerate(files)]
    model = await fake_model([{"output": calls}, {"output": [message("done")]}])
    model_config(codex_home, model.url)
    config = codex_home / "config.toml"
    config.write_text(config.read_text().replace('"mock-model"', f'"{model_slug}"'))
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    inputs = [{"type": "text", "text": "look"}, *({"type": "localImage", "path": f} for f in files)]
    await client.call("turn/start", {"threadId": thread_id, "input": inputs})
    done = await client.wait_notification("turn/completed", timeout=60)
    assert done["params"]["turn"]["status"] == "completed"
    last = model.requests()[-1]["body"]["input"]
    user = next(i for i in last if i.get("role") == "user" and i["content"][0]["text"] == "look")
    outputs = [i["output"] for i in last if i.get("type") == "function_call_output"]
    return user["content"][1:], outputs


def _wire(part: Any, source: bytes) -> dict[str, Any]:
    if isinstance(part, list):
        (part,) = part
    if isinstance(part, str):
        return {"text": part}
    if part["type"] == "input_text":
        return {"text": part["text"]}
    got = decode(part["image_url"])
    return {"mime": got["mime"], "width": got["width"], "height": got["height"],
            "identical": got["bytes"] == source, "detail": part["detail"]}


@pytest.mark.parametrize("model_slug", ["mock-model", "gpt-5.5"])
async def test_local_images_and_view_image_on_the_wire_match_codex(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path, model_slug: str
) -> None:
    files = ["big.png", "small.gif", "small.webp", "small.bmp", "corrupt.png"]
    recorded = {c["file"]: c for c in _cases() if c["model"] == model_slug and c["file"] in files}
    sources = {}
    for name in files:
        case = recorded[name]
        sources[name] = _source(case["format"], case["width"], case["height"])
        (workspace / name).write_bytes(sources[name])
    content, outputs = await _turn(app_server, fake_model, codex_home, workspace, model_slug, files)
    for i, name in enumerate(files):
        opened, middle, closed = content[3 * i: 3 * i + 3]
        assert opened["text"] == f'<image name=[Image #{i + 1}] path="{name}">' and closed["text"] == "</image>"
        assert _wire(middle, sources[name]) == recorded[name]["user"][1], name
        assert _wire(outputs[i], sources[name]) == recorded[name]["view_image"], name


async def test_an_image_over_the_size_guard_is_not_read(
    app_server: Any, fake_model: Any, codex_home: Path, workspace: Path
) -> None:
    huge = workspace / "huge.png"
    with huge.open("wb") as out:  # sparse: its size is all that is real
        out.write(b"\x89PNG\r\n\x1a\n")
        out.truncate(805_306_369)
    model = await fake_model([{"output": [message("done")]}])
    model_config(codex_home, model.url)
    client = await app_server()
    thread_id = (await client.call("thread/start", {"cwd": str(workspace)}))["thread"]["id"]
    gif = _source("GIF", 64, 32)
    inputs = [{"type": "localImage", "path": "huge.png"}, {"type": "image", "url": data_url(gif, "image/gif")}]
    await client.call("turn/start", {"threadId": thread_id, "input": inputs})
    done = await client.wait_notification("turn/completed", timeout=20)
    assert done["params"]["turn"]["status"] == "completed"
    content = model.requests()[0]["body"]["input"][-1]["content"]
    assert content[1] == {"type": "input_text", "text": TOO_LARGE}
    url_image = decode(content[3]["image_url"])  # a data: URL image is prepared too: GIF becomes PNG
    assert (url_image["mime"], url_image["width"], url_image["height"]) == ("image/png", 64, 32)


@pytest.mark.codex
async def test_a_big_png_reaches_the_model_as_codex_sends_it(app_server: Any, fake_model: Any,
                                                              tmp_path: Path) -> None:
    codex_bin = require_codex()
    source = _source("PNG", 4000, 3000)
    seen: dict[str, list[tuple[str, int, int]]] = {}
    for label, argv in (("pycodex", [sys.executable, "-m", "pycodex", "app-server"]),
                        ("codex", [str(codex_bin), "app-server"])):
        home, work = tmp_path / f"home_{label}", tmp_path / f"ws_{label}"
        work.mkdir()
        (work / "big.png").write_bytes(source)
        call = {"type": "function_call", "name": "view_image", "call_id": "v0",
                "arguments": json.dumps({"path": "big.png"})}
        model = await fake_model([{"output": [call]}, {"output": [message("done")]}], name=f"model_{label}")
        model_config(home, model.url)
        client = await app_server(argv=argv, codex_home=home)
        thread_id = (await client.call("thread/start", {"cwd": str(work)}, timeout=60))["thread"]["id"]
        await client.call("turn/start", {"threadId": thread_id, "input": [
            {"type": "text", "text": "look"}, {"type": "localImage", "path": str(work / "big.png")}]}, timeout=60)
        done = await client.wait_notification("turn/completed", timeout=120)
        assert done["params"]["turn"]["status"] == "completed", label
        last = model.requests()[-1]["body"]["input"]
        urls = [p["image_url"] for i in last if i.get("role") == "user" for p in i["content"]
                if p["type"] == "input_image"]
        urls += [p["image_url"] for i in last if i.get("type") == "function_call_output" for p in i["output"]]
        seen[label] = [(d["mime"], d["width"], d["height"]) for d in map(decode, urls)]
        await client.close()
    assert seen["pycodex"] == seen["codex"] == [("image/png", 1824, 1368)] * 2


def test_a_resized_16_bit_grey_png_keeps_its_tones() -> None:
    # Codex converts to RGBA8 by scaling 16-bit samples; Pillow's own conversion would clip them to white.
    grey = Image.linear_gradient("L").resize((3000, 1000)).convert("I").point(lambda v: v * 256).convert("I;16")
    out = io.BytesIO()
    grey.save(out, format="PNG")
    image = codec.prepare(out.getvalue(), "image/png", "high")
    assert (image.mime, image.width, image.height) == ("image/png", 2048, 683)
    with Image.open(io.BytesIO(image.data)) as sent:
        assert 100 < ImageStat.Stat(sent.convert("L")).mean[0] < 156
