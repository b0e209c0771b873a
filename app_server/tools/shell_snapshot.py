"""Login-shell snapshots: run the user's login shell once per thread, reuse its environment after.

A login shell (``bash -lc``) reads the profile files every time, which costs hundreds of milliseconds
on a typical machine. Like Codex, we capture the exported environment of one login shell into
``CODEX_HOME/shell_snapshots/<thread>.sh`` and run later commands as ``bash -c '. SNAPSHOT; CMD'``.
The item still shows the command as ``bash -lc CMD``: the effect is the same environment.
Snapshots are local-only; a remote environment keeps the plain login shell.

Only what the login shell *changed* is stored: a variable the app-server itself already holds with the
same value reaches every command by inheritance anyway. So the file never repeats the server's own
environment, where provider keys and tokens live (the file is also private to the user, mode 0600).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import tempfile
from collections.abc import Awaitable, Mapping
from pathlib import Path

__all__ = ["DEFAULT_SHELL", "ShellSnapshot", "capture_login_env"]

logger = logging.getLogger(__name__)

_CAPTURE = "env -0"
#: These describe the capturing shell, not the command's.
_SHELL_LOCAL = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})
_TIMEOUT_S = 10.0
DEFAULT_SHELL = "/bin/bash"


def snapshot_lines(env_dump: bytes, inherited: Mapping[str, str]) -> list[str]:
    """``export`` lines for what a login shell's ``env -0`` adds or changes relative to ``inherited``."""
    lines = []
    for entry in env_dump.decode("utf-8", "surrogateescape").split("\0"):
        name, sep, value = entry.partition("=")
        if not sep or not name.isidentifier() or name in _SHELL_LOCAL or inherited.get(name) == value:
            continue
        lines.append(f"export {name}={shlex.quote(value)}")
    return lines


async def capture_login_env(shell: str, cwd: Path) -> bytes | None:
    """What ``env -0`` prints in a login ``shell`` started in ``cwd``; None if that fails.

    The output goes to a temporary file, not a pipe: a capture cancelled at shutdown (the server begins one
    at the handshake) then leaves no pipe transport behind, only a killed shell."""
    with tempfile.TemporaryFile() as out:
        try:
            proc = await asyncio.create_subprocess_exec(
                shell, "-lc", _CAPTURE, cwd=str(cwd) if cwd.is_dir() else None,
                stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError as exc:
            logger.info("shell snapshot failed: %s", exc)
            return None
        try:
            await asyncio.wait_for(proc.wait(), _TIMEOUT_S)
        except TimeoutError as exc:
            logger.info("shell snapshot failed: %s", exc)
            return None
        finally:
            if proc.returncode is None:  # timed out or cancelled at shutdown: the shell must not outlive us
                proc.kill()
                await asyncio.shield(proc.wait())
        out.seek(0)
        dump = out.read()
    return dump if proc.returncode == 0 and dump else None


class ShellSnapshot:
    """One thread's snapshot; ``argv_for`` gives the command line to run."""

    def __init__(self, path: Path, shell: str = DEFAULT_SHELL) -> None:
        self.path = path
        self.shell = shell
        self._task: asyncio.Task[bool] | None = None

    def start(self, cwd: Path, captured: asyncio.Task[bytes | None] | None = None) -> asyncio.Task[bool]:
        """Start capturing (once), or take ``captured``: a ``capture_login_env`` of this shell in ``cwd``
        begun earlier. The owner cancels the returned task at shutdown."""
        if self._task is None:
            capture = captured if captured is not None else capture_login_env(self.shell, cwd)
            self._task = asyncio.get_running_loop().create_task(self._write(capture), name="shell-snapshot")
        return self._task

    async def _write(self, capture: Awaitable[bytes | None]) -> bool:
        out = await capture
        if out is None:
            return False
        lines = snapshot_lines(out, os.environ)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.touch(mode=0o600)
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogateescape")
            os.replace(tmp, self.path)
        except OSError as exc:
            logger.info("could not write the shell snapshot: %s", exc)
            return False
        return True

    async def argv_for(self, cmd: str, *, login: bool) -> list[str] | None:
        """The command line that runs ``cmd`` with the snapshot, or None to use a real login shell."""
        if not login or self._task is None:
            return None
        try:
            ready = await asyncio.shield(self._task)
        except Exception:
            return None
        if not ready:
            return None
        return [self.shell, "-c", f". {shlex.quote(str(self.path))}\n{cmd}"]

    def remove(self) -> None:
        """Delete the snapshot file (gone already is fine)."""
        try:
            self.path.unlink()
        except OSError:
            pass
