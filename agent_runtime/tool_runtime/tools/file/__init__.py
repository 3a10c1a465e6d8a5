"""The file tools (seed 003 §4.1–§4.3): ReadFile, WriteFile, DeleteFile; and EditFile."""

from __future__ import annotations

from agent_runtime.tool_runtime.tools.file.delete import DeleteFile, DeleteFileArguments
from agent_runtime.tool_runtime.tools.file.edit import EditFile, EditFileArguments
from agent_runtime.tool_runtime.tools.file.read import ReadFile, ReadFileArguments
from agent_runtime.tool_runtime.tools.file.write import WriteFile, WriteFileArguments

__all__ = [
    "DeleteFile",
    "DeleteFileArguments",
    "EditFile",
    "EditFileArguments",
    "ReadFile",
    "ReadFileArguments",
    "WriteFile",
    "WriteFileArguments",
]
