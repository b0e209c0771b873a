"""`pycodex mcp ...` (manage `[mcp_servers.NAME]` in config.toml) and `pycodex mcp-server` (pycodex as an MCP
server). Both mirror the `codex` commands of the same names; each module is imported only by its own subcommand."""
