"""The file tools (seed 003 §4.1–§4.3): ReadFile, WriteFile, DeleteFile."""

from __future__ import annotations

from agent_runtime.tool_runtime.tools.file.delete import DeleteFile, DeleteFileArguments
from agent_runtime.tool_runtime.tools.file.read import ReadFile, ReadFileArguments
from agent_runtime.tool_runtime.tools.file.write import WriteFile, WriteFileArguments

__all__ = [
    "DeleteFile",
    "DeleteFileArguments",
    "ReadFile",
    "ReadFileArguments",
    "WriteFile",
    "WriteFileArguments",
]
