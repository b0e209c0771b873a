"""``python -m exec_server``: the exec-server without the ``pycodex`` CLI wiring."""

from pycodex.lean_imports import skip_httpx_cli

skip_httpx_cli()  # before exec_server imports httpx (its http/request method)

try:
    from exec_server.cli import main

    code = main()
except KeyboardInterrupt:  # Ctrl-C while the command is still being imported or starting: no traceback
    code = 130

raise SystemExit(code)
