"""Tools that look around a project: ListDirectory, Glob, Grep (all File.Read).

They show or read many files below the one path the policy checked, so every entry passes the
policy's File.Read paths again (``ToolContext.read_scope``), ``.gitignore`` and version-control
directories are skipped unless asked, and their output is bounded with a count of what was left out.
"""

from __future__ import annotations

from agent_runtime.tool_runtime.tools.search.glob_files import Glob, GlobArguments
from agent_runtime.tool_runtime.tools.search.grep import Grep, GrepArguments
from agent_runtime.tool_runtime.tools.search.list_directory import ListDirectory, ListDirectoryArguments

__all__ = [
    "Glob",
    "GlobArguments",
    "Grep",
    "GrepArguments",
    "ListDirectory",
    "ListDirectoryArguments",
]
