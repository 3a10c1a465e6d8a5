"""Storage: one implementation of every service's repository per backend (seed 001 §8).

* :mod:`backend.storage.memory` — dictionaries; fast unit tests;
* :mod:`backend.storage.local` — SQLite + files under the data directory; the desktop's embedded default;
* :mod:`backend.storage.aws` — DynamoDB tables and an S3 bucket through boto3.

The same contract test suite (``tests/backend/storage``) runs against all three.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from backend.approval.repository import ApprovalRepository
from backend.audit.repository import AuditRepository
from backend.common.usage import UsageRepository
from backend.session.repository import SessionRepository
from backend.telemetry.repository import TelemetryRepository
from backend.workspace.repository import ContentStore, WorkspaceRepository

__all__ = ["Stores"]


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Stores:
    """Every repository one backend provides, and how to release it."""

    sessions: SessionRepository
    workspaces: WorkspaceRepository
    content: ContentStore
    approvals: ApprovalRepository
    audit: AuditRepository
    telemetry: TelemetryRepository
    usage: UsageRepository
    """Per-tenant counters the quotas are checked against (backend.common.usage)."""
    blocking: bool
    """True when calls wait on I/O long enough that they must run off the event loop."""
    close: Callable[[], None] = field(default=_nothing)
