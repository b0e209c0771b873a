"""Record Codex's answers for the config, model-catalog and file-search requests into ``tests/data/``.

Each scenario builds its inputs (a throwaway CODEX_HOME with a config.toml, a project tree, a file tree) from
the text stored beside the answers, runs ``codex app-server`` over stdio, and keeps request/answer pairs
with machine paths replaced by placeholders (``$CODEX_HOME``, ``$PROJECT``, ``$ROOT``), so the tests can
rebuild the same inputs under ``tmp_path`` and compare pycodex's answers with Codex's:

* ``tests/data/frontends/config_read.json``: ``config/read`` for an empty home, a custom provider, layers;
* ``tests/data/frontends/config_write.json``: ``config/value/write`` / ``config/batchWrite`` steps and errors;
* ``tests/data/frontends/model_list.json``: ``model/list``, ``modelProvider/list`` and capabilities;
* ``tests/data/frontends/fuzzy_search.json``: ``fuzzyFileSearch`` and a session's notifications.

    python scripts/record_config_read.py [--codex-bin PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as a script: the checkout's root
from scripts.manifest import record_in_manifest  # noqa: E402

DATA_DIR = REPO_ROOT / "tests" / "data"
OUT_DIR = DATA_DIR / "frontends"
DEFAULTS_FILE = REPO_ROOT / "app_server" / "config" / "effective_defaults.json"
CODEX_BIN_REL = Path("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
EXPECTED_VERSION = "0.169.0"
TIMEOUT_S = 30.0

Json = Any
Request = tuple[str, Json]

CUSTOM_CONFIG = """# pycodex test: a custom provider and a few keys
model = "my-model"   # the model we serve
model_provider = "mock"
approval_policy = "on-request"
model_reasoning_effort = "high"
bogus_key = 1

