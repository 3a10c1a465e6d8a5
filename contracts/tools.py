"""What the agent host and the tool runtime hand each other (seed 001 §6.2, seed 003 §3–§7).

These cross an in-process boundary (the ``ToolRouter`` protocol), not a socket; they are still
validated models so that both sides agree on one shape and bad arguments fail loudly.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, Field, model_validator

from contracts._base import WireModel
from contracts.enums import ArtifactType, Capability, ToolStatus
from contracts.errors import ErrorCode


class ToolScope(WireModel):
    """Limits from the policy grant that the tool itself applies (seed 003 §4.1 step 3, §4.4)."""

    workspace_root: str | None = None
    max_file_size_bytes: int | None = Field(default=None, ge=0)
    max_output_bytes: int | None = Field(default=None, ge=1)


class ReadScope(Protocol):
    """The policy's File.Read paths, applied by the tools that list or search many files.

    The policy checks the one path a call names; ListDirectory, Glob and Grep then show or read the
    files below it. The agent host passes one of these per call through ``ToolRouter.execute`` so
    that each of those files passes the same rule as a ReadFile of it would (blocked entries win,
    whole-component matching); the tool runtime cannot import the policy itself.
    """

    def allows(self, path: str) -> bool:
        """Whether a ReadFile of ``path`` (absolute, symlinks resolved) would be allowed."""
        ...

    def allows_all_under(self, directory: str) -> bool:
        """True when every path under ``directory`` (resolved) is allowed, so none needs asking."""
        ...


class ToolRequest(WireModel):
    tool_name: str = Field(min_length=1)
    arguments: dict[str, Any]
    session_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    step_id: str = Field(min_length=1)
    capability: Capability | None = None
    tool_call_id: str | None = None
    scope: ToolScope | None = None


class ToolError(WireModel):
    code: ErrorCode
    message: str = Field(min_length=1)


class ToolArtifact(WireModel):
    """Output kept whole for the host to upload to the Workspace Service (seed 000 §7.5, 003 §7.2).

    Large content lives in a file (``dataPath``) so that a command printing gigabytes is never held in
    memory; small content may be inline (``text``). Exactly one of the two is set.
    """

    artifact_type: ArtifactType
    artifact_name: str = Field(min_length=1)
    content_type: str = "text/plain"
    data_path: str | None = None
    text: str | None = None
    size_bytes: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_source(self) -> ToolArtifact:
        if (self.data_path is None) == (self.text is None):
            raise ValueError("an artifact has either dataPath or text, not both or neither")
        return self


class ToolResult(WireModel):
    tool_name: str = Field(min_length=1)
    session_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    step_id: str = Field(min_length=1)
    status: ToolStatus
    output_text: str | None = None
    artifact_uris: list[str] = Field(default_factory=list)
    error: ToolError | None = None
    tool_call_id: str | None = None
    artifacts: list[ToolArtifact] = Field(default_factory=list)

    @classmethod
    def answering(cls, request: ToolRequest, status: ToolStatus, **fields: Any) -> ToolResult:
        """The result of ``request``: its tool name and ID chain, with ``status`` and ``fields``."""
        return cls(
            tool_name=request.tool_name,
            session_id=request.session_id,
            task_id=request.task_id,
            step_id=request.step_id,
            tool_call_id=request.tool_call_id,
            status=status,
            **fields,
        )

    @model_validator(mode="after")
    def _error_matches_status(self) -> ToolResult:
        if self.status is ToolStatus.SUCCEEDED and self.error is not None:
            raise ValueError("a succeeded tool result carries no error")
        if self.status is ToolStatus.FAILED and self.error is None:
            raise ValueError("a failed tool result says why in error")
        return self


class ToolDefinition(WireModel):
    """A tool as described to the LLM (seed 003 §5)."""

    tool_name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    input_schema: dict[str, Any]

    @classmethod
    def for_arguments(cls, tool_name: str, description: str, arguments: type[BaseModel]) -> ToolDefinition:
        """A tool whose input schema is ``arguments``' (by alias, as validated): one way for the tool
        runtime's built-in tools and the Backend Tool Service's tools to describe themselves."""
        schema = arguments.model_json_schema(by_alias=True, mode="validation")
        return cls(tool_name=tool_name, description=description, input_schema=_without_titles(schema))


def _without_titles(schema: Any) -> Any:
    # Titles pydantic derives from class and field names add tokens to every LLM request and say
    # nothing the property names and descriptions do not.
    if isinstance(schema, dict):
        return {
            key: _without_titles(value)
            for key, value in schema.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [_without_titles(item) for item in schema]
    return schema


class ToolCall(WireModel):
    """One tool call the model asked for, as recorded on the assistant's message."""

    tool_call_id: str = Field(min_length=1)
    tool_name: str = Field(min_length=1)
    arguments: dict[str, Any]
