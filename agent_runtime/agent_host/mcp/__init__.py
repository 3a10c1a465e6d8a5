"""The agent host's side of MCP servers (seed 003 §9): the link between a session and the tool
runtime's MCP client, elicitation forwarded to the user, the command policy for local servers.

Imported only by sessions that have MCP servers configured (``configured.mcp_configured``), so that a
runtime without any pays nothing for them at start-up.
"""
