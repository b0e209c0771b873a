"""``pycodex acp``: an Agent Client Protocol agent over stdio (docs/acp.md).

The agent runs pycodex's own app-server in this process and speaks its v2 protocol to it over the in-memory
edge (``bridge``), translating v2 to ACP as the Node adapter ``@agentclientprotocol/codex-acp`` does for
``codex app-server``; so an ACP session is an ordinary stored thread (its id is the thread id). The ACP side is
the maintained Python SDK (``agent-client-protocol``, import name ``acp``).
"""
