"""Every public module, class and function of app_server/protocol has a docstring.

Left out: the modules other work owns (``items.py``, ``methods.py``, ``method_names.py``, ``schema_export.py``).
A protocol model's docstring is its description in the exported JSON schema, so it says what the object is on
the wire (and Codex's type name where ours differs).
"""

from __future__ import annotations

from tests.support.docstrings import missing_docstrings
from tests.support.paths import REPO_ROOT

NOT_OURS = frozenset({"items.py", "methods.py", "method_names.py", "schema_export.py"})


def test_protocol_modules_have_docstrings() -> None:
    files = sorted(p for p in (REPO_ROOT / "app_server" / "protocol").glob("*.py") if p.name not in NOT_OURS)
    assert len(files) >= 20  # the package, not an empty glob
    missing = missing_docstrings(*(str(p.relative_to(REPO_ROOT)) for p in files))
    assert not missing, "\n".join(missing)
