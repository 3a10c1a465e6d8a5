"""The ``file_diff`` artifact of WriteFile (seed 003 §4.2, §7.2): a unified diff of before → after."""

from __future__ import annotations

import difflib

from agent_runtime.tool_runtime.platform.base import Platform
from agent_runtime.tool_runtime.platform.encoding import looks_binary

__all__ = ["DIFF_INPUT_LIMIT", "diff_label", "unified_diff"]

#: Larger sides are summarised instead of diffed: difflib's matcher is quadratic on some inputs.
DIFF_INPUT_LIMIT = 2 * 1024 * 1024


def diff_label(platform: Platform, path: str, workspace_root: str | None) -> str:
    """The path as a diff shows it: relative to the workspace with ``/``, else without its root."""
    if workspace_root is not None and platform.is_within(path, workspace_root):
        root = platform.normpath(workspace_root)
        relative = path[len(root) :].lstrip(platform.sep)
        if relative:
            return relative.replace(platform.sep, "/")
    parts = platform.split_components(path)
    return "/".join(parts) if parts else path


def _lines(text: str) -> list[str]:
    # Split on "\n" only, keeping endings: str.splitlines would also split on \r, \f and U+2028 and
    # the diff would no longer apply to the file.
    lines = text.split("\n")
    result = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


def unified_diff(
    label: str, old: str | None, new: str, *, old_bytes: bytes | None, old_size: int | None
) -> str:
    """``old`` is None for a new file or one too large to diff; binary or oversized sides get git's
    one-line summary instead of hunks."""
    new_bytes = new.encode("utf-8", errors="surrogatepass")
    old_size = old_size or 0
    if (old_bytes is not None and looks_binary(old_bytes)) or looks_binary(new_bytes):
        return f"Binary files a/{label} and b/{label} differ\n"
    if old_size > DIFF_INPUT_LIMIT or len(new_bytes) > DIFF_INPUT_LIMIT:
        return (
            f"Files a/{label} and b/{label} differ "
            f"(too large to diff: {old_size} bytes before, {len(new_bytes)} bytes after)\n"
        )
    out: list[str] = []
    for line in difflib.unified_diff(
        _lines(old or ""), _lines(new), fromfile=f"a/{label}", tofile=f"b/{label}"
    ):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)
