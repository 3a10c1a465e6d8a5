"""What only the desktop sees, for the Audit Service (seed 001 §6.3, Phase 3): :mod:`.producer`."""

from __future__ import annotations

from .producer import MAX_QUEUED, DesktopAudit, SessionRef

__all__ = ["MAX_QUEUED", "DesktopAudit", "SessionRef"]
