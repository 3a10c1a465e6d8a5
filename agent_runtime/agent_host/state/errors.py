"""Errors of the Local State Store (seed 000 §9.7).

::

    CheckpointError              root of everything the store raises besides OSError and ValueError
    └── CheckpointCorrupt        the file was unreadable, not JSON, not a checkpoint, of an unknown
                                 version, of another session or inconsistent; the store has already
                                 moved it aside (``<sessionId>.json.corrupt-<UTC time>``)

Writing raises plain ``OSError`` (disk full, read-only directory): seed 000 §11 has the loop log it and
carry on, so it needs no type of its own. A session ID that cannot safely be a file name is a
``ValueError`` — a programming error, never a state of the disk.
"""

from __future__ import annotations

__all__ = ["CheckpointCorrupt", "CheckpointError"]


class CheckpointError(Exception):
    """Root of the checkpoint store's own errors."""


class CheckpointCorrupt(CheckpointError):
    """The checkpoint could not be used for crash recovery (seed 000 §9.7).

    ``reason`` is a plain sentence for the desktop's "crash recovery failed" notice
    (``checkpoint_recovery_failed``). By the time this reaches a caller the file is no longer a
    checkpoint: ``moved_to`` names the file it was renamed to for diagnosis (None if even that failed
    and it was deleted). ``workspace_id`` is the file's own ``workspaceId`` when it could be read.
    """

    def __init__(
        self,
        reason: str,
        *,
        session_id: str,
        moved_to: str | None = None,
        workspace_id: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.session_id = session_id
        self.moved_to = moved_to
        self.workspace_id = workspace_id
