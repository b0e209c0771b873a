"""``python -m exec_server``: the exec-server without the ``pycodex`` CLI wiring."""

from pycodex.lean_imports import skip_httpx_cli

skip_httpx_cli()  # before exec_server imports httpx (its http/request method)

from exec_server.cli import main  # noqa: E402

raise SystemExit(main())
