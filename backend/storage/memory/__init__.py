"""In-memory repositories: everything in dictionaries behind one lock each; for tests."""

from __future__ import annotations

from backend.storage import Stores
from backend.storage.memory.approvals import MemoryApprovalRepository
from backend.storage.memory.audit import MemoryAuditRepository
from backend.storage.memory.content import MemoryContentStore
from backend.storage.memory.sessions import MemorySessionRepository
from backend.storage.memory.telemetry import MemoryTelemetryRepository
from backend.storage.memory.usage import MemoryUsageRepository
from backend.storage.memory.workspaces import MemoryWorkspaceRepository

__all__ = ["open_memory_stores"]


def open_memory_stores() -> Stores:
    workspaces = MemoryWorkspaceRepository()
    return Stores(
        sessions=MemorySessionRepository(),
        workspaces=workspaces,
        content=MemoryContentStore(),
        approvals=MemoryApprovalRepository(),
        audit=MemoryAuditRepository(),
        telemetry=MemoryTelemetryRepository(),
        usage=MemoryUsageRepository(),
        blocking=False,
    )
