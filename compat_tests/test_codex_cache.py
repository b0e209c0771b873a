"""A Codex release in the compat cache is its platform folder only, made by a fake ``npm`` (no network).

The fake lays out what ``npm install @openai/codex@VERSION`` lays out: the launcher package, and the
platform package whose ``vendor/TRIPLE`` folder holds the binary, its resources and the voice models.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from compat_tests.support import codex_install
from compat_tests.support.builds import resolve_build

FAKE_NPM = r"""#!/bin/sh
# npm install ... --prefix DIR @openai/codex@VERSION
prefix=""; pkg=""
while [ $# -gt 0 ]; do
  case "$1" in --prefix) prefix="$2"; shift;; @openai/*) pkg="$1";; esac; shift
done
version="${pkg##*@}"
echo "$prefix" >> "$(dirname "$0")/calls"
top="$prefix/node_modules/@openai/codex"; mkdir -p "$top"
echo "{\"version\": \"$version\"}" > "$top/package.json"
vendor="$prefix/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl"
mkdir -p "$vendor/bin" "$vendor/codex-path" "$vendor/codex-resources/voice/lib"
printf '#!/bin/sh\necho "codex-cli %s"\n' "$version" > "$vendor/bin/codex"; chmod +x "$vendor/bin/codex"
echo rg > "$vendor/codex-path/rg"; echo bwrap > "$vendor/codex-resources/bwrap"
echo model > "$vendor/codex-resources/voice/lib/model.bin"
echo "{\"version\": \"$version\", \"entrypoint\": \"bin/codex\"}" > "$vendor/codex-package.json"
"""


@pytest.fixture
def fake_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if os.uname().machine not in ("x86_64", "amd64"):
        pytest.skip("the fake npm lays out the x64 platform package")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYCODEX_COMPAT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("PYCODEX_COMPAT_RESOLVED", raising=False)
    return bin_dir / "calls"


def test_the_cache_keeps_the_platform_folder_and_drops_the_npm_tree_and_voice(
    tmp_path: Path, fake_npm: Path
) -> None:
    build = resolve_build("codex@9.9.1")
    entry = tmp_path / "cache" / "codex-9.9.1"
    assert build.argv == (str(entry / "bin" / "codex"),)
    out = subprocess.run([*build.argv], capture_output=True, text=True, timeout=30, check=True).stdout
    assert out.strip() == "codex-cli 9.9.1"
    assert sorted(p.name for p in entry.iterdir()) == ["bin", "codex-package.json", "codex-path", "codex-resources"]
    assert (entry / "codex-resources" / "bwrap").is_file() and (entry / "codex-path" / "rg").is_file()
    assert not (entry / "codex-resources" / "voice").exists()
    assert not (entry / "node_modules").exists()
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["codex-9.9.1", "codex-9.9.1.lock"]
    assert codex_install.installed_version(entry) == "9.9.1"


def test_a_cached_release_is_not_installed_again(tmp_path: Path, fake_npm: Path) -> None:
    first = resolve_build("codex@9.9.2")
    assert resolve_build("codex@9.9.2").argv == first.argv
    assert len(fake_npm.read_text().splitlines()) == 1


def test_an_entry_in_the_old_whole_tree_layout_is_replaced(tmp_path: Path, fake_npm: Path) -> None:
    entry = tmp_path / "cache" / "codex-9.9.3"
    old = entry / codex_install.npm_tree_binary(Path("."))
    old.parent.mkdir(parents=True)
    old.write_text("#!/bin/sh\n")
    old.chmod(0o755)
    build = resolve_build("codex@9.9.3")
    assert build.argv == (str(entry / "bin" / "codex"),)
    assert not (entry / "node_modules").exists()
    assert json.loads((entry / "codex-package.json").read_text())["version"] == "9.9.3"
