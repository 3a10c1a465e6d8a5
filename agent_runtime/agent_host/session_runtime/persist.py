"""``saveSnapshot`` (seed 002 write path): the ``session_runtime_v2`` document to the checkpoint file and,
at the moments that matter for a later restore, to the session's event log as ``conversation_snapshot``.

The checkpoint is replaced after every step (seed 000 §9.3). The event is appended only when the
session is created, a task is accepted, a task ends, the session pauses or resumes: a whole snapshot
per step would grow the log with the square of the session's length, and the checkpoint already holds
the latest step. Both carry the same bytes.
"""

from __future__ import annotations

import logging
from datetime import datetime

from agent_runtime.agent_host.events import EventEmitter
from agent_runtime.agent_host.state import CheckpointStore, serialize_checkpoint
from contracts.events import EventType

from .runtime import SessionRuntime

__all__ = ["save_snapshot"]

logger = logging.getLogger(__name__)


def save_snapshot(
    runtime: SessionRuntime,
    store: CheckpointStore,
    emitter: EventEmitter | None,
    *,
    now: datetime,
    policy_bundle_version: str,
    event: bool = False,
    journal: bool = False,
) -> None:
    """Write the checkpoint (atomic, durable); with ``event`` also the ``conversation_snapshot`` event.
    A failed write is logged and the session goes on (seed 000 §11): the next checkpoint tries again.

    ``journal``: a state within a task (a step's start or end), made just as durable, but as a small
    record in the step journal on top of the last checkpoint where that can be done
    (:meth:`CheckpointStore.write_step`)."""
    snapshot = runtime.snapshot(now=now, policy_bundle_version=policy_bundle_version)
    data: bytes | None = None
    try:
        if journal and not event:
            if store.write_step(snapshot):
                runtime.legacy_restore = None
            return
        data = store.write(snapshot)
    except OSError as exc:
        logger.warning("Could not write the checkpoint: %s", exc)
        data = None
    else:
        runtime.legacy_restore = None  # a legacy restore is now written back as v2
    if event and emitter is not None:
        task = runtime.loop.task
        emitter.log_only(
            EventType.CONVERSATION_SNAPSHOT,
            data if data is not None else serialize_checkpoint(snapshot),
            task_id=task.task_id if task is not None else None,
        )
