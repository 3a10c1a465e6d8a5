"""Usage counters in a dictionary."""

from __future__ import annotations

import threading
from datetime import datetime

__all__ = ["MemoryUsageRepository"]


class MemoryUsageRepository:
    def __init__(self) -> None:
        self._counters: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    def add(self, tenant_id: str, counter: str, amount: int, *, expires_at: datetime | None = None) -> int:
        with self._lock:
            value = self._counters.get((tenant_id, counter), 0) + amount
            self._counters[(tenant_id, counter)] = value
            return value

    def get(self, tenant_id: str, counter: str) -> int:
        return self._counters.get((tenant_id, counter), 0)
