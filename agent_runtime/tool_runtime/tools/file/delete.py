"""DeleteFile (seed 003 §4.3): one file or symlink, never a directory."""

from __future__ import annotations

import asyncio
import os
import stat
import sys

from pydantic import Field

from agent_runtime.tool_runtime.errors import ToolFailure
from agent_runtime.tool_runtime.output.results import ToolOutput
from agent_runtime.tool_runtime.tools.base import Arguments, Tool, ToolContext
from agent_runtime.tool_runtime.tools.file.common import os_failure
from contracts.enums import Capability, ToolName
from contracts.errors import ErrorCode

__all__ = ["DeleteFile", "DeleteFileArguments"]


class DeleteFileArguments(Arguments):
    path: str = Field(min_length=1, description="Absolute file path to delete")


class DeleteFile(Tool[DeleteFileArguments]):
    name = ToolName.DELETE_FILE.value
    capability = Capability.FILE_DELETE
    description = (
        "Delete a file at the given path. Directories cannot be deleted with this tool; "
        "a symbolic link is removed itself, not the file it points to."
    )
    arguments = DeleteFileArguments

    async def run(self, args: DeleteFileArguments, context: ToolContext) -> ToolOutput:
        # The last component is not resolved: deleting a symlink removes the link (rm semantics).
        path = context.platform.normalize_path(
            args.path, field="arguments.path", workspace_root=context.workspace_root, resolve_final=False
        )
        await asyncio.to_thread(_delete, path)
        if context.reads is not None:
            context.reads.forget(path)
        return ToolOutput(text=f"Deleted {path}")


def _delete(path: str) -> None:
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise os_failure(exc, "delete", path) from exc
    if stat.S_ISDIR(info.st_mode):
        raise ToolFailure(
            ErrorCode.INVALID_REQUEST,
            f"arguments.path is a directory; DeleteFile deletes single files only: {path}",
        )
    try:
        if sys.platform == "win32" and stat.S_ISLNK(info.st_mode) and os.path.isdir(path):
            # A Windows symlink to a directory is a directory entry: rmdir removes the link itself.
            os.rmdir(path)
        else:
            os.unlink(path)
    except OSError as exc:
        raise os_failure(exc, "delete", path) from exc
