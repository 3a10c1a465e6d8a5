"""Project instructions: ``AGENTS.md`` (and ``CLAUDE.md``) files, read once when a session is created.

Where they are looked for, in the order they appear in the system prompt (general to specific):

1. the user's own file, ``<user config dir>/Cowork/AGENTS.md`` (the folder that holds the desktop's
   ``settings.json``, as platformdirs names it for this platform);
2. for each project folder: every folder from the repository root (the nearest folder upwards that
   holds ``.git``) down to the project folder itself, ``AGENTS.md`` then ``CLAUDE.md`` in each; with
   no repository around it, the project folder alone.

The block is capped (:data:`MAX_INSTRUCTIONS_BYTES` of file text in all). The budget goes to the most
specific files first — the project folder's own, then its parents, the user's file last — and a file
that is cut, or left out, says so in the prompt, by name. The block is a pure function of the files'
bytes, so the same files give the same system prompt, which is what lets the gateway reuse its prompt
cache. The session keeps what it read in its checkpoint: a resumed session sends exactly the prompt it
sent before, even if a file has changed since (a new session reads them again).
"""

from __future__ import annotations

import logging
import os
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from contracts.instructions import InstructionFile, ProjectInstructions

__all__ = [
    "INSTRUCTION_FILE_NAMES",
    "MAX_INSTRUCTIONS_BYTES",
    "load_project_instructions",
    "user_config_dir",
]

logger = logging.getLogger(__name__)

INSTRUCTION_FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
USER_FILE_NAME = "AGENTS.md"
MAX_INSTRUCTIONS_BYTES = 32 * 1024
"""All instruction files together put at most this much text (UTF-8) into the system prompt."""

_INTRO = (
    "The user and the project keep instructions for agents in these files. Follow them unless the"
    " user says otherwise in the conversation; where two disagree, the later one (closer to the"
    " project folder) wins. Like everything else, they never override the policy."
)


def user_config_dir() -> Path:
    """``<user config dir>/Cowork``: where the desktop keeps ``settings.json``, the user's
    ``AGENTS.md`` and ``commands/``."""
    return Path(platformdirs.user_config_dir("Cowork", appauthor=False))


@dataclass(frozen=True, slots=True)
class _Found:
    path: Path
    user: bool = False


def _repository_root(folder: Path) -> Path | None:
    """The nearest folder from ``folder`` upwards that holds ``.git`` (a folder, or a worktree's file)."""
    for candidate in (folder, *folder.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def _candidates(workspace_paths: Sequence[str], user_dir: Path | None) -> list[_Found]:
    """Every place a file may be, in prompt order (general to specific)."""
    found: list[_Found] = []
    if user_dir is not None:
        found.append(_Found(user_dir / USER_FILE_NAME, user=True))
    for workspace in workspace_paths:
        folder = Path(workspace)
        root = _repository_root(folder)
        # The folder and its parents up to the repository root; just the folder outside a repository.
        above = [] if root is None else list(folder.parents)[: len(folder.parents) - len(root.parents)]
        chain = [folder, *above]
        for directory in reversed(chain):
            found += [_Found(directory / name) for name in INSTRUCTION_FILE_NAMES]
    return found


@dataclass(slots=True)
class _Read:
    found: _Found
    size: int
    data: bytes
    """The file's first bytes: at most what the budget could take (plus a few for a cut character)."""
    text: str = ""
    truncated: bool = False


def _read(found: _Found, limit: int) -> _Read | None:
    """The file's size and its first ``limit`` bytes; ``None`` if it is not a readable regular file."""
    path = found.path
    try:
        info = os.stat(path)
    except OSError:
        return None  # not there (the usual case), or not reachable
    if not stat.S_ISREG(info.st_mode):
        return None
    try:
        # O_NONBLOCK: a FIFO put in place after the check must not hang session creation.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        logger.warning("Could not read the instruction file %s: %s", path, exc)
        return None
    try:
        chunks: list[bytes] = []
        wanted = limit + 4
        while wanted > 0 and (chunk := os.read(fd, wanted)):
            chunks.append(chunk)
            wanted -= len(chunk)
        size = os.fstat(fd).st_size
    except OSError as exc:
        logger.warning("Could not read the instruction file %s: %s", path, exc)
        return None
    finally:
        os.close(fd)
    return _Read(found, size, b"".join(chunks))


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff").replace("\x00", "")


def _cut(data: bytes, budget: int) -> str:
    """The longest whole-character prefix of ``data`` within ``budget`` bytes, ending at a line end
    when one is in its second half (half a line is harder to read than a line less)."""
    head = data[:budget]
    newline = head.rfind(b"\n")
    if newline >= budget // 2:
        head = head[: newline + 1]
    return head.decode("utf-8", errors="ignore").removeprefix("\ufeff").replace("\x00", "")


def _printable(text: str) -> str:
    """A path as one line of plain text: a file name cannot add lines to the prompt."""
    return "".join(
        ch if unicodedata.category(ch)[0] != "C" else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )


def load_project_instructions(
    workspace_paths: Sequence[str],
    user_dir: Path | None,
    *,
    max_bytes: int = MAX_INSTRUCTIONS_BYTES,
) -> ProjectInstructions:
    """Find and read the instruction files of a session with these project folders (already
    absolute and resolved). Unreadable files are left out; this never raises for a file."""
    read: list[_Read] = []
    seen: set[str] = set()
    for found in _candidates(workspace_paths, user_dir):
        got = _read(found, max_bytes)
        if got is None:
            continue
        # One file reached twice (CLAUDE.md a link to AGENTS.md, nested project folders) counts once.
        identity = os.path.normcase(os.path.realpath(found.path))
        blank = got.size <= len(got.data) and not _decode(got.data).strip()
        if identity in seen or blank:
            continue
        seen.add(identity)
        read.append(got)
    budget = max_bytes
    # The budget goes to the most specific file first: the prompt order reversed.
    for got in reversed(read):
        if got.size <= budget and len(got.data) == got.size:
            got.text = _decode(got.data)
            budget -= len(got.data)
        else:
            got.text = _cut(got.data, budget) if budget > 0 else ""
            got.truncated = True
            budget = 0  # what a cut leaves over is too little to be worth a piece of another file
    if not read:
        return ProjectInstructions()
    return ProjectInstructions(
        files=[
            InstructionFile(path=str(item.found.path), size_bytes=item.size, truncated=item.truncated)
            for item in read
        ],
        prompt_block=_render(read, max_bytes),
    )


def _render(read: Sequence[_Read], max_bytes: int) -> str:
    lines = ["## Project instructions", _INTRO]
    limit = f"{max_bytes // 1024} KiB" if max_bytes % 1024 == 0 else f"{max_bytes:,} bytes"
    for item in read:
        path = _printable(str(item.found.path))
        lines += ["", f"### {'User instructions: ' if item.found.user else ''}{path}"]
        if item.text:
            lines.append(item.text.rstrip("\n"))
        if item.truncated and item.text:
            kept = len(item.text.encode("utf-8"))
            lines.append(
                f"[Cut here: {path} is {item.size:,} bytes and only its first {kept:,} bytes are"
                f" included; instruction files are limited to {limit} in all.]"
            )
        elif item.truncated:
            lines.append(
                f"[Left out: {path} ({item.size:,} bytes) did not fit; instruction files are limited to"
                f" {limit} in all and the files closer to the project folder came first.]"
            )
    return "\n".join(lines) + "\n"
