"""Session events: ``SessionEvent`` notifications to the desktop and the local JSONL event log
(seed 000 §12). ``EventEmitter.emit`` is cheap and never raises; ``drain``/``aclose`` flush."""

from __future__ import annotations

from agent_runtime.agent_host.events.emitter import (
    CLOSE_TIMEOUT_S,
    MAX_PENDING_NOTIFICATIONS,
    NOTIFICATION_METHOD,
    Clock,
    EventEmitter,
    Notify,
    utc_now,
    wire_timestamp,
)
from agent_runtime.agent_host.events.log_file import EventLogFile

__all__ = [
    "CLOSE_TIMEOUT_S",
    "MAX_PENDING_NOTIFICATIONS",
    "NOTIFICATION_METHOD",
    "Clock",
    "EventEmitter",
    "EventLogFile",
    "Notify",
    "utc_now",
    "wire_timestamp",
]
