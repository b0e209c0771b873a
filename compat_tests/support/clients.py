"""The real clients of the ``clients`` scenario: installs (pinned, in the compat cache), launchers, verdicts, TUI.

* :func:`python_sdk`: PyPI ``openai-codex`` in ``CACHE/openai-codex-VERSION/venv``, installed ``--no-deps``
  (its other dependency is a pinned Codex binary the scenario never uses: it names the build to run), with
  pinned ``pydantic`` and ``packaging``; the venv's python.
* :func:`ts_sdk`: npm ``@openai/codex-sdk`` in ``CACHE/codex-sdk-VERSION`` (``npm install --prefix``, no
  install scripts, no optional platform binary); that prefix.
* :func:`launcher`: a one-line shell script that runs a build (an SDK takes one executable path, a build's
  argv can be several words).
* :func:`run_verdict`: run a scenario script of ``compat_tests/clients`` bounded and read its JSON verdict.
* :class:`Tui`: one Codex TUI in a private tmux server, read by capturing its pane (every wait bounded).

Installs happen under a file lock next to the builds' (see builds.py), so parallel workers install once; a
failed install is removed and raises :class:`ClientUnavailable` with the tool's whole output (the test skips
with it, as an unavailable build does).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from compat_tests.support.builds import Build, BuildError, cache_lock, run_step
from compat_tests.support.processes import ProcessGroup, ProcessResult
from compat_tests.support.rpc import ScenarioError

__all__ = [
    "CLIENT_SCRIPTS",
    "PYTHON_SDK",
    "TS_SDK",
    "ClientUnavailable",
    "Tui",
    "free_port",
    "launcher",
    "python_sdk",
    "run_to_end",
    "run_verdict",
    "shared_clients",
    "ts_sdk",
    "wait_listening",
]

PYTHON_SDK = ("openai-codex", "0.163.0")
#: The SDK's own dependencies besides the Codex binary, pinned so a cache entry means one set of versions.
PYTHON_SDK_DEPS = ("pydantic==2.14.4", "packaging==26.4")
TS_SDK = ("@openai/codex-sdk", "0.163.0")
CLIENT_SCRIPTS = Path(__file__).resolve().parents[1] / "clients"
_INSTALL_TIMEOUT = 600.0
_SCRUBBED = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "VIRTUAL_ENV", "PIP_TARGET")
Json = dict[str, Any]


class ClientUnavailable(Exception):
    """A client that cannot be had here (no npm, no tmux, a failed install); the message is the whole reason."""




def _install_env() -> dict[str, str]:
    # Nothing of the harness's own environment (its checkout on PYTHONPATH, its venv) may leak into a client's.
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _step(argv: list[str], what: str, cwd: Path) -> str:
    """Run one install step; its stdout, or ClientUnavailable with its whole output."""
    try:
        return run_step(argv, _INSTALL_TIMEOUT, env=_install_env(), cwd=cwd)
    except BuildError as exc:
        raise ClientUnavailable(f"{what}: {exc}") from None


def _record_matches(record: Path, expected: Json) -> bool:
    try:
        return bool(json.loads(record.read_text()) == expected)
    except (OSError, ValueError):
        return False


def python_sdk() -> Path:
    """The python of a venv holding PyPI ``openai-codex`` at :data:`PYTHON_SDK`'s version (installed if needed)."""
    name, version = PYTHON_SDK
    expected = {"package": name, "version": version, "deps": list(PYTHON_SDK_DEPS)}
    what = f"PyPI {name}=={version}"
    with cache_lock(f"{name}-{version}") as root:
        python = root / "venv" / "bin" / "python"
        if python.is_file() and _record_matches(root / "client.json", expected):
            return python
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        try:
            _step([sys.executable, "-m", "venv", str(root / "venv")], what, root)
            pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            _step([*pip, "--no-deps", f"{name}=={version}"], what, root)
            _step([*pip, *PYTHON_SDK_DEPS], what, root)
            probe = "import openai_codex, pydantic; print(openai_codex.__version__)"
            got = _step([str(python), "-I", "-c", probe], what, root)
            if got != version:
                raise ClientUnavailable(f"{what}: the venv imports openai_codex {got!r}, expected {version}")
        except ClientUnavailable:
            shutil.rmtree(root, ignore_errors=True)  # a failed install must not look like a cache entry
            raise
        (root / "client.json").write_text(json.dumps(expected) + "\n")
        return python


def ts_sdk() -> Path:
    """The npm prefix holding ``@openai/codex-sdk`` at :data:`TS_SDK`'s version (installed if needed)."""
    name, version = TS_SDK
    what = f"npm {name}@{version}"
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        raise ClientUnavailable(f"{what}: npm or node is not on PATH")
    with cache_lock(f"codex-sdk-{version}") as prefix:
        package = prefix / "node_modules" / "@openai" / "codex-sdk" / "package.json"
        if package.is_file() and json.loads(package.read_text()).get("version") == version:
            return prefix
        shutil.rmtree(prefix, ignore_errors=True)
        prefix.mkdir(parents=True)
        # --omit=optional: the SDK's @openai/codex dependency would bring its own binary; the build is named.
        argv = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--ignore-scripts",
                "--omit=optional", "--prefix", str(prefix), f"{name}@{version}"]
        try:
            _step(argv, what, prefix)
            if not package.is_file() or json.loads(package.read_text()).get("version") != version:
                raise ClientUnavailable(f"{what}: npm finished but {package} is not version {version}")
        except ClientUnavailable:
            shutil.rmtree(prefix, ignore_errors=True)
            raise
        return prefix


