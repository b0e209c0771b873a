"""Two turns through the official Python SDK (PyPI ``openai-codex``), run under the SDK's own venv.

    python -I python_sdk_scenario.py --codex-bin BIN --workspace DIR --home CODEX_HOME

Standalone on purpose: it imports only the SDK and the standard library (no compat_tests, no product), as a
third-party program using the SDK would. The SDK spawns ``BIN app-server --listen stdio://`` itself.

* ``run``: ``Codex(config)`` (spawn, initialize, metadata check), ``thread_start`` with the SDK's default
  approval mode, ``thread.run(PROMPT)``; the model (scripted by the harness) asks for ``exec_command`` writing
  ``run.txt``, then answers ``done run``.
* ``approval``: the SDK's ``CodexClient`` with an approval handler that records each request and accepts it,
  ``thread_start`` with ``approvalPolicy: untrusted``, one turn writing ``approval.txt``; the server must ask.

Prints one JSON object on stdout's last line: ``{"sdk", "server", "steps": {NAME: {"final", "status",
"error", "items", "approvals"}}, "problems": [...]}``. The harness judges it; this script only reports.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import threading
from typing import Any

# Imported by name: the SDK lives only in its own venv, never in the one the harness is type-checked in.
sdk = importlib.import_module("openai_codex")
sdk_client = importlib.import_module("openai_codex.client")

#: Each turn's bound; the harness bounds the whole process above the sum.
TURN_TIMEOUT = 60.0


def _bounded(what: str, work: Any, problems: list[str]) -> Any:
    """``work()`` in a daemon thread, waited for at most TURN_TIMEOUT; None (and a problem) on timeout or error."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # every failure is reported, none is fatal here
            box["error"] = f"{type(exc).__name__}: {str(exc)[:600]}"

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(TURN_TIMEOUT)
    if worker.is_alive():
        problems.append(f"{what}: no result within {TURN_TIMEOUT:.0f}s")
        return None
    if "error" in box:
        problems.append(f"{what} raised {box['error']}")
        return None
    return box["value"]


def _result(turn: Any) -> dict[str, Any]:
    status = getattr(turn.status, "value", turn.status)
    error = None if turn.error is None else str(getattr(turn.error, "message", turn.error))
    items = [str(getattr(getattr(item, "root", item), "type", "?")) for item in turn.items]
    return {"final": turn.final_response, "status": str(status), "error": error, "items": items}


def _run_step(config: Any, prompt: str, out: dict[str, Any], problems: list[str]) -> None:
    def work() -> dict[str, Any]:
        with sdk.Codex(config=config) as codex:
            meta = codex.metadata
            out["server"] = {"userAgent": meta.userAgent, "serverInfo": str(meta.serverInfo)}
            thread = codex.thread_start(cwd=config.cwd)
            return _result(thread.run(prompt))

    step = _bounded("run (Codex(), thread_start, thread.run)", work, problems)
    if step is not None:
        out["steps"]["run"] = step


def _approval_step(config: Any, prompt: str, out: dict[str, Any], problems: list[str]) -> None:
    approvals: list[str] = []

    def handler(method: str, params: Any) -> dict[str, Any]:
        approvals.append(method)
        return {"decision": "accept"}

    def work() -> dict[str, Any]:
        with sdk_client.CodexClient(config=config, approval_handler=handler) as client:
            client.initialize()
            started = client.thread_start({"cwd": config.cwd, "approvalPolicy": "untrusted"})
            return _result(sdk.Thread(client, started.thread.id).run(prompt))

    step = _bounded("approval (CodexClient, thread_start untrusted, run)", work, problems)
    if step is not None:
        out["steps"]["approval"] = {**step, "approvals": approvals}


def main() -> int:
    """Run both steps and print the verdict line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codex-bin", required=True)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--home", required=True)
    parser.add_argument("--run-prompt", required=True)
    parser.add_argument("--approval-prompt", required=True)
    args = parser.parse_args()
    config = sdk.CodexConfig(
        codex_bin=args.codex_bin,
        cwd=args.workspace,
        env={"CODEX_HOME": args.home, "CODEX_API_KEY": "compat-dummy-key"},
    )
    problems: list[str] = []
    out: dict[str, Any] = {"sdk": sdk.__version__, "server": None, "steps": {}, "problems": problems}
    _run_step(config, args.run_prompt, out, problems)
    _approval_step(config, args.approval_prompt, out, problems)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
