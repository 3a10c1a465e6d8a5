"""Per-tenant usage counters, the figures quotas are checked against (seed 001 Phase 4).

A counter is a whole number per (tenant, name), changed only by atomic additions, so concurrent
requests in any number of processes never lose an update:

* ``tokens/<YYYY-MM-DD>`` — LLM tokens the tenant's runtimes reported for that UTC day (Telemetry
  Service, ``llm_request_completed``); it expires some weeks after its day;
* ``storageBytes`` — artifact content the tenant keeps (Workspace Service: added on every new upload,
  taken off when a snapshot is replaced or a workspace deleted or purged).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Protocol

__all__ = ["STORAGE_COUNTER", "UsageRepository", "token_counter"]

STORAGE_COUNTER = "storageBytes"


def token_counter(day: date) -> str:
    return f"tokens/{day.isoformat()}"


class UsageRepository(Protocol):
    def add(self, tenant_id: str, counter: str, amount: int, *, expires_at: datetime | None = None) -> int:
        """Add ``amount`` (negative to take off) to the counter in one atomic step; its new value.
        ``expires_at``: the store may forget the counter after this moment (DynamoDB's ``ttl``)."""
        ...

    def get(self, tenant_id: str, counter: str) -> int:
        """The counter's value; 0 for one never written."""
        ...
