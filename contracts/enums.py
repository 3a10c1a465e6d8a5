"""The closed vocabularies of the wire: roles, states, modes, capabilities and tool names."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType


class Role(StrEnum):
    """Who wrote a message in the thread (seed 001 §6.4)."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class SessionStatus(StrEnum):
    """The session-level state machine (seed 000 §3.3)."""

    SESSION_CREATED = "SESSION_CREATED"
    SESSION_RUNNING = "SESSION_RUNNING"
    SESSION_PAUSED = "SESSION_PAUSED"
    SESSION_COMPLETED = "SESSION_COMPLETED"
    SESSION_FAILED = "SESSION_FAILED"
    SESSION_CANCELLED = "SESSION_CANCELLED"


class TaskStatus(StrEnum):
    """The task-level state machine inside a running session (seed 000 §3.3)."""

    IDLE = "IDLE"
    TASK_RUNNING = "TASK_RUNNING"
    WAITING_FOR_LLM = "WAITING_FOR_LLM"
    PROCESSING_RESPONSE = "PROCESSING_RESPONSE"
    CHECKING_POLICY = "CHECKING_POLICY"
    WAITING_FOR_APPROVAL = "WAITING_FOR_APPROVAL"
    EXECUTING_TOOLS = "EXECUTING_TOOLS"
    TASK_COMPLETED = "TASK_COMPLETED"
    TASK_FAILED = "TASK_FAILED"
    TASK_CANCELLED = "TASK_CANCELLED"


class CheckpointTaskStatus(StrEnum):
    """A task's status as the domain model and the checkpoint record it (seed 004 Task, 000 §9.2)."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class ApprovalMode(StrEnum):
    """When the user is asked before a tool runs (seed 004 Task.approvalMode)."""

    ALWAYS = "always"
    ON_RISKY_ACTIONS = "on_risky_actions"
    NEVER = "never"


class ApprovalDecision(StrEnum):
    APPROVED = "approved"
    DENIED = "denied"


class ApprovalScope(StrEnum):
    """How far an approval reaches: this one call, or the same action for the rest of the session."""

    ONCE = "once"
    SESSION = "session"


class RiskLevel(StrEnum):
    """Shown on an approval request (seed 000 §8.5)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class ExecutionEnvironment(StrEnum):
    """Where the agent runs (seed 004 Session)."""

    DESKTOP = "desktop"
    CLOUD_SANDBOX = "cloud_sandbox"


class WorkspaceScope(StrEnum):
    """Where the source files live and whether the workspace is reused (seed 004 Workspace)."""

    LOCAL = "local"
    GENERAL = "general"
    CLOUD = "cloud"


class OsFamily(StrEnum):
    MACOS = "macOS"
    WINDOWS = "Windows"
    LINUX = "Linux"


class Capability(StrEnum):
    """What a policy bundle can grant (seed 001 §5)."""

    FILE_READ = "File.Read"
    FILE_WRITE = "File.Write"
    FILE_DELETE = "File.Delete"
    SHELL_EXEC = "Shell.Exec"
    NETWORK_HTTP = "Network.Http"
    WORKSPACE_UPLOAD = "Workspace.Upload"
    BACKEND_TOOL_INVOKE = "BackendTool.Invoke"
    LLM_CALL = "LLM.Call"
    MCP_INVOKE = "Mcp.Invoke"
    """Call a tool of an MCP server (seed 003 §9.4). Scope: ``allowedToolNames``, entries
    ``"server/tool"`` or ``"server/*"``; only the tools matched there are registered. See
    :mod:`contracts.mcp`."""


class ToolName(StrEnum):
    """The built-in tools, by the names the LLM uses (seed 000 §7.2, seed 003 §5)."""

    READ_FILE = "ReadFile"
    WRITE_FILE = "WriteFile"
    DELETE_FILE = "DeleteFile"
    EDIT_FILE = "EditFile"
    LIST_DIRECTORY = "ListDirectory"
    GLOB = "Glob"
    GREP = "Grep"
    RUN_COMMAND = "RunCommand"
    HTTP_REQUEST = "HttpRequest"
    UPLOAD_ARTIFACT = "UploadArtifact"


