"""What an update round reports while it runs and how it ends (``UpdateService.update``).

Kept apart from the service, which imports the network, the manifest's cryptography and the
installer, so the window can show progress without loading them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["UpdateProgress", "UpdateResult", "UpdateStage", "UpdateStatus"]


class UpdateStage(enum.StrEnum):
    CHECKING = "checking"
    DOWNLOADING = "downloading"
    INSTALLING = "installing"
    HEALTH_CHECK = "health_check"
    ACTIVATING = "activating"


class UpdateStatus(enum.StrEnum):
    INSTALLED = "installed"
    """A new runtime is active; sessions started from now on use it."""
    UP_TO_DATE = "up_to_date"
    NOT_OFFERED = "not_offered"
    """A newer runtime exists but not for this install (rollout, compatibility, platform)."""
    ROLLED_BACK = "rolled_back"
    """The runtime in use was revoked by the publisher and taken out of service."""
    REJECTED = "rejected"
    """A security check refused the manifest, the bundle or the new runtime."""
    FAILED = "failed"
    """Network or disk trouble; the next check tries again (a download resumes)."""


@dataclass(frozen=True, slots=True)
class UpdateProgress:
    stage: UpdateStage
    done: int = 0
    total: int = 0
    version: str | None = None


@dataclass(frozen=True, slots=True)
class UpdateResult:
    status: UpdateStatus
    message: str
    version: str | None = None
    """The runtime the result is about (the one installed, offered, refused or revoked)."""
    code: str | None = None
    """For refusals and failures: the ``UpdateError`` code, e.g. ``bad_signature``, ``hash_mismatch``."""
