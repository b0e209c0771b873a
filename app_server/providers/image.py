"""The local box image: a small rootfs built from this host's own files, imported into the engine.

No registry is needed. The rootfs holds a shell and the core tools a model's commands use (copied from
the host with the shared libraries they and the interpreter need); the interpreter, the virtualenv and
the pycodex source tree are bind-mounted read-only at their host paths (``runtime_mounts``), so the box
runs ``python -m pycodex exec-server --remote ...`` with exactly the code of the app-server that started it.

The image is tagged by a content key (the recipe, the tools it copies, the interpreter, its extension
modules and the venv's installed distributions), so it is built once per host and reused until one of
those changes.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from app_server.providers.base import Mount

__all__ = ["IMAGE_REPOSITORY", "HostRuntime", "build_rootfs_tar", "host_runtime", "image_key"]

IMAGE_REPOSITORY = "localhost/pycodex-box"
#: Bump when the recipe changes: it is part of the content key.
RECIPE_VERSION = "2"
#: The tools a command in the box can count on (each copied with its libraries when the host has it).
TOOLS = (
    "bash", "sh", "dash", "cat", "ls", "cp", "mv", "rm", "mkdir", "rmdir", "touch", "ln", "chmod", "echo",
    "printf", "env", "id", "whoami", "hostname", "uname", "sleep", "true", "false", "test", "head", "tail",
    "wc", "sort", "uniq", "cut", "tr", "tee", "date", "pwd", "dirname", "basename", "readlink", "realpath",
    "stat", "find", "grep", "sed", "awk", "diff", "xargs", "kill", "ps", "timeout",
)  # fmt: skip
_SKIP_LIBS = ("tkinter", "_tkinter")  # Tk drags in X11; no command in a box opens a window
_ROOT_DIRS = ("etc", "tmp", "root", "proc", "sys", "dev", "run", "usr", "usr/bin", "usr/lib")
#: Top-level directories that a merged-/usr host makes symlinks (``/bin -> usr/bin``): the rootfs does too.
_MERGED = ("bin", "sbin", "lib", "lib64")


@dataclass(frozen=True)
class HostRuntime:
    """The host's interpreter installation, virtualenv and source tree a box runs pycodex from."""

    python_home: Path  # the interpreter's installation (its prefix, not the venv)
    venv: Path
    source: Path
    python: Path  # the venv's interpreter, as the box starts it

    def mounts(self) -> tuple[Mount, ...]:
        """The read-only bind mounts that give a box this runtime (deduplicated, nested ones dropped)."""
        roots = sorted({self.python_home, self.venv, self.source}, key=lambda p: len(p.parts))
        kept: list[Path] = []
        for root in roots:
            if not any(root.is_relative_to(k) for k in kept):
                kept.append(root)
        return tuple(Mount(p, p, read_only=True) for p in kept)


def host_runtime() -> HostRuntime:
    """This process's interpreter home, venv and source tree (the box runs the same code)."""
    source = Path(__file__).resolve().parents[2]
    return HostRuntime(
        python_home=Path(os.path.realpath(sys.base_prefix)),
        venv=Path(sys.prefix),
        source=source,
        python=Path(sys.prefix) / "bin" / "python",
    )


def _canonical(path: Path) -> Path:
    """``path`` with its directories resolved but its own name kept (``libz.so.1``, ``sh``: the names
    the loader and the shell look for, even where the host's file is a symlink to another name)."""
    return Path(os.path.realpath(path.parent)) / path.name


def _tool_paths() -> list[Path]:
    found = {_canonical(Path(p)) for name in TOOLS if (p := shutil.which(name))}
    return sorted(found)


def _shared_objects(runtime: HostRuntime) -> list[Path]:
    """The interpreter binary and every extension module it and the venv can load (their libraries)."""
    binary = Path(os.path.realpath(sys.executable))
    roots = [runtime.python_home / "lib", runtime.venv]
    objects = [binary]
    for root in roots:
        for path in root.rglob("*.so*"):
            if path.is_file() and not any(s in path.name for s in _SKIP_LIBS):
                objects.append(path)
    return sorted(set(objects))


