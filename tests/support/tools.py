"""One skip reason per missing tool.

Every test that needs something outside the Python environment (the reference Codex binary, another Codex
release, tmux, chromium, the shared real-client scripts, the installed console script, the kernel's Landlock)
asks here, so each missing tool skips with one fixed text and the summary at the end of a run
(tests/conftest.py) shows one line per missing tool with its count.

``require_*()`` skips the calling test (or fixture) when the tool is absent and returns it otherwise;
``skip_without_codex`` is the same check as a mark, for ``pytestmark`` and ``pytest.param(marks=...)``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compat_tests.support import builds
from tests.support.paths import SHARED
from tests.support.schema import find_codex_bin

CODEX_REASON = "Codex 0.169.0 binary not installed (npm install, or set PYCODEX_CODEX_BIN)"
TMUX_REASON = "tmux not installed (.ci/run installs Debian's tmux when apt-get can)"
CHROMIUM_REASON = "chromium not on PATH (.ci/run installs Debian's chromium when apt-get can)"
SHARED_REASON = f"shared real-client scripts not found in {SHARED} (set PYCODEX_SHARED_DIR)"
CONSOLE_SCRIPT_REASON = "the pycodex console script is not installed (pip install -e .)"
LANDLOCK_REASON = "this kernel has no Landlock"
LANDLOCK_TCP_REASON = "this kernel's Landlock has no TCP rules (ABI < 4)"
TSC_REASON = "TypeScript's tsc not installed (npm install: package.json pins typescript)"
CODEX_RELEASE_REASON = ("Codex {version} is not in the compat build cache and npm could not install it there "
                        "(offline?): set PYCODEX_COMPAT_CACHE to a cache that holds it")
GRPC_REASON = "grpcio (the `otel` extra's gRPC exporter) is not installed (pip install -e '.[test]')"
PODMAN_REASON = "podman not installed or cannot run a container (.ci/run installs Debian's podman and runc)"
DOCKER_REASON = "the docker CLI is not on PATH"
KUBERNETES_REASON = "no Kubernetes cluster reachable (KUBECONFIG) or the kubernetes client not installed"

#: The compat build cache as the run found it: tests run with an empty $HOME (tests/conftest.py), under which
#: the default cache (~/.cache/pycodex-compat) would be an empty folder, so the path is fixed at import.
_COMPAT_CACHE = builds.cache_dir()
#: Releases looked up this session: each is installed (or found missing) once, not once per test.
_RELEASES: dict[str, Path | None] = {}

#: The Codex check as a mark; evaluated once, at import.
skip_without_codex = pytest.mark.skipif(find_codex_bin() is None, reason=CODEX_REASON)


def skip_without_landlock(abi: int = 1) -> pytest.MarkDecorator:
    """A mark skipping where the kernel's Landlock ABI is below `abi` (1: no Landlock; 4: TCP rules)."""
    from pycodex.platform.landlock import landlock_abi

    return pytest.mark.skipif(landlock_abi() < abi, reason=LANDLOCK_REASON if abi <= 1 else LANDLOCK_TCP_REASON)


def require_landlock() -> None:
    """Skips where the kernel has no Landlock (pycodex then runs commands unsandboxed, and warns)."""
    from pycodex.platform.landlock import landlock_abi

    if landlock_abi() == 0:
        pytest.skip(LANDLOCK_REASON)


def require_codex() -> Path:
    """The reference Codex 0.169.0 binary (`$PYCODEX_CODEX_BIN` or the npm copy); skips when absent."""
    found = find_codex_bin()
    if found is None:
        pytest.skip(CODEX_REASON)
    return found


def require_codex_release(version: str) -> Path:
    """Codex ``version`` (``@openai/codex`` from npm) as the compat matrix has it: from the compat build cache,
    installed there with npm on first use (compat_tests/support/builds.py); skips when it cannot be had."""
    if version not in _RELEASES:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("PYCODEX_COMPAT_CACHE", str(_COMPAT_CACHE))
            build, _reason = builds.find_build(f"codex@{version}")
        _RELEASES[version] = Path(build.argv[0]) if build is not None else None
    found = _RELEASES[version]
    if found is None or not os.access(found, os.X_OK):
        pytest.skip(CODEX_RELEASE_REASON.format(version=version))
    return found


