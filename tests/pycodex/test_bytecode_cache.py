"""The run compiles the product once (tests/conftest.py ``compile_product``), so the processes the tests
start load bytecode instead of compiling every module again, even where PYTHONDONTWRITEBYTECODE is set."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

from tests.conftest import PRODUCT_PACKAGES
from tests.support.paths import REPO_ROOT


def _stale(source: Path) -> bool:
    cached = Path(importlib.util.cache_from_source(str(source)))
    if not cached.is_file():
        return True
    header = cached.read_bytes()[:16]
    flags, mtime, size = struct.unpack("<III", header[4:16])
    # A timestamp pyc (flags 0) records its source's mtime and size: the importer uses it only if both match.
    stat = source.stat()
    return header[:4] != importlib.util.MAGIC_NUMBER or flags != 0 or (mtime, size) != (
        int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)


def test_every_product_module_has_current_bytecode() -> None:
    sources = [path for package in PRODUCT_PACKAGES for path in sorted((REPO_ROOT / package).rglob("*.py"))]
    assert len(sources) > 300  # the walk found the product
    assert [str(path.relative_to(REPO_ROOT)) for path in sources if _stale(path)] == []
