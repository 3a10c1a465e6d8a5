"""MCP client (seed 003 §9): remote tool servers over streamable HTTP, local ones over stdio.

Nothing is imported here, so that importing a module of this package costs only that module: the
runtime loads MCP only when a server is configured. The modules:

``session``       ``McpSession`` — one streamable-HTTP session (initialize, tools, calls, close)
``stdio``         ``StdioMcpSession`` — the same over a local program's stdin/stdout
``protocol``      what both share: lifecycle, timeouts, cancellation, progress, the server's requests
``elicitation``   form-mode elicitation: requests, answers, the form's fields, the headless rule
``manifest``      tool manifests checked at ingress; ``WireNames`` for the LLM wire
``results``       tool results translated (text, attachments, structured content checked)
``availability``  ``ServerHealth``: unavailable after repeated failures, retried after a backoff
``errors``        the ``McpError`` tree
``probe``         ``cowork-agent-runtime mcp probe``: check a server from the command line
``oauth``         MCP authorization (OAuth 2.1) as an ``httpx.Auth``
"""
