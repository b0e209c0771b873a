"""``pycodex compat``: hand over to the compat harness in this source checkout (compat_tests/runner.py).

The harness runs builds as black boxes under pytest, so it lives beside the tests rather than in the
package; an editable install (``pip install -e ".[compat]"``) has it one directory above this file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["run_compat"]

CHECKOUT = Path(__file__).resolve().parents[1]


def run_compat(argv: Sequence[str]) -> int:
    if not (CHECKOUT / "compat_tests" / "runner.py").is_file():
        print(
            "pycodex compat: needs a source checkout installed with pip install -e '.[compat]'",
            file=sys.stderr,
        )
        return 2
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CHECKOUT), env.get("PYTHONPATH")]))
    try:
        # No timeout: the runner bounds its own pytest run.
        return subprocess.run(
            [sys.executable, "-m", "compat_tests.runner", *argv], env=env, check=False
        ).returncode
    except KeyboardInterrupt:
        return 130
