"""Errors of the Local State Store (seed 000 §9.7).

::

    CheckpointError              root of everything the store raises besides OSError and ValueError
    └── CheckpointCorrupt        the file was unreadable, not JSON, not a checkpoint, of an unknown
                                 version or of another session; the store has already deleted it

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
    (``checkpoint_recovery_failed``); the file is gone by the time this is raised.
    """

    def __init__(self, reason: str, *, session_id: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.session_id = session_id
