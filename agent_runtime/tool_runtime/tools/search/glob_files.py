"""Glob: the files whose paths match a pattern, most recently modified first."""

from __future__ import annotations

import asyncio
import threading

from pydantic import Field

from agent_runtime.tool_runtime.output.results import ToolOutput
from agent_runtime.tool_runtime.tools.base import Arguments, Tool, ToolContext
from agent_runtime.tool_runtime.tools.search.common import Bounded, search_root, walk_notes
from agent_runtime.tool_runtime.tools.search.patterns import GlobPattern, compile_glob
from agent_runtime.tool_runtime.tools.search.walk import Walk
from contracts.enums import Capability, ToolName

__all__ = ["MAX_GLOB_RESULTS", "Glob", "GlobArguments"]

#: Paths shown at most; the rest are counted.
MAX_GLOB_RESULTS = 500


class GlobArguments(Arguments):
    pattern: str = Field(
        min_length=1,
        description=(
            "Glob such as '**/*.py' or 'src/**/test_*.ts'; '*' stays within a directory, '**' crosses "
            "them, '{a,b}' is either. A pattern without '/' matches file names at any depth"
        ),
    )
    path: str | None = Field(
        default=None, min_length=1, description="Directory to search. Default: the project folder"
    )


class Glob(Tool[GlobArguments]):
    name = ToolName.GLOB.value
    capability = Capability.FILE_READ
    description = (
        "Find files by name pattern; returns absolute paths, most recently modified first. Use this "
        "instead of find or ls through RunCommand: it needs no approval, honours .gitignore and is "
        "bounded."
    )
    arguments = GlobArguments

    async def run(self, args: GlobArguments, context: ToolContext) -> ToolOutput:
        pattern = compile_glob(args.pattern, field="pattern")
        root, _ = search_root(args.path, context, directory_only=True)
        stop = threading.Event()
        try:
            return await asyncio.to_thread(_glob, root, pattern, args, context, stop)
        finally:
            stop.set()


def _glob(
    root: str, pattern: GlobPattern, args: GlobArguments, context: ToolContext, stop: threading.Event
) -> ToolOutput:
    walk = Walk(root, scope=context.read_scope, descend=pattern.may_match_below, stop=stop)
    found: list[tuple[int, str]] = []
    for entry in walk:
        is_file = entry.kind == "file" or (entry.kind == "link" and entry.target_kind == "file")
        if is_file and pattern.matches(entry.rel):
            info = entry.stat()
            found.append((info.st_mtime_ns if info is not None else 0, entry.path))
    found.sort(key=lambda item: (-item[0], item[1]))
    out = Bounded(MAX_GLOB_RESULTS, context.max_output_bytes - 512)
    for _, path in found:
        if not out.add(path):
            break
    lines = list(out.lines) or [f"No files match {args.pattern!r} in {root}"]
    if len(found) > len(out.lines):
        lines.append(f"[{len(found) - len(out.lines)} more matching files not shown; narrow the pattern]")
    lines.extend(walk_notes(withheld=walk.withheld, ignored=walk.ignored, ignored_hint=None))
    return ToolOutput(text="\n".join(lines))