def launcher(build: Build, folder: Path) -> Path:
    """An executable script in ``folder`` that runs ``build`` with the script's arguments."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "codex"
    script.write_text(f'#!/bin/sh\nexec {shlex.join(build.argv)} "$@"\n')
    script.chmod(0o755)
    return script


def shared_clients(setup: Path) -> Path:
    """The ``CLIENTS_DIR`` of the shared client scripts, filled by their ``setup_clients.sh`` under the lock."""
    with cache_lock("shared-clients") as folder:
        folder.mkdir(parents=True, exist_ok=True)
        # setup_clients.sh is idempotent but takes no lock of its own: parallel workers would race in it.
        _step(["env", f"CLIENTS_DIR={folder}", "bash", str(setup)], "the shared clients' setup_clients.sh", folder)
        return folder


async def run_to_end(
    group: ProcessGroup, name: str, argv: Sequence[str], env: dict[str, str], cwd: Path, timeout: float
) -> ProcessResult:
    """Run ``argv`` in ``group`` until it exits (bounded: ScenarioError naming ``name`` after ``timeout``)."""
    handle = await group.start(name, argv, env=env, cwd=cwd)
    try:
        await asyncio.wait_for(handle.proc.wait(), timeout)
    except TimeoutError:
        await handle.stop()
        raise ScenarioError(f"{name}: did not finish within {timeout:.0f}s") from None
    return await handle.stop()


async def run_verdict(
    group: ProcessGroup, client: str, argv: Sequence[str], env: dict[str, str], cwd: Path, timeout: float
) -> Json:
    """Run a client scenario script to its end (bounded) and return the JSON object of its last stdout line.

    Raises ScenarioError naming ``client`` when it times out, exits non-zero or prints no verdict.
    """
    result = await run_to_end(group, client, argv, env, cwd, timeout)
    last = result.stderr_lines[-1] if result.stderr_lines else "(no stderr)"
    if result.returncode != 0:
        raise ScenarioError(f"{client}: scenario script exited rc={result.returncode}: {last[:200]}")
    try:
        verdict = json.loads(result.stdout_lines[-1]) if result.stdout_lines else None
    except json.JSONDecodeError:
        verdict = None
    if not isinstance(verdict, dict):
        raise ScenarioError(f"{client}: scenario script printed no verdict line: {last[:200]}")
    return verdict


def free_port() -> int:
    """A port free on 127.0.0.1 now (the server binds it right after; a clash fails loudly, never silently)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_listening(
    port: int, exited: Callable[[], int | None], who: str = "app-server", timeout: float = 30.0
) -> None:
    """Until 127.0.0.1:port accepts a connection (bounded); ScenarioError naming ``who`` if it exits first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if exited() is not None:
            raise ScenarioError(f"{who} exited rc={exited()} before listening on ws://127.0.0.1:{port}")
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 2.0)
        except (OSError, TimeoutError):
            await asyncio.sleep(0.1)
            continue
        writer.close()
        return
    raise ScenarioError(f"{who} did not listen on ws://127.0.0.1:{port} within {timeout:.0f}s")


class Tui:
    """One TUI process in a private tmux server (its own socket), read by capturing the pane.

    The approach of tests/support/tui.py (compat_tests imports no tests package): the pane's shell writes the
    TUI's exit status to a file, since tmux 3.3 can leave a dead pane's process unreaped.
    """

    def __init__(self, tmux: str, socket_name: str, workdir: Path) -> None:
        self.base = [tmux, "-L", socket_name]
        self.status_file = workdir / "tui-exit-status"
        self.socket = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}" / socket_name

    def _run(self, *args: str) -> str:
        done = subprocess.run([*self.base, *args], capture_output=True, text=True, timeout=10, check=False)
        return done.stdout

    def start(self, argv: Sequence[str], env: dict[str, str], cwd: Path) -> None:
        """Start ``argv`` with exactly ``env`` in a 120x40 pane that stays after the process exits."""
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        self.status_file.unlink(missing_ok=True)
        command = f"env -i {exports} {shlex.join(argv)}; echo $? > {shlex.quote(str(self.status_file))}"
        self._run("kill-server")
        self._run("new-session", "-d", "-s", "tui", "-x", "120", "-y", "40", "-c", str(cwd), command)
        self._run("set-option", "-t", "tui", "remain-on-exit", "on")

    def screen(self) -> str:
        """The pane's text now."""
        return self._run("capture-pane", "-p", "-t", "tui")

    async def wait_until(self, what: str, test: Callable[[str], bool], timeout: float = 60.0) -> str:
        """The first screen for which ``test`` holds, polled until ``timeout``; ScenarioError naming ``what``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            screen = self.screen()
            if test(screen):
                return screen
            if loop.time() >= deadline:
                raise ScenarioError(f"tui: {what} not on the screen within {timeout:.0f}s", screen)
            await asyncio.sleep(0.2)

    async def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """The first screen showing ``text``."""
        return await self.wait_until(repr(text), lambda screen: text in screen, timeout)

    def key(self, key: str) -> None:
        """Press one named key (``Enter``, ``Escape``, ``y``)."""
        self._run("send-keys", "-t", "tui", key)

    async def submit(self, text: str) -> None:
        """Type ``text``, wait until the composer shows it, press Enter."""
        self._run("send-keys", "-t", "tui", "-l", text)
        await self.wait_for(f"› {text}")
        self.key("Enter")

    async def exit_status(self, timeout: float = 60.0) -> str:
        """The TUI's exit status once it ended (bounded)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.status_file.exists() or not self.status_file.read_text().strip():
            if loop.time() >= deadline:
                raise ScenarioError(f"tui: did not exit within {timeout:.0f}s", self.screen())
            await asyncio.sleep(0.2)
        return self.status_file.read_text().strip()

    def close(self) -> None:
        """End the private tmux server (and the TUI in it) and remove its socket file."""
        self._run("kill-server")
        self.socket.unlink(missing_ok=True)
