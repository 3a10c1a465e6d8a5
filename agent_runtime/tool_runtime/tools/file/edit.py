"""EditFile: replace one exact piece of a file's text, keeping everything else byte for byte.

The model changes a line without rewriting the file (and without the chance of dropping the parts it
did not repeat). Safeguards: ``oldString`` must occur exactly once unless ``replaceAll`` (the refusal
says how often and on which lines); the file must have been read in this session and be unchanged on
disk since (``ledger``), so a concurrent edit by the user is never overwritten blind; encoding, BOM,
line endings and permissions are kept; the write is atomic as WriteFile's; a ``file_diff`` artifact
shows the change.
"""

from __future__ import annotations

import asyncio
import functools
import os
import stat
from dataclasses import dataclass

from pydantic import Field

from agent_runtime.tool_runtime.errors import ToolFailure
from agent_runtime.tool_runtime.output.artifacts import inline_or_spooled
from agent_runtime.tool_runtime.output.results import ToolOutput
from agent_runtime.tool_runtime.tools.base import Arguments, Tool, ToolContext
from agent_runtime.tool_runtime.tools.file.atomic import write_atomically
from agent_runtime.tool_runtime.tools.file.common import os_failure, runs_inline
from agent_runtime.tool_runtime.tools.file.diff import diff_label, unified_diff
from agent_runtime.tool_runtime.tools.file.read import open_regular_file
from agent_runtime.tool_runtime.tools.file.write import remember_written
from agent_runtime.tool_runtime.tools.ledger import ReadLedger, fingerprint_of
from contracts.edits import EditedText, EditRefused, apply_edit
from contracts.enums import ArtifactType, Capability, ToolName
from contracts.errors import ErrorCode

__all__ = ["EditFile", "EditFileArguments"]


class EditFileArguments(Arguments):
    path: str = Field(min_length=1, description="Absolute path of the file to change (read it first)")
    old_string: str = Field(
        min_length=1,
        description="The exact text to replace, as ReadFile showed it (indentation included)",
    )
    new_string: str = Field(description="The text to put in its place (may be empty to delete)")
    replace_all: bool = Field(
        default=False,
        description="Replace every occurrence of oldString; otherwise it must occur exactly once",
    )


class EditFile(Tool[EditFileArguments]):
    name = ToolName.EDIT_FILE.value
    capability = Capability.FILE_WRITE
    description = (
        "Change part of a text file: replace oldString with newString. Prefer this to WriteFile for "
        "any change to an existing file, and to sed or a script through RunCommand. The file must "
        "have been read with ReadFile in this session and not changed since; oldString must match "
        "exactly once (add surrounding lines to make it unique) unless replaceAll is true. The file "
        "keeps its encoding and line endings."
    )
    arguments = EditFileArguments

    async def run(self, args: EditFileArguments, context: ToolContext) -> ToolOutput:
        path = context.platform.normalize_path(
            args.path, field="arguments.path", workspace_root=context.workspace_root
        )
        for field, value in (("oldString", args.old_string), ("newString", args.new_string)):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ToolFailure(
                    ErrorCode.INVALID_REQUEST,
                    f"arguments.{field} is not valid Unicode text (it contains a lone surrogate)",
                ) from exc
        if context.reads is None:
            raise ToolFailure(ErrorCode.TOOL_EXECUTION_FAILED, "EditFile needs the session's record of reads")
        label = diff_label(context.platform, path, context.workspace_root)
        edit = functools.partial(_edit_and_diff, path, label, args, context, context.reads)
        if not args.replace_all and runs_inline(path, len(args.new_string)):
            edited, diff = edit()
        else:
            # Off the event loop, in one hop: the read, the fsyncs of the atomic write and the diff.
            edited, diff = await asyncio.to_thread(edit)
        artifact = inline_or_spooled(
            context.spool, ArtifactType.FILE_DIFF, f"{label.rsplit('/', 1)[-1]}.diff", "text/x-diff", diff
        )
        count = edited.text.replacements
        what = "1 occurrence" if count == 1 else f"{count} occurrences"
        return ToolOutput(text=f"Edited {path}: replaced {what} of oldString", artifacts=[artifact])


@dataclass(frozen=True, slots=True)
class _Edited:
    text: EditedText
    old_bytes: bytes


def _edit_and_diff(
    path: str, label: str, args: EditFileArguments, context: ToolContext, reads: ReadLedger
) -> tuple[_Edited, str]:
    edited = _edit(path, args, context, reads)
    diff = unified_diff(
        label,
        edited.text.before,
        edited.text.after,
        old_bytes=edited.old_bytes,
        old_size=len(edited.old_bytes),
    )
    return edited, diff


def _edit(path: str, args: EditFileArguments, context: ToolContext, reads: ReadLedger) -> _Edited:
    data, info = _read_whole(path, context.max_file_size_bytes)
    seen = reads.get(path)
    if seen is None:
        raise ToolFailure(
            ErrorCode.TOOL_EXECUTION_FAILED,
            f"{path} has not been read in this session; read it with ReadFile first, then edit it",
        )
    if not seen.matches(fingerprint_of(data, info)):
        raise ToolFailure(
            ErrorCode.TOOL_EXECUTION_FAILED,
            f"{path} has changed on disk since it was last read (someone else edited it); read it"
            " again with ReadFile and make the edit on its current content. Nothing was written",
        )
    try:
        edited = apply_edit(
            data,
            args.old_string,
            args.new_string,
            replace_all=args.replace_all,
            encodings=context.platform.fallback_encodings("utf-8"),
            name=path,
        )
    except EditRefused as refused:
        code = ErrorCode.INVALID_REQUEST if refused.bad_arguments else ErrorCode.TOOL_EXECUTION_FAILED
        raise ToolFailure(code, f"{refused} Nothing was written.") from refused
    limit = context.max_file_size_bytes
    if limit is not None and len(edited.data) > limit:
        raise ToolFailure(
            ErrorCode.FILE_TOO_LARGE,
            f"The edited file would be {len(edited.data)} bytes, over the {limit}-byte limit: {path}",
        )
    try:
        write_atomically(path, edited.data, mode=stat.S_IMODE(info.st_mode))
    except OSError as exc:
        raise os_failure(exc, "write", path) from exc
    # The new content is what the agent now knows the file holds: the next edit can follow directly.
    remember_written(reads, path, edited.data)
    return _Edited(text=edited, old_bytes=data)


def _read_whole(path: str, max_size: int | None) -> tuple[bytes, os.stat_result]:
    handle, info = open_regular_file(path, max_size)
    with handle:
        try:
            return handle.read(), info
        except OSError as exc:
            raise os_failure(exc, "read", path) from exc
