"""``python -m relay``: the same as ``pycodex relay``."""

import sys

from relay.cli import main

sys.exit(main())
