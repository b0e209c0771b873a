"""MCP servers from `[mcp_servers.NAME]`: config, connections (official `mcp` SDK), model tool specs,
approval decisions, the app-server wire models and the per-thread service behind the mcpServer/*
requests. Wired in by app.py (McpService), config/loader.py, tools/mcp_tool.py and handlers/mcp.py.

servers = load_mcp_servers(path, table, text)                 # config.McpServers
manager = McpConnectionManager(servers.servers, on_status=...)
manager.start(); await manager.wait_ready()
request["tools"] += manager.tool_specs()                        # `namespace` tools mcp__<server>
route = manager.routes().resolve(call["namespace"], call["name"])
outcome = decide(policy, config.approval_mode(tool), tool.annotations)
result = await manager.call_tool(route.server, route.tool, args)
"""

# No re-exports: importing app_server.config.mcp_servers (the config loader does) must not load the MCP SDK.
