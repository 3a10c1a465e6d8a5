"""The conversation thread (seed 001 §6.4, seed 000 §5) and its snapshot (seed 004 session_history).

The seed's message carries only text. A user message may also carry the images attached to it. To
rebuild an LLM request from a checkpoint or a history, an assistant message also records the tool
calls it made and a tool message the call it answers; these fields are optional and appear only on
those roles.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from contracts._base import UtcDatetime, WireModel
from contracts.enums import Role, ToolStatus
from contracts.images import MAX_IMAGES_PER_MESSAGE, ImageContent
from contracts.projection import TaskProjection
from contracts.tools import ToolCall


class ConversationMessage(WireModel):
    message_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    task_id: str | None = None
    step_id: str | None = None
    role: Role
    content: str
    token_count: int | None = Field(default=None, ge=0)
    timestamp: UtcDatetime
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_status: ToolStatus | None = None
    images: list[ImageContent] | None = Field(default=None, max_length=MAX_IMAGES_PER_MESSAGE)
    """Images the user attached to a prompt (:mod:`contracts.images`); only on user messages."""

    @model_validator(mode="after")
    def _tool_fields_fit_the_role(self) -> ConversationMessage:
        if self.images and self.role is not Role.USER:
            raise ValueError("only user messages carry images")
        if self.tool_calls and self.role is not Role.ASSISTANT:
            raise ValueError("only assistant messages carry toolCalls")
        if self.role is Role.TOOL and self.tool_call_id is None:
            raise ValueError("a tool message names the toolCallId it answers")
        if self.role is not Role.TOOL and (self.tool_call_id or self.tool_name or self.tool_status):
            raise ValueError("toolCallId, toolName and toolStatus belong to tool messages")
        return self


class SessionHistory(WireModel):
    """The whole thread after a task, uploaded as the session's one ``session_history`` artifact."""

    workspace_id: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    snapshot_after_task_id: str = Field(min_length=1)
    snapshot_at: UtcDatetime
    messages: list[ConversationMessage]
    projection: TaskProjection | None = None
    """Seed 002 "Task Projection" at the time of the snapshot; absent from older runtimes."""
