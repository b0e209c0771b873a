"""The ``environment/info`` object: what this executor is and which optional features it has.

Capability bits gate optional client features (the real app-server only calls e.g.
``environmentConfig/read`` when ``environmentConfigRead`` is true), so only features this executor
implements are reported as true.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import socket
import tempfile
from pathlib import Path

from exec_client.wire.protocol import path_to_uri
from pycodex.json_types import JsonObj

__all__ = ["CODEX_VERSION", "environment_info"]

#: The protocol version we speak; the real client compares it with its own.
CODEX_VERSION = "0.169.0"

_CAPABILITIES = (
    "networkProxyLaunch",
    "networkProxyReviewDomains",
    "credentialMasking",
    "credentialMaskingCustomProviders",
    "capabilityDiscoverySandbox",
    "fsWatchMissing",
    "capabilityDiscoveryV2",
    "environmentConfigRead",
    "httpHeaderEnvVars",
    "sandboxedFileStreaming",
    "fileWriteStreaming",
    "shellSnapshotV2",
    "windowsMxc",
    "linuxRootWritePreservesDevices",
    "linuxApprovedRootWritePreservesRestrictions",
)
_IMPLEMENTED: frozenset[str] = frozenset({"fsWatchMissing"})


def _shell() -> dict[str, str]:
    path = os.environ.get("SHELL") or shutil.which("bash") or "/bin/sh"
    return {"name": Path(path).name, "path": path}


def environment_info() -> JsonObj:
    """The ``environmentInfo`` of the ``initialize`` result: shell, executor version and a stable provider
    id."""
    identity = f"{socket.gethostname()}:{os.getuid()}:{Path.home()}"
    return {
        "shell": _shell(),
        "executorVersion": CODEX_VERSION,
        "providerId": "sha256:" + hashlib.sha256(identity.encode()).hexdigest(),
        "cwd": path_to_uri(Path.cwd()),
        "userHomeDir": path_to_uri(Path.home()),
        "platformOs": platform.system().lower(),
        "prependPathDirs": [],
        "temporaryDirectories": [],
        "tempDir": path_to_uri(tempfile.gettempdir()),
        "capabilities": {name: name in _IMPLEMENTED for name in _CAPABILITIES},
    }
