"""Allow ``python -m pycodex``."""

from pycodex.cli import main

raise SystemExit(main())
