"""MCP servers from `[mcp_servers.NAME]`: config, connections (official `mcp` SDK), model tool specs,
approval decisions, the app-server wire models and the per-thread service behind the mcpServer/*
requests. Not wired into threads or handlers yet.

servers = load_mcp_servers(path, table, text)                 # config.McpServers
manager = McpConnectionManager(servers.servers, on_status=...)
manager.start(); await manager.wait_ready()
request["tools"] += manager.tool_specs()                        # `namespace` tools mcp__<server>
route = manager.routes().resolve(call["namespace"], call["name"])
outcome = decide(policy, config.approval_mode(tool), tool.annotations)
result = await manager.call_tool(route.server, route.tool, args)
"""

from app_server.mcp.approval import ApprovalOutcome, Decision, decide, requires_approval
from app_server.mcp.client import McpCallError, McpConnection
from app_server.mcp.config import McpServerConfig, McpServers, check_mcp_servers, load_mcp_servers
from app_server.mcp.manager import McpConnectionManager, ReloadPlan, ServerSnapshot, plan_reload
from app_server.mcp.service import McpRequestError, McpService

__all__ = [
    "ApprovalOutcome",
    "Decision",
    "McpCallError",
    "McpConnection",
    "McpConnectionManager",
    "McpRequestError",
    "McpServerConfig",
    "McpServers",
    "McpService",
    "ReloadPlan",
    "ServerSnapshot",
    "check_mcp_servers",
    "decide",
    "load_mcp_servers",
    "plan_reload",
    "requires_approval",
]
