"""The remote half of ``pycodex demo``: a relay and a remote exec-server as real subprocesses.

``RemoteSetup`` starts ``pycodex relay --capture`` and ``pycodex exec-server --remote`` on loopback,
hands out the environment variables that point an app-server at them, and afterwards reads the relay's
capture back to show that every byte it carried was ciphertext.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CaptureReport", "RemoteSetup", "inspect_capture"]

ENVIRONMENT_ID = "pycodex-demo"
MARKER_VAR = "PYCODEX_DEMO_EXECUTOR"


@dataclass
class CaptureReport:
    frames: int = 0
    data_frames: int = 0
    bytes: int = 0
    plaintext_hits: list[str] = field(default_factory=list)


def inspect_capture(path: Path, needles: list[str]) -> CaptureReport:
    """Count the relayed frames and look for any of ``needles`` in their raw bytes."""
    report = CaptureReport()
    if not path.exists():
        return report
    for line in path.read_text("utf-8").splitlines():
        record = json.loads(line)
        raw = record.get("frame")
        if raw is None:
            continue
        data = base64.b64decode(raw)
        report.frames += 1
        report.bytes += len(data)
        if record.get("body") == "data":
            report.data_frames += 1
        for needle in needles:
            if needle.encode() in data:
                report.plaintext_hits.append(needle)
    return report


class RemoteSetup:
    """Relay + remote executor for the lifetime of a ``with`` block."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.capture = tmp / "relay-frames.jsonl"
        self.token = secrets.token_hex(16)
        self.marker = f"executor-{secrets.token_hex(4)}"
        self._procs: list[subprocess.Popen[bytes]] = []
        self.registry_url = ""

    def _cli(self) -> list[str]:
        return [sys.executable, "-m", "pycodex"]

    def __enter__(self) -> RemoteSetup:
        base_env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
        relay = subprocess.Popen(
            [*self._cli(), "relay", "--capture", str(self.capture)], stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=dict(base_env, PYCODEX_RELAY_TOKEN=self.token),
        )
        self._procs.append(relay)
        assert relay.stdout is not None
        self.registry_url = relay.stdout.readline().decode().strip()
        if not self.registry_url.startswith("http"):
            raise RuntimeError("the relay did not start")
        exec_home = self.tmp / "executor-home"
        exec_home.mkdir()
        executor = subprocess.Popen(
            [*self._cli(), "exec-server", "--remote", self.registry_url, "--environment-id", ENVIRONMENT_ID],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=dict(base_env, CODEX_API_KEY=self.token, CODEX_HOME=str(exec_home), **{MARKER_VAR: self.marker}),
        )
        self._procs.append(executor)
        self._wait_registered()
        return self

    def _wait_registered(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.capture.exists() and "environment_connected" in self.capture.read_text("utf-8"):
                return
            if any(p.poll() is not None for p in self._procs):
                raise RuntimeError("the relay or the executor exited early")
            time.sleep(0.05)
        raise RuntimeError("the executor did not register with the relay in time")

    def app_server_env(self) -> dict[str, str]:
        return {
            "CODEX_EXEC_SERVER_NOISE_REGISTRY_URL": self.registry_url,
            "CODEX_EXEC_SERVER_NOISE_ENVIRONMENT_ID": ENVIRONMENT_ID,
            "CODEX_EXEC_SERVER_NOISE_AUTH_TOKEN": self.token,
        }

    def __exit__(self, *exc: object) -> None:
        for proc in reversed(self._procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
