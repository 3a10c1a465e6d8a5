"""Wire contracts shared by every part of Cowork: the desktop, the agent runtime and the backend.

Modules: ``errors`` (the error shape and its codes), ``jsonrpc`` (envelopes), ``methods`` (the
JSON-RPC methods), ``events`` (``SessionEvent`` and the audit/telemetry envelope; ``observability``:
the featureFlags that switch audit and telemetry, and the envelope-only payloads), ``tools``,
``messages``, ``approvals``, ``checkpoint``, ``policy``, ``mcp`` (MCP servers: configuration, state,
tool-name patterns; ``mcp_boundary``: the runtime's in-process MCP interfaces), ``enums``,
``validation``, ``ipc`` (framing, handshake and clients of the desktop ⇄ runtime wire), ``rest`` (the
backend services' REST payloads) and ``signing`` (canonical JSON and Ed25519 signatures of policy
bundles). JSON Schema files of the models are in ``contracts/schemas``.

The names below are importable from ``contracts`` itself; each is loaded on first use, so importing
one part of the package does not pay for building every model.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "ErrorCode": "errors",
    "ErrorShape": "errors",
    "CoworkError": "errors",
    "RpcErrorCode": "jsonrpc",
    "METHODS": "methods",
    "SESSION_EVENT": "methods",
    "MethodSpec": "methods",
    "CreateSessionParams": "methods",
    "CreateSessionResult": "methods",
    "StartTaskParams": "methods",
    "StartTaskResult": "methods",
    "TaskOptions": "methods",
    "CancelTaskParams": "methods",
    "CancelTaskResult": "methods",
    "ResumeSessionParams": "methods",
    "ResumeSessionResult": "methods",
    "GetSessionStateParams": "methods",
    "SessionState": "methods",
    "TaskState": "methods",
    "GetPatchPreviewParams": "methods",
    "PatchPreview": "methods",
    "PatchFile": "methods",
    "RevertChangesParams": "methods",
    "RevertChangesResult": "methods",
    "RevertedFile": "methods",
    "ApproveActionParams": "methods",
    "ApproveActionResult": "methods",
    "ShutdownParams": "methods",
    "ShutdownResult": "methods",
    "AnswerElicitationParams": "methods",
    "AnswerElicitationResult": "methods",
    "GetMcpServersParams": "methods",
    "GetMcpServersResult": "methods",
    "McpServerConfig": "mcp",
    "McpServerState": "mcp",
    "WorkspaceMcpConfig": "mcp",
    "EventType": "events",
    "SessionEvent": "events",
    "EventEnvelope": "events",
    "PAYLOADS": "events",
    "ToolRequest": "tools",
    "ToolResult": "tools",
    "ToolDefinition": "tools",
    "ToolCall": "tools",
    "ToolArtifact": "tools",
    "ToolScope": "tools",
    "ToolError": "tools",
    "ConversationMessage": "messages",
    "SessionHistory": "messages",
    "ApprovalRequest": "approvals",
    "ApprovalDecisionRecord": "approvals",
    "ApprovalDetails": "approvals",
    "Checkpoint": "checkpoint",
    "CheckpointTask": "checkpoint",
    "PolicyBundle": "policy",
    "CapabilityGrant": "policy",
    "ApprovalRule": "policy",
    "LlmPolicy": "policy",
    "RedactionPolicy": "policy",
    "RedactionPattern": "policy",
    "validate_json_value": "validation",
    "invalid_request": "validation",
    # The backend's REST payloads (contracts.rest) and policy bundle signatures (contracts.signing).
    "CreateSessionRequest": "rest.sessions",
    "CreateSessionResponse": "rest.sessions",
    "ComponentCompatibility": "rest.sessions",
    "ResumeSessionRequest": "rest.sessions",
    "ResumeSessionResponse": "rest.sessions",
    "CancelSessionRequest": "rest.sessions",
    "SessionResource": "rest.sessions",
    "SessionList": "rest.sessions",
    "PolicyKey": "rest.policies",
    "PolicyKeySet": "rest.policies",
    "IssueBundleRequest": "rest.policies",
    "IssuedBundle": "rest.policies",
    "ResolveWorkspaceRequest": "rest.workspaces",
    "WorkspaceResource": "rest.workspaces",
    "WorkspaceList": "rest.workspaces",
    "ArtifactUploadRequest": "rest.workspaces",
    "ArtifactUploadResponse": "rest.workspaces",
    "ArtifactMetadata": "rest.workspaces",
    "ArtifactList": "rest.workspaces",
    "ApprovalResource": "rest.approvals",
    "ApprovalList": "rest.approvals",
    "AuditReceipt": "rest.observability",
    "AuditReceipts": "rest.observability",
    "TelemetryReceipt": "rest.observability",
    "canonical_json": "signing",
    "sign_bundle": "signing",
    "verify_bundle": "signing",
    "key_id": "signing",
    "public_key_from_text": "signing",
    "public_key_to_text": "signing",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'contracts' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"contracts.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
