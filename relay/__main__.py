"""``python -m relay``: the same as ``pycodex relay``."""

import sys

from pycodex.lean_imports import skip_httpx_cli

skip_httpx_cli()  # before the relay's imports reach httpx

from relay.cli import main  # noqa: E402

sys.exit(main())
