"""The ``file_diff`` artifact of WriteFile (seed 003 §4.2, §7.2): a unified diff of before → after."""

from __future__ import annotations

import difflib

from agent_runtime.tool_runtime.platform.base import Platform
from agent_runtime.tool_runtime.platform.encoding import looks_binary

__all__ = ["DIFF_INPUT_LIMIT", "diff_label", "unified_diff"]

#: Larger sides are summarised instead of diffed: difflib's matcher is quadratic on some inputs.
DIFF_INPUT_LIMIT = 2 * 1024 * 1024
_CONTEXT = 3


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
    for line in _unified(old or "", new, f"a/{label}", f"b/{label}"):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _unified(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    """``difflib.unified_diff`` with 3 lines of context, made from the lines that differ only.

    The text both sides share at the start and at the end is set aside before splitting and matching
    (an edit of one line in a 1 MB file matches one line, not 15,000: tens of milliseconds saved);
    the context lines are then taken from the shared text around it, as a whole-file diff has them.
    """
    same = _common_prefix(old, new)
    if same == len(old) == len(new):
        return []
    start = old.rfind("\n", 0, same) + 1  # the first line that differs
    end = len(old)
    tail = _common_suffix(old, new, min(len(old), len(new)) - same)
    if tail:
        cut = old.find("\n", len(old) - tail)  # the shared end, from a line start
        if cut >= 0:
            end = cut + 1
    new_end = end - len(old) + len(new)
    context_start = start
    for _ in range(_CONTEXT):
        if context_start == 0:
            break
        context_start = old.rfind("\n", 0, context_start - 1) + 1
    context_end = end
    for _ in range(_CONTEXT):
        following = old.find("\n", context_end)
        if following < 0:
            context_end = len(old)
            break
        context_end = following + 1
    before, after = _lines(old[context_start:start]), _lines(old[end:context_end])
    core_old, core_new = _lines(old[start:end]), _lines(new[start:new_end])
    a, b = before + core_old + after, before + core_new + after
    codes: list[tuple[str, int, int, int, int]] = [("equal", 0, len(before), 0, len(before))]
    shift = len(before)
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, core_old, core_new).get_opcodes():
        codes.append((op, i1 + shift, i2 + shift, j1 + shift, j2 + shift))
    codes.append(("equal", len(a) - len(after), len(a), len(b) - len(after), len(b)))
    merged: list[tuple[str, int, int, int, int]] = []
    for code in codes:
        if code[1] == code[2] and code[3] == code[4]:
            continue
        if merged and merged[-1][0] == code[0] == "equal":
            last = merged.pop()
            code = ("equal", last[1], code[2], last[3], code[4])
        merged.append(code)
    offset = old.count("\n", 0, context_start)
    out: list[str] = []
    for group in _grouped(merged):
        if not out:
            out += [f"--- {old_name}\n", f"+++ {new_name}\n"]
        first, last = group[0], group[-1]
        old_range = _range(first[1] + offset, last[2] + offset)
        new_range = _range(first[3] + offset, last[4] + offset)
        out.append(f"@@ -{old_range} +{new_range} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            if tag in ("replace", "delete"):
                out += ["-" + line for line in a[i1:i2]]
            if tag in ("replace", "insert"):
                out += ["+" + line for line in b[j1:j2]]
    return out


def _grouped(
    codes: list[tuple[str, int, int, int, int]],
) -> list[list[tuple[str, int, int, int, int]]]:
    """Hunks of opcodes with ``_CONTEXT`` lines around each change (``get_grouped_opcodes``)."""
    n = _CONTEXT
    if codes and codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if codes and codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    groups: list[list[tuple[str, int, int, int, int]]] = []
    group: list[tuple[str, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return [g for g in groups if any(code[0] != "equal" for code in g)]


def _common_prefix(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at the start (compared a block at a time in C)."""
    limit, block, at = min(len(a), len(b)), 64 * 1024, 0
    while at < limit and a[at : at + block] == b[at : at + block]:
        at += block
    low, high = at, min(at + block, limit)  # the answer lies in [low, high]: binary search
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    """How many characters ``a`` and ``b`` share at the end, at most ``limit`` (so that the shared
    end never overlaps the shared start)."""
    block, shared = 64 * 1024, 0
    while shared < limit:
        size = min(block, limit - shared)
        if a[len(a) - shared - size : len(a) - shared] != b[len(b) - shared - size : len(b) - shared]:
            break
        shared += size
    low, high = shared, min(shared + block, limit)
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


def _range(start: int, stop: int) -> str:
    """A hunk's line range as unified diffs write it (difflib's ``_format_range_unified``)."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return str(beginning)
    if not length:
        beginning -= 1
    return f"{beginning},{length}"
