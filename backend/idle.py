"""``serve --idle-timeout``: the embedded backend stops once nobody has needed it for a while.

Needed means a client holding a lease on the data directory (``contracts.local_backend``: every
``cowork exec`` run and desktop window holds one while it uses the backend), an open connection, or
a request since the last look. After ``timeout_s`` without any, the server takes the start lock,
checks the leases once more and removes its state file before it stops — so a client that found it
under that lock, and took its lease before looking, is never left with a backend that is going away;
the next client finds no state file and starts a new one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path

from uvicorn.server import ServerState

from backend.local_mode import remove_state_file
from contracts.local_backend import LOCK_FILE, live_leases, try_lock

__all__ = ["IdleWatch"]

logger = logging.getLogger(__name__)

_MAX_INTERVAL_S = 5.0
_MIN_INTERVAL_S = 0.05


class IdleWatch:
    """Decides when the server of ``data_dir`` has been idle for ``timeout_s`` seconds."""

    def __init__(
        self, data_dir: Path, timeout_s: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._data_dir = data_dir
        self.timeout_s = timeout_s
        self._clock = clock
        self._last_active = clock()
        self._requests_seen = 0
        # Often enough that the server stops within a quarter of the timeout of its end, never so
        # often that a long timeout costs anything (a look lists a directory of a few files).
        self.interval_s = min(max(timeout_s / 4, _MIN_INTERVAL_S), _MAX_INTERVAL_S)

    async def run(self, state: ServerState, stop: Callable[[], None]) -> None:
        """Look every ``interval_s`` until idle for ``timeout_s``, then call ``stop`` once."""
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                idle = self.idle(state)
            except OSError as exc:  # a look that failed is tried again, never the end of the watch
                logger.warning("could not check for clients: %s", exc)
                continue
            if idle:
                logger.info("no client for %g s: stopping", self.timeout_s)
                stop()
                return

    def idle(self, state: ServerState) -> bool:
        """Whether the server may stop now; if so its state file is already gone."""
        if not self._data_dir.is_dir():
            return True  # its data directory was removed: no client can find this server any more
        now = self._clock()
        if self._in_use(state):
            self._last_active = now
            return False
        if now - self._last_active < self.timeout_s:
            return False
        with try_lock(self._data_dir / LOCK_FILE) as locked:
            # A client holding the lock is looking for this backend or starting one: not now.
            if not locked or live_leases(self._data_dir):
                self._last_active = now
                return False
            remove_state_file(self._data_dir)
        return True

    def _in_use(self, state: ServerState) -> bool:
        requests, self._requests_seen = self._requests_seen, state.total_requests
        return bool(state.connections) or state.total_requests != requests or live_leases(self._data_dir) > 0
