"""Audit and telemetry from the runtime (seed 001 §6.3, Phase 3): the session's producer
(:mod:`.producer`), what of the session's events goes where (:mod:`.envelopes`, :mod:`.steps`), and
the spool and outboxes that send it in the background (:mod:`.spool`, :mod:`.outbox`)."""

from __future__ import annotations

from .outbox import EventOutbox
from .producer import AUDIT, TELEMETRY, EventsClient, SessionObservability
from .spool import EventSpool, SegmentHeader

__all__ = [
    "AUDIT",
    "TELEMETRY",
    "EventOutbox",
    "EventSpool",
    "EventsClient",
    "SegmentHeader",
    "SessionObservability",
]
