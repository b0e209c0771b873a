"""apply_patch's file access through the thread's execution environment (local, or a remote exec-server).

The patch library reads and writes only through these methods, so a patch on a thread whose tools run on
an exec-server changes the files over there.
"""

from __future__ import annotations

from pathlib import Path

from exec_client.environment import ExecutionEnvironment

__all__ = ["EnvironmentPatchFs"]


class EnvironmentPatchFs:
    """``read_text``/``write_text``/``remove``/``mkdirs`` on an ``ExecutionEnvironment``'s filesystem."""

    def __init__(self, environment: ExecutionEnvironment) -> None:
        self.environment = environment

    async def read_text(self, path: Path) -> str:
        """The UTF-8 text of ``path`` (OSError when it cannot be read)."""
        data = await self.environment.read_file(path)
        return data.decode("utf-8")

    async def write_text(self, path: Path, text: str) -> None:
        """Replace ``path``'s content with ``text`` (UTF-8)."""
        await self.environment.write_file(path, text.encode("utf-8"))

    async def remove(self, path: Path) -> None:
        """Delete the file ``path``."""
        await self.environment.remove(path)

    async def mkdirs(self, path: Path) -> None:
        """Create the directory ``path`` and its missing parents."""
        await self.environment.create_directory(path, recursive=True)
