"""``python -m exec_server``: the exec-server without the ``pycodex`` CLI wiring."""

from exec_server.cli import main

raise SystemExit(main())
