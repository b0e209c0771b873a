"""``python -m exec_server``: the exec-server without the ``pycodex`` CLI wiring."""

try:
    from exec_server.cli import main

    code = main()
except KeyboardInterrupt:  # Ctrl-C while the command is still being imported or starting: no traceback
    code = 130

raise SystemExit(code)
