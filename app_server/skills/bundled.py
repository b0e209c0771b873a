"""pycodex's own system skills, copied into ``CODEX_HOME/skills/.pycodex-system`` where the catalog lists
them with scope ``system`` (Codex keeps its own in ``.system``, which pycodex leaves alone).

The copy is refreshed when the bundled set changes: a marker file holds the hash of what was written."""

from __future__ import annotations

import hashlib
import logging
import shutil
from pathlib import Path

__all__ = ["SYSTEM_DIR", "install_system_skills"]

logger = logging.getLogger(__name__)

#: Not Codex's `.system`: a CODEX_HOME shared with Codex keeps both sets intact.
SYSTEM_DIR = (".pycodex-system",)
_BUNDLED = Path(__file__).with_name("system")
_MARKER = ".pycodex-system-skills.marker"


def _bundle_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(_BUNDLED.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(_BUNDLED)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def install_system_skills(codex_home: Path) -> Path | None:
    """Write the bundled skills under ``codex_home``; the folder, or None when it cannot be written."""
    target = codex_home.joinpath("skills", *SYSTEM_DIR)
    try:
        wanted = _bundle_hash()
        marker = target / _MARKER
        if marker.is_file() and marker.read_text().strip() == wanted:
            return target
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(_BUNDLED, target)
        marker.write_text(wanted + "\n")
    except OSError as exc:
        logger.warning("could not install the system skills into %s: %s", target, exc)
        return None
    return target