def require_tmux() -> str:
    """The `tmux` executable; skips when it is not on PATH."""
    found = shutil.which("tmux")
    if found is None:
        pytest.skip(TMUX_REASON)
    return found


def require_chromium() -> str:
    """A headless-capable chromium (`chromium` or `chromium-browser`); skips when neither is on PATH."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip(CHROMIUM_REASON)
    return found


def require_shared(relative: str) -> Path:
    """A file of the shared real-client scripts (``SHARED / relative``); skips when it is missing."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(SHARED_REASON)
    return path


def require_pycodex_script() -> str:
    """The installed `pycodex` console script (on PATH or beside this interpreter); skips when absent."""
    found = shutil.which("pycodex") or str(Path(sys.executable).with_name("pycodex"))
    if not Path(found).exists():
        pytest.skip(CONSOLE_SCRIPT_REASON)
    return found


def require_tsc() -> Path:
    """TypeScript's ``tsc`` from the repository's npm install (package.json pins it); skips when absent."""
    tsc = Path(__file__).resolve().parents[2] / "node_modules" / ".bin" / "tsc"
    if not tsc.is_file():
        pytest.skip(TSC_REASON)
    return tsc


def require_grpc() -> None:
    """Skips when grpcio (needed by the OTLP/gRPC exporter) cannot be imported."""
    import importlib.util

    if importlib.util.find_spec("grpc") is None:
        pytest.skip(GRPC_REASON)


@functools.cache
def podman_image() -> str | None:
    """The local box image, built if needed, once a container of it ran; None when podman cannot."""
    from app_server.providers import image
    from app_server.providers.podman import PodmanSettings

    binary = shutil.which("podman")
    if binary is None:
        return None
    settings = PodmanSettings()
    runtime = image.host_runtime()
    tag = f"{image.IMAGE_REPOSITORY}:{image.image_key(runtime)}"
    try:
        if subprocess.run([binary, "image", "exists", tag], capture_output=True, timeout=60).returncode != 0:
            tar = Path(os.environ.get("TMPDIR", "/tmp")) / f"pycodex-rootfs-{os.getpid()}.tar"
            try:
                image.build_rootfs_tar(runtime, tar)
                subprocess.run([binary, "import", str(tar), tag], capture_output=True, timeout=300, check=True)
            finally:
                tar.unlink(missing_ok=True)
        limits = [arg for u in settings.ulimits for arg in ("--ulimit", u)]
        ran = subprocess.run(
            [binary, "run", "--rm", "--runtime", str(settings.runtime), *limits, "--network", "host", tag, "true"],
            capture_output=True, timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return tag if ran.returncode == 0 else None


def require_podman() -> str:
    """The local box image's tag once podman ran a container of it; skips when podman is missing or cannot."""
    tag = podman_image()
    if tag is None:
        pytest.skip(PODMAN_REASON)
    return tag


def require_docker_cli() -> str:
    """The docker CLI's path (a daemon is not needed); skips when there is none."""
    binary = shutil.which("docker")
    if binary is None:
        pytest.skip(DOCKER_REASON)
    return binary


def require_kubernetes() -> None:
    """Skips unless the kubernetes client is installed and KUBECONFIG names a cluster that answers."""
    import importlib.util

    if importlib.util.find_spec("kubernetes") is None or not os.environ.get("KUBECONFIG"):
        pytest.skip(KUBERNETES_REASON)
    probe = "from kubernetes import client, config; config.load_kube_config(); client.CoreApi().get_api_versions()"
    try:
        ok = subprocess.run([sys.executable, "-c", probe], capture_output=True, timeout=20).returncode == 0
    except subprocess.SubprocessError:
        ok = False
    if not ok:
        pytest.skip(KUBERNETES_REASON)
