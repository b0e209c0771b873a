"""Record the Codex reference material the tests read into ``tests/data/``.

The test suite must run from a bare clone (no npm, no ``../shared``), so everything it compares against is
checked in here, recorded by this script from the real Codex build:

* ``tests/data/transcripts/``: the captured wire transcripts (copied from ``--transcripts``).
* ``tests/data/schema/{stable,experimental}.schemas.json.gz``: the protocol bundle that
  ``codex app-server generate-json-schema [--experimental]`` writes, minified and gzipped (the per-type
  files it also writes are slices of the same bundle, so they are not kept).
* ``tests/data/MANIFEST.json``: the Codex version and a sha256 per file, so a test can tell a hand-edited
  or half-recorded snapshot from a real one.

Run it again after upgrading the reference Codex (``npm install`` of a new version), then review the diff:

    python scripts/record_reference.py [--codex-bin PATH] [--transcripts DIR]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = REPO_ROOT / "tests" / "data"
CODEX_BIN_REL = Path("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
BUNDLE_FILE = "codex_app_server_protocol.schemas.json"
SCHEMA_FLAVOURS = {"stable": [], "experimental": ["--experimental"]}
EXPECTED_VERSION = "0.169.0"
TIMEOUT_S = 60
OTHER_RECORDERS = ("frontends/", "mcp/")


def _default_transcripts() -> Path:
    shared = os.environ.get("PYCODEX_SHARED_DIR") or REPO_ROOT.parent / "shared"
    return Path(shared) / "reference" / "transcripts"


def _codex_version(codex_bin: Path) -> str:
    proc = subprocess.run([str(codex_bin), "--version"], capture_output=True, text=True, timeout=TIMEOUT_S,
                          check=True)
    return proc.stdout.strip()


def _write_gzip_json(path: Path, document: object) -> None:
    raw = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    # mtime=0 keeps the bytes reproducible, so re-recording an unchanged schema leaves git clean.
    path.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))


def record_schema(codex_bin: Path, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="pycodex-schema-") as tmp:
        for flavour, flags in SCHEMA_FLAVOURS.items():
            target = Path(tmp) / flavour
            argv = [str(codex_bin), "app-server", "generate-json-schema", "--out", str(target), *flags]
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
                                  env={**os.environ, "RUST_LOG": "off"})
            if proc.returncode != 0 or not (target / BUNDLE_FILE).is_file():
                raise SystemExit(f"schema generation failed (rc={proc.returncode}): {proc.stderr.strip()[:500]}")
            dest = out_dir / f"{flavour}.schemas.json.gz"
            _write_gzip_json(dest, json.loads((target / BUNDLE_FILE).read_text()))
            written.append(dest)
    return written


def record_transcripts(source: Path, out_dir: Path) -> list[Path]:
    files = sorted(p for p in source.iterdir() if p.is_file() and p.suffix in {".jsonl", ".json"})
    if not files:
        raise SystemExit(f"no transcripts in {source}")
    if out_dir.exists():
        shutil.rmtree(out_dir)  # a transcript dropped upstream must not linger here
    out_dir.mkdir(parents=True)
    for path in files:
        shutil.copyfile(path, out_dir / path.name)
    return [out_dir / p.name for p in files]


def write_manifest(data_dir: Path, codex_version: str, files: list[Path]) -> Path:
    path = data_dir / "MANIFEST.json"
    # Keep the entries of files other recorders own (scripts/record_config_read.py: frontends/).
    kept: dict[str, str] = {}
    if path.is_file():
        previous = json.loads(path.read_text()).get("sha256", {})
        kept = {name: digest for name, digest in previous.items()
                if name.startswith(OTHER_RECORDERS) and (data_dir / name).is_file()}
    manifest = {
        "codex_version": codex_version,
        "recorded_by": "scripts/record_reference.py",
        "sha256": kept | {
            p.relative_to(data_dir).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(files)
        },
    }
    path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    env_bin = os.environ.get("PYCODEX_CODEX_BIN")
    parser.add_argument("--codex-bin", type=Path, default=Path(env_bin) if env_bin else REPO_ROOT / CODEX_BIN_REL)
    parser.add_argument("--transcripts", type=Path, default=_default_transcripts())
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)
    if not args.codex_bin.is_file():
        print(f"record_reference: Codex binary not found at {args.codex_bin} (npm install)", file=sys.stderr)
        return 1
    if not args.transcripts.is_dir():
        print(f"record_reference: transcripts not found at {args.transcripts}", file=sys.stderr)
        return 1
    version = _codex_version(args.codex_bin)
    if EXPECTED_VERSION not in version:
        print(f"record_reference: expected Codex {EXPECTED_VERSION}, the binary says {version!r}", file=sys.stderr)
        return 1
    files = record_transcripts(args.transcripts, args.out / "transcripts")
    files += record_schema(args.codex_bin, args.out / "schema")
    manifest = write_manifest(args.out, version, files)
    total = sum(p.stat().st_size for p in files)
    print(f"recorded {len(files)} files ({total / 1e6:.2f} MB) from {version} into {args.out}; see {manifest.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
