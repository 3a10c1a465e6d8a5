"""Where a resumed session's state comes from (seed 002 "Restore path"), in the seed's strict order:

1. the v2 checkpoint (``session_runtime_v2`` in ``checkpoints/<sessionId>.json``);
2. else the latest v2 ``conversation_snapshot`` event of the session's local event log;
3. else the legacy checkpoint (``checkpointVersion: "1.0"``, written by runtimes before the session
   runtime), with every field it has;
4. else the latest legacy ``conversation_snapshot`` event (a payload with ``conversationHistory``);
5. else a readable conversation rebuilt from the event log's own events: each task's prompt (when the
   log recorded it), the model's answers, and each tool call as a line of text with its outcome.

A checkpoint that exists but cannot be used stays what it was (seed 000 §9.7): set aside and reported,
not silently replaced by an older source — then or on a later resume. Forms 4–5 carry no tenant, user
or policy version: the caller takes them from the Session Service (:meth:`RestorePoint.complete`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from agent_runtime.agent_host.state import CheckpointStore
from contracts.checkpoint import Checkpoint
from contracts.enums import CheckpointTaskStatus, Role, SessionStatus
from contracts.messages import ConversationMessage
from contracts.session_runtime import (
    SNAPSHOT_SCHEMA,
    SNAPSHOT_VERSION,
    LoopBucket,
    PermissionsBucket,
    SessionRuntimeSnapshot,
    SnapshotTask,
    TranscriptBucket,
)

__all__ = ["RestorePoint", "RestoreSource", "find_restore_point", "from_legacy_checkpoint", "read_events"]

logger = logging.getLogger(__name__)

RestoreSource = Literal[
    "checkpoint", "snapshot_event", "legacy_checkpoint", "legacy_snapshot_event", "event_log"
]

_HISTORY = TypeAdapter(list[ConversationMessage])
_TASK_END = {
    "task_completed": CheckpointTaskStatus.COMPLETED,
    "task_failed": CheckpointTaskStatus.FAILED,
    "task_cancelled": CheckpointTaskStatus.CANCELLED,
}
_SESSION_END = {
    "session_completed": SessionStatus.SESSION_COMPLETED,
    "session_cancelled": SessionStatus.SESSION_CANCELLED,
    "session_failed": SessionStatus.SESSION_FAILED,
}


@dataclass(frozen=True, slots=True)
class RestorePoint:
    source: RestoreSource
    session_id: str
    workspace_id: str | None
    snapshot: SessionRuntimeSnapshot | None = None
    """Forms 1–3 (a legacy checkpoint converted to v2)."""
    messages: tuple[ConversationMessage, ...] = ()
    """Forms 4–5: the conversation alone."""
    task: SnapshotTask | None = None
    session_status: SessionStatus = SessionStatus.SESSION_RUNNING
    task_count: int = 0
    started_at: datetime | None = None

    @property
    def legacy(self) -> bool:
        return self.source not in ("checkpoint", "snapshot_event")

    @property
    def policy_bundle_version(self) -> str | None:
        return self.snapshot.policy_bundle_version if self.snapshot is not None else None

    @property
    def step_cursor(self) -> str | None:
        task = self.snapshot.loop.task if self.snapshot is not None else self.task
        return task.step_cursor if task is not None else None

    def complete(
        self, *, tenant_id: str, workspace_id: str, user_id: str, policy_bundle_version: str, now: datetime
    ) -> SessionRuntimeSnapshot:
        """The v2 document: the snapshot itself, or forms 4–5 with the identity the Session Service
        holds and the policy version just received."""
        if self.snapshot is not None:
            return self.snapshot
        return SessionRuntimeSnapshot(
            snapshot_schema=SNAPSHOT_SCHEMA,
            version=SNAPSHOT_VERSION,
            session_id=self.session_id,
            workspace_id=workspace_id,
            tenant_id=tenant_id,
            user_id=user_id,
            session_status=self.session_status,
            policy_bundle_version=policy_bundle_version,
            checkpointed_at=now,
            transcript=TranscriptBucket(messages=list(self.messages), session_tokens_used=0),
            loop=LoopBucket(task=self.task, task_count=self.task_count, session_started_at=self.started_at),
        )


def find_restore_point(store: CheckpointStore, log_path: Path | None, session_id: str) -> RestorePoint | None:
    """The first source in the seed's order; None when there is none. ``CheckpointCorrupt`` (from the
    store) when the checkpoint exists but cannot be used — it has been set aside."""
    saved = store.load(session_id)
    if isinstance(saved, SessionRuntimeSnapshot):
        return RestorePoint("checkpoint", session_id, saved.workspace_id, snapshot=saved)
    if saved is None and store.was_set_aside(session_id):
        # Its checkpoint failed recovery and the user was told to start anew: an older state from the
        # event log is not slipped in behind that answer.
        return None
    events = _LogScan.read(log_path, session_id) if log_path is not None else _LogScan()
    if events.v2 is not None:
        # the event carries the checkpoint's bytes: its images are files beside the checkpoint
        snapshot = store.with_images(events.v2)
        return RestorePoint("snapshot_event", session_id, snapshot.workspace_id, snapshot=snapshot)
    if isinstance(saved, Checkpoint):
        converted = from_legacy_checkpoint(saved)
        return RestorePoint("legacy_checkpoint", session_id, saved.workspace_id, snapshot=converted)
    if not events.seen:
        return None
    if events.legacy_history is not None:
        return events.point("legacy_snapshot_event", events.legacy_history)
    return events.point("event_log", events.rebuilt())


def from_legacy_checkpoint(checkpoint: Checkpoint) -> SessionRuntimeSnapshot:
    """A ``checkpointVersion: "1.0"`` checkpoint as a v2 document, every field it has kept."""
    task = checkpoint.task
    return SessionRuntimeSnapshot(
        snapshot_schema=SNAPSHOT_SCHEMA,
        version=SNAPSHOT_VERSION,
        session_id=checkpoint.session_id,
        workspace_id=checkpoint.workspace_id,
        tenant_id=checkpoint.tenant_id,
        user_id=checkpoint.user_id,
        session_status=checkpoint.session_status,
        policy_bundle_version=checkpoint.policy_bundle_version,
        checkpointed_at=checkpoint.checkpointed_at,
        workspace_paths=list(checkpoint.workspace_paths or ()),
        project_instructions=checkpoint.project_instructions,
        transcript=TranscriptBucket(
            messages=list(checkpoint.thread),
            session_tokens_used=checkpoint.session_tokens_used,
            compaction=checkpoint.compaction,
        ),
        loop=LoopBucket(
            task=None if task is None else SnapshotTask(**dict(task), step_cursor=checkpoint.step_cursor),
            # Checkpoints written before these were kept count the resumed task only.
            task_count=checkpoint.task_count if checkpoint.task_count is not None else int(task is not None),
            session_started_at=checkpoint.session_started_at,
            compactions=checkpoint.compaction.compaction_count if checkpoint.compaction else 0,
        ),
        checklist=checkpoint.checklist,
        prompt_cache=checkpoint.prompt_cache,
        usage=checkpoint.usage,
        permissions=PermissionsBucket(
            approval_mode=task.approval_mode if task is not None else None,
            approval_decisions=list(checkpoint.approval_decisions),
        ),
    )


def read_events(log_path: Path) -> Iterator[dict[str, Any]]:
    """The log's events, oldest first; lines that are not whole JSON objects (a write cut off by a
    kill) are skipped."""
    try:
        file = log_path.open("rb")
    except OSError:
        return
    with file:
        for line in file:
            try:
                event = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(event, dict):
                yield event


@dataclass(slots=True)
class _Task:
    task_id: str
    prompt: str = ""
    max_steps: int = 1
    steps: int = 0
    status: CheckpointTaskStatus = CheckpointTaskStatus.RUNNING
    cursor: str | None = None


@dataclass(slots=True)
class _LogScan:
    """What one pass over the event log found (forms 2, 4 and 5)."""

    session_id: str = ""
    workspace_id: str | None = None
    seen: bool = False
    v2: SessionRuntimeSnapshot | None = None
    legacy_history: list[ConversationMessage] | None = None
    legacy_task_id: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[str, _Task] = field(default_factory=dict)
    session_status: SessionStatus = SessionStatus.SESSION_RUNNING
    started_at: datetime | None = None

    @classmethod
    def read(cls, log_path: Path, session_id: str) -> _LogScan:
        scan = cls(session_id=session_id)
        if not os.path.isfile(log_path):
            return scan
        for event in read_events(log_path):
            if event.get("sessionId") != session_id:
                continue
            scan.seen = True
            scan.workspace_id = event.get("workspaceId") or scan.workspace_id
            scan._take(event)
        return scan

    def _take(self, event: dict[str, Any]) -> None:
        kind = event.get("eventType")
        payload = event.get("payload")
        if not isinstance(payload, dict):
            return
        if kind == "conversation_snapshot":
            self._snapshot(payload, event.get("taskId"))
            return
        self.events.append(event)
        task_id = event.get("taskId")
        if kind == "session_started" and self.started_at is None:
            self.started_at = _timestamp(event.get("timestamp"))
        elif kind in _SESSION_END:
            self.session_status = _SESSION_END[kind]
        elif kind == "task_started" and isinstance(task_id, str):
            max_steps = payload.get("maxSteps")
            prompt = payload.get("prompt")
            self.tasks[task_id] = _Task(
                task_id,
                prompt=prompt if isinstance(prompt, str) else "",
                max_steps=max_steps if isinstance(max_steps, int) and max_steps > 0 else 1,
            )
        elif kind == "step_completed" and task_id in self.tasks:
            task = self.tasks[task_id]
            task.steps += 1
            task.cursor = event.get("stepId") or task.cursor
        elif kind in _TASK_END and task_id in self.tasks:
            self.tasks[task_id].status = _TASK_END[kind]

    def _snapshot(self, payload: dict[str, Any], task_id: object) -> None:
        if payload.get("schema") == SNAPSHOT_SCHEMA:
            try:
                snapshot = SessionRuntimeSnapshot.model_validate_json(json.dumps(payload))
            except ValidationError as exc:
                logger.warning("skipped a conversation_snapshot event that is not valid: %s", exc.errors()[0])
                return
            if snapshot.session_id == self.session_id:
                self.v2 = snapshot
            return
        history = payload.get("conversationHistory")
        if isinstance(history, list):
            try:
                # One validation of the whole list: the wire models are strict, read from JSON.
                self.legacy_history = _HISTORY.validate_json(json.dumps(history))
            except ValidationError as exc:
                logger.warning("skipped a legacy conversation_snapshot event: %s", exc.errors()[0])
                return
            self.legacy_task_id = task_id if isinstance(task_id, str) else None

    def point(self, source: RestoreSource, messages: list[ConversationMessage]) -> RestorePoint:
        task = self._last_task()
        return RestorePoint(
            source,
            self.session_id,
            self.workspace_id,
            messages=tuple(messages),
            task=task,
            session_status=self.session_status,
            task_count=max(len(self.tasks), int(task is not None)),
            started_at=self.started_at,
        )

    def _last_task(self) -> SnapshotTask | None:
        if not self.tasks:
            return None
        last = list(self.tasks.values())[-1]
        return SnapshotTask(
            task_id=last.task_id,
            prompt=last.prompt,
            status=last.status,
            step_count=min(last.steps, last.max_steps),
            max_steps=last.max_steps,
            step_cursor=last.cursor,
        )

    def rebuilt(self) -> list[ConversationMessage]:
        """Form 5: per task, its prompt (or a line saying the log did not keep it), then per step one
        assistant message with the answer's text and each tool call with its outcome, as text — a
        thread that reads right and is valid for any model, with no tool call left open."""
        messages: list[ConversationMessage] = []
        step_text: dict[str, list[str]] = {}
        step_lines: dict[str, list[str]] = {}
        for event in self.events:
            kind, task_id, step_id = event.get("eventType"), event.get("taskId"), event.get("stepId")
            payload = event["payload"]
            stamp = _timestamp(event.get("timestamp"))
            if kind == "task_started" and isinstance(task_id, str) and stamp is not None:
                prompt = payload.get("prompt")
                text = (
                    prompt
                    if isinstance(prompt, str) and prompt
                    else (f"(Task {task_id}: its prompt was not kept in the event log.)")
                )
                messages.append(self._message(f"rebuilt_{task_id}", task_id, None, Role.USER, text, stamp))
                continue
            if not isinstance(task_id, str) or not isinstance(step_id, str):
                continue
            if kind == "llm_request_started":
                step_text[step_id] = []  # a retry starts the answer again (seed 000 §6.4)
            elif kind == "text_chunk" and isinstance(payload.get("text"), str):
                step_text.setdefault(step_id, []).append(payload["text"])
            elif kind == "tool_completed":
                name = payload.get("toolName", "tool")
                status = payload.get("status", "unknown")
                detail = payload.get("outputPreview") or (payload.get("error") or {}).get("message") or ""
                line = f"[{name} {status}]" + (f" {detail}" if detail else "")
                step_lines.setdefault(step_id, []).append(line)
            elif kind == "step_completed" and stamp is not None:
                text = "".join(step_text.pop(step_id, []))
                lines = step_lines.pop(step_id, [])
                content = "\n".join(part for part in (text, *lines) if part)
                if content:
                    messages.append(
                        self._message(f"rebuilt_{step_id}", task_id, step_id, Role.ASSISTANT, content, stamp)
                    )
        return messages

    def _message(
        self, message_id: str, task_id: str, step_id: str | None, role: Role, content: str, stamp: datetime
    ) -> ConversationMessage:
        return ConversationMessage(
            message_id=message_id,
            session_id=self.session_id,
            task_id=task_id,
            step_id=step_id,
            role=role,
            content=content,
            token_count=0,
            timestamp=stamp,
        )


def _timestamp(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