TOOL_CAPABILITIES: Mapping[ToolName, Capability] = MappingProxyType(
    {
        ToolName.READ_FILE: Capability.FILE_READ,
        ToolName.WRITE_FILE: Capability.FILE_WRITE,
        ToolName.DELETE_FILE: Capability.FILE_DELETE,
        # Changes part of a file: a write like WriteFile, under the same approvals and patch preview.
        ToolName.EDIT_FILE: Capability.FILE_WRITE,
        # Look around the project: reads, under the policy's File.Read paths for every entry shown.
        ToolName.LIST_DIRECTORY: Capability.FILE_READ,
        ToolName.GLOB: Capability.FILE_READ,
        ToolName.GREP: Capability.FILE_READ,
        ToolName.RUN_COMMAND: Capability.SHELL_EXEC,
        ToolName.HTTP_REQUEST: Capability.NETWORK_HTTP,
        ToolName.UPLOAD_ARTIFACT: Capability.WORKSPACE_UPLOAD,
    }
)
"""Tool → capability (seed 000 §7.2). Remote tools map to ``BackendTool.Invoke`` by allowlist; MCP
tools (named ``"server/tool"``) map to ``Mcp.Invoke`` by the same grant's ``allowedToolNames``."""


class StopReason(StrEnum):
    """Why the model stopped, normalised across gateway dialects (seed 000 §4.4)."""

    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    TOOL_USE = "tool_use"


class CompatibilityStatus(StrEnum):
    """The Session Service's verdict on the client's versions (seed 000 §3.2 step 4)."""

    COMPATIBLE = "compatible"
    DEPRECATED = "deprecated"
    INCOMPATIBLE = "incompatible"


class ToolStatus(StrEnum):
    """How a tool call ended (seed 001 §6.2)."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DENIED = "denied"


class ArtifactType(StrEnum):
    SESSION_HISTORY = "session_history"
    TOOL_OUTPUT = "tool_output"
    FILE_DIFF = "file_diff"
    ATTACHMENT = "attachment"
    """An image the user attached to a prompt, stored apart from the history that names it."""


class PatchFileStatus(StrEnum):
    CREATED = "created"
    MODIFIED = "modified"
    DELETED = "deleted"


class Component(StrEnum):
    """Who emitted an audit or telemetry event (seed 001 §6.3)."""

    DESKTOP_APP = "DesktopApp"
    LOCAL_AGENT_HOST = "LocalAgentHost"
    LOCAL_TOOL_RUNTIME = "LocalToolRuntime"
    LOCAL_POLICY_ENFORCER = "LocalPolicyEnforcer"
    LOCAL_APPROVAL_UI = "LocalApprovalUI"
    SESSION_SERVICE = "SessionService"
    LLM_GATEWAY = "LLMGateway"
    POLICY_SERVICE = "PolicyService"
    APPROVAL_SERVICE = "ApprovalService"
    WORKSPACE_SERVICE = "WorkspaceService"
    AUDIT_SERVICE = "AuditService"
    TELEMETRY_SERVICE = "TelemetryService"
    BACKEND_TOOL_SERVICE = "BackendToolService"


class BoundedContext(StrEnum):
    """The bounded contexts of seed 001 §11."""

    AGENT_EXECUTION = "AgentExecution"
    TOOL_EXECUTION = "ToolExecution"
    SESSION_COORDINATION = "SessionCoordination"
    POLICY_GUARDRAILS = "PolicyGuardrails"
    WORKSPACE_ARTIFACTS = "WorkspaceArtifacts"
    APPROVAL = "Approval"
    OBSERVABILITY_AUDIT = "ObservabilityAudit"
    OPERATIONS = "Operations"
    SHARED = "Shared"


class Severity(StrEnum):
    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"
