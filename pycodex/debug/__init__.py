"""Local-debugging subcommands: ``threads``, ``doctor``, ``config show`` (each imported lazily by the CLI)."""