[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:9/v1"
env_key = "MOCK_KEY"

[features]
memories = true

[tui.nested]
unknown_inner = "x"
"""

# Touches each section whose full default shape config/read reveals once it is set (see derive_defaults).
SECTIONS_CONFIG = """sandbox_mode = "workspace-write"

[sandbox_workspace_write]
network_access = true

[history]
max_bytes = 100

[shell_environment_policy]
inherit = "core"

[mcp_servers.stdio]
command = "echo"

[profiles.p1]
model = "x"

[model_providers.bare]
name = "Bare"
base_url = "http://127.0.0.1:9/v1"

[features]
memories = false

[tui]
theme = "dark"
"""

PROJECT_FILES = {
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/config": "[core]\n\trepositoryformatversion = 0\n",
    ".git/objects/.keep": "",
    ".git/refs/heads/.keep": "",
    ".codex/config.toml": 'model_verbosity = "low"\n',
    "sub/.codex/config.toml": 'model = "sub-model"\n',
}
TRUST_TEMPLATE = '\n[projects."$PROJECT"]\ntrust_level = "trusted"\n'

WRITE_START = """# my settings
model = "my-model"   # inline comment
model_provider = "mock"

[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:9/v1"
"""
WRITE_STEPS: list[Request] = [
    ("config/value/write", {"keyPath": "model_reasoning_effort", "value": "high", "mergeStrategy": "replace"}),
    ("config/value/write", {"keyPath": "model", "value": "x", "mergeStrategy": "replace",
                            "expectedVersion": "sha256:0000"}),
    ("config/value/write", {"keyPath": "approval_policy", "value": "bogus", "mergeStrategy": "replace"}),
    ("config/value/write", {"keyPath": "model", "value": 5, "mergeStrategy": "replace"}),
    ("config/value/write", {"keyPath": "model.sub", "value": 1, "mergeStrategy": "replace"}),
    ("config/value/write", {"keyPath": "", "value": 1, "mergeStrategy": "replace"}),
    ("config/value/write", {"keyPath": "model", "value": "z", "mergeStrategy": "replace",
                            "filePath": "/tmp/pycodex-not-the-user-config.toml"}),
    ("config/value/write", {"keyPath": "bogus_thing", "value": 1, "mergeStrategy": "replace"}),
    ("config/value/write", {"keyPath": "features", "value": {"memories": True}, "mergeStrategy": "upsert"}),
    ("config/value/write", {"keyPath": "model_providers.mock", "value": {"env_key": "K"},
                            "mergeStrategy": "upsert"}),
    ("config/value/write", {"keyPath": "tui", "value": {"a": 1}, "mergeStrategy": "replace"}),
    ("config/batchWrite", {"edits": [
        {"keyPath": "model_verbosity", "value": "low", "mergeStrategy": "replace"},
        {"keyPath": "model_providers.mock.stream_max_retries", "value": 3, "mergeStrategy": "upsert"},
    ]}),
    ("config/batchWrite", {"edits": [
        {"keyPath": "model_verbosity", "value": "high", "mergeStrategy": "replace"},
        {"keyPath": "sandbox_mode", "value": "nope", "mergeStrategy": "replace"},
    ]}),
    ("config/value/write", {"keyPath": "model", "value": None, "mergeStrategy": "replace"}),
    ("config/value/write", {"keyPath": "features.memories", "value": None, "mergeStrategy": "replace"}),
]

SESSION_FLAGS = ['model="flag"', "features.memories=true"]
FLAGGED_STEPS: list[Request] = [
    ("config/value/write", {"keyPath": "model", "value": "b", "mergeStrategy": "replace"}),
    ("config/value/write", {"keyPath": "features", "value": {"memories": False}, "mergeStrategy": "upsert"}),
    ("config/value/write", {"keyPath": "model_verbosity", "value": "low", "mergeStrategy": "replace"}),
    ("config/batchWrite", {"edits": [
        {"keyPath": "model_verbosity", "value": "high", "mergeStrategy": "replace"},
        {"keyPath": "features.memories", "value": False, "mergeStrategy": "replace"},
    ]}),
]

FUZZY_TREE = {
    ".gitignore": "build/\n*.log\n!keep.log\n",
    "vendor/.ignore": "*.tmp\n", "vendor/a.tmp": "", "vendor/b.txt": "", "logs/keep.log": "", "logs/drop.log": "",
    "app": "", "app.py": "", "xapp.txt": "", "x_app.txt": "", "a_p_p.txt": "", "zap.p": "", "MyApp.kt": "",
    "d/apple/f": "", "d/app2/x": "", "e/app/g": "", "v2/file10.txt": "",
    "sub/.gitignore": "deep/mainframe.txt\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/config": "[core]\n",
    "src/app/main.py": "", "src/app/model.py": "", "src/app/.dotfile": "", "src/util.py": "",
    "src/Main.java": "", "docs/readme.md": "", "docs/main_notes.md": "", "build/out.js": "",
    "node_modules/pkg/index.js": "", ".hidden/secret.txt": "", ".env": "", "sub/deep/mainframe.txt": "",
    "sub/deep/other.txt": "", "README.md": "", "Makefile": "", "x.log": "", "tests/test_main.py": "",
    "pre-apply/apply-me.txt": "", "domain/maintain.py": "",
}
FUZZY_QUERIES = ["main", "mdl", "secret", "index", "", "app", "log", "env", "Main", "MAIN", "src/app",
                 "readme", "zzzz", "mk", "deep", "app.py", "keep", "tmp", "vendor", "f10", "ap"]


class CodexStdio:
    """A bare JSON-RPC client over ``codex app-server`` stdio, every wait bounded."""

    def __init__(self, codex_bin: Path, home: Path, cwd: Path, flags: Sequence[str] = ()) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "CODEX"))}
        env.update(CODEX_HOME=str(home), RUST_LOG="off")
        argv = [str(codex_bin), "app-server", *(arg for flag in flags for arg in ("-c", flag))]
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd,
                                     text=True)
        self.seen: list[Json] = []
        self.next_id = 0
        self.request("initialize", {"clientInfo": {"name": "pycodex-recorder", "version": "0"},
                                    "capabilities": {"experimentalApi": True}})
        self.notify("initialized")

    def notify(self, method: str) -> None:
        self._send({"method": method})

    def _send(self, message: Json) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def wait_for(self, pred: Callable[[Json], bool], timeout: float = TIMEOUT_S) -> Json:
        assert self.proc.stdout is not None
        for message in self.seen:
            if pred(message):
                self.seen.remove(message)
                return message
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if not ready:
                break
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("codex app-server closed its stdout")
            message = json.loads(line)
            if pred(message):
                return message
            self.seen.append(message)
        raise SystemExit("timed out waiting for codex app-server")

    def request(self, method: str, params: Json) -> Json:
        self.next_id += 1
        rid = self.next_id
        self._send({"id": rid, "method": method, "params": params})
        answer = self.wait_for(lambda m: m.get("id") == rid and "method" not in m)
        return {k: v for k, v in answer.items() if k != "id"}

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=TIMEOUT_S)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


@contextmanager
def codex(codex_bin: Path, home: Path, cwd: Path | None = None, flags: Sequence[str] = ()) -> Iterator[CodexStdio]:
    client = CodexStdio(codex_bin, home, cwd or home, flags)
    try:
        yield client
    finally:
        client.close()


def write_tree(root: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def normalise(value: Json, places: Mapping[str, Path]) -> Json:
    """Machine paths to placeholders, longest first so a nested path keeps its own name."""
    text = json.dumps(value)
    for name, path in sorted(places.items(), key=lambda item: -len(str(item[1]))):
        text = text.replace(str(path), name)
    return json.loads(text)


def _exchange(client: CodexStdio, requests: list[Request]) -> list[Json]:
    return [{"method": m, "params": p, "answer": client.request(m, p)} for m, p in requests]


def record_config_read(codex_bin: Path, tmp: Path) -> Json:
    cases: list[Json] = []
    requests: list[Request] = [("config/read", {}), ("config/read", {"includeLayers": True})]
    for name, config_text in (("empty", None), ("custom", CUSTOM_CONFIG), ("sections", SECTIONS_CONFIG)):
        home = tmp / f"home-{name}"
        home.mkdir()
        if config_text is not None:
            (home / "config.toml").write_text(config_text)
        with codex(codex_bin, home) as client:
            answers = _exchange(client, requests)
        cases.append({"name": name, "config_toml": config_text, "project": None,
                      "exchanges": normalise(answers, {"$CODEX_HOME": home})})
    for name, trusted in (("project-trusted", True), ("project-untrusted", False)):
        home, project = tmp / f"home-{name}", tmp / f"proj-{name}"
        home.mkdir()
        write_tree(project, PROJECT_FILES)
        config_text = CUSTOM_CONFIG + (TRUST_TEMPLATE if trusted else "")
        (home / "config.toml").write_text(config_text.replace("$PROJECT", str(project)))
        project_requests: list[Request] = [
            ("config/read", {"includeLayers": True, "cwd": str(project / "sub")}),
            ("config/read", {"includeLayers": True, "cwd": str(project)}),
            ("config/read", {"cwd": str(project / "sub")}),
        ]
        with codex(codex_bin, home) as client:
            answers = _exchange(client, project_requests)
        cases.append({"name": name, "config_toml": config_text, "project": PROJECT_FILES,
                      "exchanges": normalise(answers, {"$CODEX_HOME": home, "$PROJECT": project})})
    return {"cases": cases}


def record_config_write(codex_bin: Path, tmp: Path) -> Json:
    home = tmp / "home-write"
    home.mkdir()
    config = home / "config.toml"
    config.write_text(WRITE_START)
    steps: list[Json] = []
    with codex(codex_bin, home) as client:
        for method, params in WRITE_STEPS:
            answer = client.request(method, params)
            steps.append({"method": method, "params": params, "answer": answer, "file_after": config.read_text()})
        final_read = client.request("config/read", {})
    overridden = tmp / "home-write-flags"
    overridden.mkdir()
    (overridden / "config.toml").write_text(WRITE_START)
    with codex(codex_bin, overridden, flags=SESSION_FLAGS) as client:
        flagged = _exchange(client, FLAGGED_STEPS)
    return normalise({"start": WRITE_START, "steps": steps, "final_read": final_read,
                      "session_flags": SESSION_FLAGS, "flagged_steps": flagged},
                     {"$CODEX_HOME": home, "$FLAGS_HOME": overridden})


def record_model_list(codex_bin: Path, tmp: Path) -> Json:
    requests: list[Request] = [
        ("model/list", {}), ("model/list", {"includeHidden": True}), ("model/list", {"limit": 2}),
        ("model/list", {"cursor": "2", "limit": 3}), ("model/list", {"cursor": "9"}),
        ("model/list", {"cursor": "zz"}), ("model/list", {"cursor": "20"}),
        ("model/list", {"modelProvider": "nope"}), ("model/list", {"modelProvider": "openai"}),
        ("modelProvider/list", {}), ("modelProvider/capabilities/read", {}),
    ]
    cases: list[Json] = []
    for name, config_text in (("empty", None), ("custom", CUSTOM_CONFIG)):
        home = tmp / f"home-models-{name}"
        home.mkdir()
        if config_text is not None:
            (home / "config.toml").write_text(config_text)
        extra: list[Request] = [("model/list", {"modelProvider": "mock"})] if config_text else []
        with codex(codex_bin, home) as client:
            answers = _exchange(client, requests + extra)
        cases.append({"name": name, "config_toml": config_text,
                      "exchanges": normalise(answers, {"$CODEX_HOME": home})})
    return {"cases": cases}


def _fuzzy_requests(root: Path, tmp: Path) -> list[Request]:
    return [*(("fuzzyFileSearch", {"query": q, "roots": [str(root)]}) for q in FUZZY_QUERIES),
            ("fuzzyFileSearch", {"query": "main", "roots": []}),
            ("fuzzyFileSearch", {"query": "main", "roots": [str(tmp / "missing")]})]


def record_fuzzy_searches(codex_bin: Path, tmp: Path) -> Json:
    """The one-shot `fuzzyFileSearch` answers only: deterministic, so a test may compare them live."""
    root, home = tmp / "tree", tmp / "home-fuzzy"
    home.mkdir()
    write_tree(root, FUZZY_TREE)
    with codex(codex_bin, home) as client:
        searches = _exchange(client, _fuzzy_requests(root, tmp))
    return normalise({"tree": FUZZY_TREE, "searches": searches}, {"$ROOT": root, "$MISSING": tmp / "missing"})


def record_fuzzy(codex_bin: Path, tmp: Path) -> Json:
    """The one-shot searches and a whole session flow, for the recorded fixture.

    The session part is recorder-only: Codex 0.169 sends `sessionCompleted` from its walker thread,
    and on a loaded machine it was once not seen within 30 s, so no test waits on it live.
    """
    root, home = tmp / "tree", tmp / "home-fuzzy"
    home.mkdir()
    write_tree(root, FUZZY_TREE)
    with codex(codex_bin, home) as client:
        searches = _exchange(client, _fuzzy_requests(root, tmp))
        session: list[Json] = []
        for method, params in [
            ("fuzzyFileSearch/sessionStart", {"sessionId": "s1", "roots": [str(root)]}),
            ("fuzzyFileSearch/sessionUpdate", {"sessionId": "s1", "query": "main"}),
        ]:
            session.append({"method": method, "params": params, "answer": client.request(method, params)})
        done = client.wait_for(lambda m: m.get("method") == "fuzzyFileSearch/sessionCompleted")
        updates = [m for m in client.seen if m.get("method") == "fuzzyFileSearch/sessionUpdated"]
        client.seen.clear()
        session.append({"notifications": [{"method": m["method"], "params": m["params"]} for m in updates]
                        + [{"method": done["method"], "params": done["params"]}]})
        for method, params in [
            ("fuzzyFileSearch/sessionUpdate", {"sessionId": "nope", "query": "x"}),
            ("fuzzyFileSearch/sessionStart", {"sessionId": "s2", "roots": []}),
            ("fuzzyFileSearch/sessionStop", {"sessionId": "s1"}),
            ("fuzzyFileSearch/sessionStop", {"sessionId": "s1"}),
            ("fuzzyFileSearch/sessionUpdate", {"sessionId": "s1", "query": "x"}),
        ]:
            session.append({"method": method, "params": params, "answer": client.request(method, params)})
    places = {"$ROOT": root, "$MISSING": tmp / "missing"}
    return normalise({"tree": FUZZY_TREE, "searches": searches, "session": session}, places)


RECORDERS: dict[str, Callable[[Path, Path], Json]] = {
    "config_read": record_config_read,
    "config_write": record_config_write,
    "model_list": record_model_list,
    "fuzzy_search": record_fuzzy,
}


def derive_defaults(config_read: Json) -> Json:
    """app_server/config/effective_defaults.json from the recorded config/read answers.

    `top`: every key of the effective config with nothing set; `when_set`: the full shape a section
    takes once any part of it is set; `entries`: the shape of one entry of a map-valued section.
    """
    answers = {case["name"]: case["exchanges"][0]["answer"]["result"]["config"] for case in config_read["cases"]}
    top, sections = answers["empty"], answers["sections"]

    def blank(entry: Mapping[str, Any], user_set: Mapping[str, Any]) -> Json:
        """`entry` with the values the recorded config set put back to their defaults."""
        return {k: user_set[k] if k in user_set else v for k, v in entry.items()}

    features = dict(sections["features"])
    features["memories"] = top["features"]["memories"]
    return {
        "_comment": "Codex 0.169's effective-config defaults, derived by scripts/record_config_read.py "
                    "from its recorded config/read answers (see derive_defaults there).",
        "top": top,
        "when_set": {
            "features": features,
            "tui": blank(sections["tui"], {"theme": None}),
            "sandbox_workspace_write": blank(sections["sandbox_workspace_write"], {"network_access": False}),
        },
        "entries": {
            "model_providers": blank(sections["model_providers"]["bare"], {"name": None, "base_url": None}),
            "profiles": blank(sections["profiles"]["p1"], {"model": None}),
            "mcp_servers": blank(sections["mcp_servers"]["stdio"], {"command": None}),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    env_bin = os.environ.get("PYCODEX_CODEX_BIN")
    parser.add_argument("--codex-bin", type=Path, default=Path(env_bin) if env_bin else REPO_ROOT / CODEX_BIN_REL)
    parser.add_argument("--only", choices=sorted(RECORDERS), action="append")
    args = parser.parse_args(argv)
    if not args.codex_bin.is_file():
        print(f"record_config_read: Codex binary not found at {args.codex_bin} (npm install)", file=sys.stderr)
        return 1
    version = subprocess.run([str(args.codex_bin), "--version"], capture_output=True, text=True,
                             timeout=TIMEOUT_S, check=True).stdout.strip()
    if EXPECTED_VERSION not in version:
        print(f"record_config_read: expected Codex {EXPECTED_VERSION}, the binary says {version!r}", file=sys.stderr)
        return 1
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    written = []
    for name in args.only or sorted(RECORDERS):
        with tempfile.TemporaryDirectory(prefix=f"pycodex-{name}-") as tmp:
            document = {"codex_version": version, **RECORDERS[name](args.codex_bin, Path(tmp).resolve())}
        target = OUT_DIR / f"{name}.json"
        target.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
        written.append(target)
        print(f"recorded {target.relative_to(REPO_ROOT)}")
        if name == "config_read":
            DEFAULTS_FILE.write_text(json.dumps(derive_defaults(document), indent=1, ensure_ascii=False) + "\n")
            print(f"derived {DEFAULTS_FILE.relative_to(REPO_ROOT)}")
    record_in_manifest(*written)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
