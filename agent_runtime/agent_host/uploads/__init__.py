"""Uploads to the Workspace Service (seed 000 §7.5 artifacts, §5.5 session history) that never hold up
the agent loop: admitted by the policy's ``Workspace.Upload`` (:mod:`.admission`), spooled on disk
(:mod:`.spool`), sent in the background (:mod:`.queue`); and the model's own ``UploadArtifact``
(:mod:`.artifact_tool`)."""

from __future__ import annotations

from .admission import PolicyAdmission, UploadIntent
from .queue import MAX_PENDING_BYTES, MODEL_WAIT_S, SENT, Uploader, UploadQueue
from .spool import ENTRY_SUFFIX, SpooledUpload, UploadSpool

__all__ = [
    "ENTRY_SUFFIX",
    "MAX_PENDING_BYTES",
    "MODEL_WAIT_S",
    "SENT",
    "PolicyAdmission",
    "SpooledUpload",
    "UploadIntent",
    "UploadQueue",
    "UploadSpool",
    "Uploader",
]