def _key_files(runtime: HostRuntime) -> list[Path]:
    """What the image depends on, cheaply: the tools, the interpreter, its extension modules, and the
    venv's installed distributions (an install or upgrade renames a ``*.dist-info``, so it shows here)."""
    files = [*_tool_paths(), Path(os.path.realpath(sys.executable))]
    for folder in (*runtime.python_home.glob("lib/python3*/lib-dynload"), *runtime.venv.glob("lib/python3*/site-packages")):
        with contextlib.suppress(OSError):
            files += sorted(folder.iterdir())
    return files


def image_key(runtime: HostRuntime) -> str:
    """The content key of the image for ``runtime``: the recipe and what it copies (path, size, mtime)."""
    digest = hashlib.sha256(f"recipe {RECIPE_VERSION}\n{runtime.python_home}\n".encode())
    for path in _key_files(runtime):
        try:
            st = path.stat()
        except OSError:
            continue
        digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def _libraries(objects: Iterable[Path]) -> set[Path]:
    """The host libraries (outside the mounted runtime) that ``ldd`` says ``objects`` load."""
    libs: set[Path] = set()
    batch = [str(p) for p in objects]
    for start in range(0, len(batch), 64):
        out = subprocess.run(["ldd", *batch[start : start + 64]], capture_output=True, text=True, timeout=120)
        for line in out.stdout.splitlines():
            parts = line.split()
            for token in parts:
                if token.startswith("/") and not token.endswith(":"):
                    libs.add(_canonical(Path(token)))
    return libs


def _entries(runtime: HostRuntime) -> Iterator[tuple[str, Path]]:
    """(path in the rootfs, host file) for every copied file: tools, their libraries, the runtime's."""
    tools = _tool_paths()
    mounted = runtime.mounts()
    needed = _libraries([*tools, *_shared_objects(runtime)])
    for path in sorted(set(tools) | needed):
        if any(path.is_relative_to(m.source) for m in mounted) or not path.exists():
            continue  # the mounts bring those
        yield str(path).lstrip("/"), path


def _add_dir(tar: tarfile.TarFile, name: str, mode: int = 0o755) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.mode = tarfile.DIRTYPE, mode
    tar.addfile(info)


def _add_text(tar: tarfile.TarFile, name: str, text: str) -> None:
    data = text.encode()
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), 0o644
    tar.addfile(info, io.BytesIO(data))


def build_rootfs_tar(runtime: HostRuntime, dest: Path) -> Path:
    """Write the rootfs tar for ``runtime`` to ``dest`` (a file) and return it."""
    with tarfile.open(dest, "w") as tar:
        made: set[str] = set()
        for name in _ROOT_DIRS:
            _add_dir(tar, name, 0o1777 if name == "tmp" else 0o755)
            made.add(name)
        for name in _MERGED:
            host = Path("/") / name
            if host.is_symlink():
                link = tarfile.TarInfo(name)
                link.type, link.linkname = tarfile.SYMTYPE, os.readlink(host)
                tar.addfile(link)
                made.add(name)
        for name, path in _entries(runtime):
            for parent in reversed(Path(name).parents[:-1]):
                if str(parent) not in made:
                    _add_dir(tar, str(parent))
                    made.add(str(parent))
            info = tar.gettarinfo(str(path.resolve()), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            with path.resolve().open("rb") as handle:
                tar.addfile(info, handle)
            made.add(name)
        _add_text(tar, "etc/passwd", "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/:/bin/sh\n")
        _add_text(tar, "etc/group", "root:x:0:\nnogroup:x:65534:\n")
        _add_text(tar, "etc/hosts", "127.0.0.1 localhost\n")
    return dest
