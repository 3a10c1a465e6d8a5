"""MCP events as the runtime sends them (``SessionEvent`` params and their payloads)."""

from __future__ import annotations

from typing import Any

SERVER = "tickets"
"""The MCP server the tests' requests come from (and the live tests' policy allows)."""

CONTACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "default": "Ada"},
        "email": {"type": "string", "title": "Email", "format": "email"},
        "seats": {"type": "integer", "title": "Seats", "minimum": 1, "maximum": 8, "default": 2},
        "ratio": {"type": "number", "title": "Share", "minimum": 0, "maximum": 1},
        "updates": {"type": "boolean", "title": "Send updates"},
        "region": {
            "type": "string",
            "title": "Region",
            "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "United States"}],
            "default": "eu",
        },
        "topics": {"type": "array", "title": "Topics", "items": {"type": "string", "enum": ["a", "b", "c"]}},
    },
    "required": ["name", "email"],
}


def elicitation(
    elicitation_id: str = "eli_1",
    schema: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """An ``elicitation_requested`` payload."""
    base: dict[str, Any] = {
        "elicitationId": elicitation_id,
        "serverName": "tickets",
        "toolName": "book",
        "message": "How many seats should I book, and where should the tickets go?",
        "requestedSchema": CONTACT_SCHEMA if schema is None else schema,
    }
    base.update(fields)
    return base


def event(
    kind: str, payload: dict[str, Any], *, session: str = "sess_1", step: str = "step_1"
) -> dict[str, Any]:
    return {
        "eventId": f"evt_{kind}",
        "eventType": kind,
        "timestamp": "2026-01-01T00:00:00Z",
        "workspaceId": "ws_1",
        "sessionId": session,
        "taskId": "task_1",
        "stepId": step,
        "payload": payload,
    }


def server_state(name: str = "tickets", state: str = "connected", **fields: Any) -> dict[str, Any]:
    """An ``McpServerState`` (the ``mcp_server_state_changed`` payload, a ``GetMcpServers`` entry)."""
    base: dict[str, Any] = {
        "name": name,
        "url": f"https://{name}.example.com/mcp",
        "state": state,
        "toolCount": 3,
        "protocolVersion": "2025-11-25",
        "transport": "http",
        "source": "workspace",
    }
    base.update(fields)
    return base
