"""Project instructions: the ``AGENTS.md`` (and ``CLAUDE.md``) files a session adds to its system prompt.

The runtime reads them once, when ``CreateSession`` makes the session, and keeps what it read in the
checkpoint, so a resumed session sends the same system prompt (byte for byte) as before the restart.
``session_started`` lists the files (:class:`InstructionFile`) so the user can see what the agent was
told.
"""

from __future__ import annotations

from pydantic import Field

from contracts._base import WireModel

__all__ = ["InstructionFile", "ProjectInstructions"]


class InstructionFile(WireModel):
    path: str = Field(min_length=1)
    """The file's absolute path."""
    size_bytes: int = Field(ge=0)
    """The file's size on disk."""
    truncated: bool = False
    """Only part of the file (or none of it) went into the prompt: the size cap was reached."""


class ProjectInstructions(WireModel):
    """What a session loaded: the files, and the system prompt's block built from them."""

    files: list[InstructionFile] = Field(default_factory=list)
    prompt_block: str = ""
    """The block as it appears in the system prompt (empty when no file was found)."""
