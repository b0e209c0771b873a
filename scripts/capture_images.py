"""Record how Codex prepares images for the model: user ``-i`` images and ``view_image`` results.

For each model slug and each fixture recipe (tests/support/images.py builds the same bytes offline), runs
`codex exec --json -i FILE` against fixtures/fake_responses_server.py, whose model first calls
``view_image`` on FILE and then answers "done". From the second request it keeps, for the user image and
for the tool output, what was sent: the MIME type, the decoded size and whether the bytes are the input's,
or the text sent instead. Writes tests/data/images/codex_0169_images.json.

    python scripts/capture_images.py PATH/TO/codex
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the checkout's root
from scripts.manifest import write_recording
from tests.support.images import decode, fixture

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "images" / "codex_0169_images.json"
MODELS = ("mock-model", "gpt-5.5")
#: (file name, Pillow format, "corrupt" or "giant", width, height)
RECIPES: list[tuple[str, str, int, int]] = [
    ("big.png", "PNG", 4000, 3000),
    ("wide.png", "PNG", 3000, 600),
    ("tall.png", "PNG", 600, 1000),
    ("small.png", "PNG", 64, 32),
    ("big.jpg", "JPEG", 4000, 3000),
    ("small.jpg", "JPEG", 64, 32),
    ("small.gif", "GIF", 64, 32),
    ("big.gif", "GIF", 3000, 1000),
    ("small.webp", "WEBP", 64, 32),
    ("big.webp", "WEBP", 3000, 1000),
    ("small.bmp", "BMP", 64, 32),
    ("big.bmp", "BMP", 3000, 1000),
    ("corrupt.png", "corrupt", 0, 0),
    # 576 MB of RGBA pixels: past the 512 MiB the image crate allows one decode by default.
    ("giant.png", "giant", 12000, 12000),
]


def _sent(part: Any, source: bytes, folder: str) -> dict[str, Any]:
    """One sent image part as facts (the temporary folder's path written as ``{dir}``)."""
    if isinstance(part, dict) and part.get("type") == "input_image":
        got = decode(part["image_url"])
        return {"mime": got["mime"], "width": got["width"], "height": got["height"],
                "identical": got["bytes"] == source, "detail": part.get("detail")}
    text = part if isinstance(part, str) else part.get("text", "")
    return {"text": text.replace(folder, "{dir}")}


def _capture(codex: str, model: str, name: str, source: bytes) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.path.realpath(tmp)
        home, work = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        work.mkdir()
        (work / name).write_bytes(source)
        script, log = Path(tmp) / "script.json", Path(tmp) / "requests.jsonl"
        call = {"type": "function_call", "name": "view_image", "arguments": json.dumps({"path": name})}
        script.write_text(json.dumps([{"output": [call]}, {"output": [{"type": "message", "text": "done"}]}]))
        fake = subprocess.Popen([sys.executable, str(ROOT / "fixtures" / "fake_responses_server.py"), str(script),
                                 "--log", str(log)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert fake.stdout is not None
            port = int(fake.stdout.readline())
            (home / "config.toml").write_text("\n".join([
                f'model = "{model}"', 'approval_policy = "never"', 'sandbox_mode = "workspace-write"',
                'model_provider = "mock"', "[model_providers.mock]", 'name = "mock"',
                f'base_url = "http://127.0.0.1:{port}/v1"', 'wire_api = "responses"',
                "request_max_retries = 0", "stream_max_retries = 0"]) + "\n")
            env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX"))}
            env["CODEX_HOME"] = str(home)
            subprocess.run([codex, "exec", "--skip-git-repo-check", "--json", "look", "-i", name], env=env,
                           cwd=work, timeout=180, stdin=subprocess.DEVNULL, capture_output=True, check=False)
        finally:
            assert fake.stdin is not None and fake.stdout is not None
            fake.stdin.close()  # the fixture serves until its stdin closes
            fake.wait(10)
            fake.stdout.close()
        bodies = [json.loads(line)["body"] for line in log.read_text().splitlines()]
    items = bodies[-1]["input"]
    user = next(i for i in items if i.get("type") == "message" and i.get("role") == "user"
                and any(p.get("type") != "input_text" or p["text"].startswith("<image") for p in i["content"]))
    parts = [p for p in user["content"] if not (p.get("type") == "input_text" and p["text"] in ("look",))]
    output = next(i for i in items if i.get("type") == "function_call_output")["output"]
    return {"user": [_sent(p, source, tmp) for p in parts],
            "view_image": _sent(output[0] if isinstance(output, list) else output, source, tmp),
            "requests": len(bodies)}


def main(codex: str) -> None:
    cases = []
    for name, fmt, width, height in RECIPES:
        source = fixture(fmt, width, height)
        for model in MODELS[:1] if fmt == "giant" else MODELS:
            cases.append({"model": model, "file": name, "format": fmt, "width": width, "height": height,
                          "sha256": hashlib.sha256(source).hexdigest(), **_capture(codex, model, name, source)})
            print(json.dumps(cases[-1])[:400], flush=True)
    write_recording(OUT, {"codex": "0.169.0", "cases": cases})
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
