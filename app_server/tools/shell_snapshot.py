"""Login-shell snapshots: run the user's login shell once per thread, reuse its environment after.

A login shell (``bash -lc``) reads the profile files every time, which costs hundreds of milliseconds
on a typical machine. Like Codex, we capture the exported environment of one login shell into
``CODEX_HOME/shell_snapshots/<thread>.sh`` and run later commands as ``bash -c '. SNAPSHOT; CMD'``.
The item still shows the command as ``bash -lc CMD``: the effect is the same environment.
Snapshots are local-only; a remote environment keeps the plain login shell.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
from pathlib import Path

__all__ = ["ShellSnapshot"]

logger = logging.getLogger(__name__)

_CAPTURE = "export -p"
_TIMEOUT_S = 10.0


class ShellSnapshot:
    """One thread's snapshot; ``argv_for`` gives the command line to run."""

    def __init__(self, path: Path, shell: str = "/bin/bash") -> None:
        self.path = path
        self.shell = shell
        self._task: asyncio.Task[bool] | None = None

    def start(self, cwd: Path) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._capture(cwd), name="shell-snapshot")

    async def _capture(self, cwd: Path) -> bool:
        try:
            proc = await asyncio.create_subprocess_exec(
                self.shell, "-lc", _CAPTURE, cwd=str(cwd) if cwd.is_dir() else None,
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, start_new_session=True,
            )
            out, _ = await asyncio.wait_for(proc.communicate(), _TIMEOUT_S)
        except (OSError, TimeoutError) as exc:
            logger.info("shell snapshot failed: %s", exc)
            return False
        if proc.returncode != 0 or not out:
            return False
        # PWD/OLDPWD/SHLVL describe the capturing shell, not the command's.
        lines = [
            line for line in out.decode("utf-8", "replace").splitlines()
            if not any(line.startswith(f"declare -x {name}=") or line == f"declare -x {name}"
                       for name in ("PWD", "OLDPWD", "SHLVL", "_"))
        ]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
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
        try:
            self.path.unlink()
        except OSError:
            pass
