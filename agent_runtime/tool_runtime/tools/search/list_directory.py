"""ListDirectory: a directory's entries (to ``depth`` levels) with their type and size, sorted."""

from __future__ import annotations

import asyncio
import threading

from pydantic import Field

from agent_runtime.tool_runtime.output.results import ToolOutput
from agent_runtime.tool_runtime.tools.base import Arguments, Tool, ToolContext
from agent_runtime.tool_runtime.tools.search.common import Bounded, search_root, walk_notes
from agent_runtime.tool_runtime.tools.search.walk import Entry, Walk
from contracts.enums import Capability, ToolName

__all__ = ["MAX_LIST_ENTRIES", "ListDirectory", "ListDirectoryArguments"]

#: Entries shown at most; the rest are counted.
MAX_LIST_ENTRIES = 1000


class ListDirectoryArguments(Arguments):
    path: str | None = Field(
        default=None, min_length=1, description="Directory to list. Default: the project folder"
    )
    depth: int = Field(
        default=2, ge=1, le=20, description="How many levels deep to list (1: the directory's own entries)"
    )
    include_ignored: bool = Field(
        default=False,
        description="Also list entries .gitignore excludes and version-control data (.git, .hg, .svn)",
    )


class ListDirectory(Tool[ListDirectoryArguments]):
    name = ToolName.LIST_DIRECTORY.value
    capability = Capability.FILE_READ
    description = (
        "List a directory's files and subdirectories (with sizes) as an indented tree, a few levels "
        "deep. Use this instead of ls, find or tree through RunCommand: it needs no approval, skips "
        ".gitignore'd files and .git, and its output is bounded."
    )
    arguments = ListDirectoryArguments

    async def run(self, args: ListDirectoryArguments, context: ToolContext) -> ToolOutput:
        root, _ = search_root(args.path, context, directory_only=True)
        stop = threading.Event()
        try:
            return await asyncio.to_thread(_list, root, args, context, stop)
        finally:
            stop.set()  # a cancelled call's walk ends at its next entry


def _list(root: str, args: ListDirectoryArguments, context: ToolContext, stop: threading.Event) -> ToolOutput:
    walk = Walk(
        root,
        scope=context.read_scope,
        honour_ignores=not args.include_ignored,
        max_depth=args.depth,
        stop=stop,
    )
    out = Bounded(MAX_LIST_ENTRIES, context.max_output_bytes - 512)
    total = 0
    for entry in walk:
        total += 1
        out.add(_line(entry))
    lines = [f"{root}/" if not root.endswith(("/", "\\")) else root, *out.lines]
    if total == 0:
        lines.append("(empty)")
    if total > len(out.lines):
        lines.append(f"[{total - len(out.lines)} more entries not shown; list a subdirectory or lower depth]")
    lines.extend(
        walk_notes(
            withheld=walk.withheld,
            ignored=walk.ignored,
            ignored_hint="includeIgnored: true lists them",
        )
    )
    return ToolOutput(text="\n".join(lines))


def _line(entry: Entry) -> str:
    indent = "  " * (entry.depth - 1)
    name = entry.rel.rsplit("/", 1)[-1]
    if entry.kind == "dir":
        return f"{indent}{name}/"
    if entry.kind == "link":
        kind = {"dir": "directory", "file": "file"}.get(entry.target_kind, "special file")
        return f"{indent}{name} -> {entry.real} (symlink to {kind})"
    info = entry.stat()
    size = f"{info.st_size:,} bytes" if info is not None else "size unknown"
    if entry.kind == "other":
        return f"{indent}{name} (special file)"
    return f"{indent}{name} ({size})"
