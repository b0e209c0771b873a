"""Allow ``python -m pycodex``."""

try:
    from pycodex.cli import main

    code = main()
except KeyboardInterrupt:  # Ctrl-C while the command is still being imported or starting: no traceback
    code = 130

raise SystemExit(code)
