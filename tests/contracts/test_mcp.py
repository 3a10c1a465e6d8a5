"""The MCP wire contracts (``contracts.mcp``, seed 003 §9): server configuration, tool-name patterns, the
policy bundle's MCP fields, the events and methods the desktop codes against."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from contracts.events import PAYLOADS, EventType, SessionEvent
from contracts.mcp import (
    McpServerConfig,
    McpServerState,
    WorkspaceMcpConfig,
    is_tool_pattern,
    split_tool_name,
    tool_pattern_matches,
)
from contracts.methods import METHODS, AnswerElicitationParams, GetMcpServersResult
from contracts.policy import PolicyBundle
from contracts.signing import canonical_json
from contracts.validation import validate_json_value

BUNDLE: dict[str, Any] = {
    "sessionId": "sess_1",
    "capabilities": [{"name": "Mcp.Invoke", "allowedToolNames": ["docs/search", "crm/*"]}],
    "llmPolicy": {
        "allowedModels": ["m"],
        "maxInputTokens": 10,
        "maxOutputTokens": 10,
        "maxSessionTokens": 10,
    },
    "expiresAt": "2026-02-21T16:00:00Z",
    "schemaVersion": "1.0",
    "version": "1",
}


def server(**fields: Any) -> McpServerConfig:
    return validate_json_value(McpServerConfig, {"name": "docs", **fields})


def test_the_readmes_example_validates() -> None:
    example = {
        "servers": [
            {"name": "docs", "url": "https://mcp.example.com/docs", "auth": {"type": "oauth"}},
            {
                "name": "tickets",
                "url": "https://tickets.example.com/mcp",
                "auth": {"type": "bearer", "tokenEnv": "TICKETS_TOKEN"},
                "headers": {"X-Team": "platform"},
            },
            {"name": "dev", "url": "http://127.0.0.1:8765/mcp", "allowInsecureLoopback": True},
            {
                "name": "git",
                "transport": "stdio",
                "command": ["uvx", "mcp-server-git"],
                "env": {"GIT_AUTHOR_NAME": "Cowork"},
            },
        ]
    }
    parsed = validate_json_value(WorkspaceMcpConfig, example)
    assert [s.name for s in parsed.servers] == ["docs", "tickets", "dev", "git"]
    assert parsed.servers[1].to_wire()["auth"] == {"type": "bearer", "tokenEnv": "TICKETS_TOKEN"}


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"name": "has/slash", "url": "https://x"}, "name"),
        ({"name": "x" * 33, "url": "https://x"}, "name"),
        ({}, "has a url"),
        ({"url": "ftp://example.com"}, "https://"),
        ({"url": "http://127.0.0.1/mcp"}, "allowInsecureLoopback"),
        ({"url": "https://x", "command": ["node"]}, "stdio servers only"),
        ({"transport": "stdio"}, "has a command"),
        ({"transport": "stdio", "command": [""]}, "program name"),
        ({"transport": "stdio", "command": ["node"], "url": "https://x"}, "for http"),
        ({"transport": "stdio", "command": ["node"], "auth": {"type": "oauth"}}, "no auth"),
        ({"url": "https://x", "auth": {"type": "bearer"}}, "tokenEnv"),
        ({"url": "https://x", "auth": {"type": "none", "tokenEnv": "T"}}, "bearer authorization only"),
        ({"url": "https://x", "auth": {"type": "bearer", "tokenEnv": "A B"}}, "environment variable"),
        ({"url": "https://x", "auth": {"type": "none", "clientId": "c"}}, "oauth authorization only"),
        ({"url": "https://x", "headers": {"Authorization": "Bearer t"}}, "set by the MCP client"),
        ({"url": "https://x", "headers": {"X-A": "a\r\nX-B: b"}}, "control characters"),
        ({"url": "https://x", "token": "t"}, "token"),
    ],
)
def test_unusable_server_entries_are_refused_naming_the_problem(fields: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError) as caught:
        server(**fields)
    assert problem in str(caught.value)


def test_a_workspace_file_with_two_servers_of_one_name_is_refused() -> None:
    entry = {"name": "docs", "url": "https://x"}
    with pytest.raises(ValidationError, match="used more than once"):
        validate_json_value(WorkspaceMcpConfig, {"servers": [entry, entry]})


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("docs/search", "docs/search", True),
        ("docs/*", "docs/search", True),
        ("docs/*", "docs/a/b", True),
        ("docs/search", "docs/search2", False),
        ("docs/*", "doc/search", False),
        ("docs/*", "docsx/search", False),
        ("*/*", "docs/search", False),
        ("docs", "docs", False),
        ("docs/search", "docs/*", False),
    ],
)
def test_tool_patterns_match_one_tool_or_every_tool_of_one_server(
    pattern: str, name: str, matches: bool
) -> None:
    assert tool_pattern_matches(pattern, name) is matches


def test_what_is_and_is_not_a_tool_name() -> None:
    assert split_tool_name("docs/search") == ("docs", "search")
    assert split_tool_name("docs/a/b") == ("docs", "a/b")
    for name in ("docs", "docs/", "/x", "d s/x", "docs/a b", "docs/\x00"):
        assert split_tool_name(name) is None, name
    assert is_tool_pattern("docs/*")
    assert not is_tool_pattern("*")


def test_the_bundle_carries_servers_and_the_local_switch_and_checks_its_patterns() -> None:
    bundle = validate_json_value(
        PolicyBundle,
        {
            **BUNDLE,
            "approvalRules": [{"approvalRuleId": "r", "title": "Ask", "toolNames": ["crm/export"]}],
            "mcpServers": [{"name": "crm", "url": "https://crm.example.com/mcp"}],
            "allowLocalMcpServers": True,
        },
    )
    assert bundle.mcp_servers[0].name == "crm"
    assert bundle.allow_local_mcp_servers is True
    for broken in (
        {"capabilities": [{"name": "Mcp.Invoke", "allowedToolNames": ["docs"]}]},
        {"approvalRules": [{"approvalRuleId": "r", "title": "Ask", "toolNames": ["*"]}]},
        {"mcpServers": [{"name": "a", "url": "https://a"}, {"name": "a", "url": "https://b"}]},
    ):
        with pytest.raises(ValidationError):
            validate_json_value(PolicyBundle, {**BUNDLE, **broken})


def test_a_bundle_without_mcp_keeps_the_canonical_json_it_was_signed_over() -> None:
    # Signed by a Policy Service that predates these fields: the defaults must not enter the bytes.
    bundle = validate_json_value(PolicyBundle, BUNDLE)
    assert b"mcpServers" not in canonical_json(bundle)
    assert b"allowLocalMcpServers" not in canonical_json(bundle)
    assert "mcpServers" not in bundle.to_wire()
    with_servers = validate_json_value(
        PolicyBundle,
        {**BUNDLE, "mcpServers": [{"name": "crm", "url": "https://crm"}], "allowLocalMcpServers": True},
    )
    signed = json.loads(canonical_json(with_servers))
    assert signed["mcpServers"][0]["name"] == "crm"
    assert signed["allowLocalMcpServers"] is True


@pytest.mark.parametrize(
    ("event_type", "payload"),
    [
        (
            "mcp_server_state_changed",
            {
                "name": "docs",
                "url": "https://x",
                "state": "connected",
                "toolCount": 3,
                "protocolVersion": "2025-11-25",
            },
        ),
        (
            "mcp_progress",
            {"serverName": "docs", "toolName": "t", "toolCallId": "c", "progress": 1, "total": 2.5},
        ),
        (
            "elicitation_requested",
            {
                "elicitationId": "e",
                "serverName": "docs",
                "message": "Name?",
                "requestedSchema": {"type": "object"},
            },
        ),
        ("elicitation_resolved", {"elicitationId": "e", "action": "cancel", "timedOut": True}),
        ("mcp_authorization_required", {"serverName": "docs", "authorizationUrl": "https://auth/x"}),
        ("mcp_config_warning", {"message": "bad", "source": "workspace", "path": "/p/.cowork/mcp.json"}),
    ],
)
def test_the_mcp_events_carry_their_payloads(event_type: str, payload: dict[str, Any]) -> None:
    event = SessionEvent.model_validate_json(
        json.dumps(
            {
                "eventId": "ev",
                "eventType": event_type,
                "timestamp": "2026-02-21T15:00:00Z",
                "workspaceId": "w",
                "sessionId": "s",
                "payload": payload,
            }
        )
    )
    assert event.payload == payload
    assert EventType(event_type) in PAYLOADS


def test_the_mcp_methods_are_in_the_method_table() -> None:
    assert METHODS["AnswerElicitation"].params is AnswerElicitationParams
    assert METHODS["GetMcpServers"].result is GetMcpServersResult
    answer = validate_json_value(
        AnswerElicitationParams,
        {"sessionId": "s", "elicitationId": "e", "action": "accept", "content": {"name": "Ada"}},
    )
    assert answer.content == {"name": "Ada"}
    with pytest.raises(ValidationError):
        validate_json_value(
            AnswerElicitationParams, {"sessionId": "s", "elicitationId": "e", "action": "later"}
        )
    state = validate_json_value(McpServerState, {"name": "docs", "state": "unavailable", "lastError": "down"})
    assert GetMcpServersResult(servers=[state]).to_wire() == {
        "servers": [{"name": "docs", "state": "unavailable", "toolCount": 0, "lastError": "down"}]
    }
