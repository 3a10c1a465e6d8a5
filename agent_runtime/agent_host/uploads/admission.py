"""Whether an upload may go at all: the policy's ``Workspace.Upload`` and its size scope (seed 001 §5).

Every upload of a session passes here before it is spooled — the artifacts tools produce (seed 000
§7.5), the session history (§5.5) and the model's own ``UploadArtifact`` — so none leaves the machine
unless the bundle in force grants ``Workspace.Upload`` and the content fits its ``maxFileSizeBytes``.
An upload the policy does not allow is not sent and not kept for later: the session is told with an
``upload_skipped`` event naming it and why, and the task goes on (a history that cannot be stored costs
the conversation's record at the Workspace Service, not the work).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_runtime.agent_host.policy import Denied, PolicyEnforcer
from contracts.enums import ArtifactType
from contracts.events import EventType

__all__ = ["PolicyAdmission", "UploadIntent"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class UploadIntent:
    """One upload about to be spooled, as the admission sees it."""

    artifact_type: ArtifactType
    artifact_name: str
    size_bytes: int
    task_id: str | None
    step_id: str | None


Emit = Callable[..., object]
"""``EventEmitter.emit`` (which never raises): ``emit(event_type, payload, task_id=…, step_id=…)``."""


class PolicyAdmission:
    """The upload queue's ``admit``: the reason an upload may not go (and the event saying so), or None.

    ``enforcer`` is read at each upload, so a bundle swapped in mid-session (a refresh, an admin's
    change) decides the uploads from then on."""

    def __init__(self, enforcer: Callable[[], PolicyEnforcer], emit: Emit) -> None:
        self._enforcer = enforcer
        self._emit = emit

    def __call__(self, intent: UploadIntent) -> str | None:
        outcome = self._enforcer().check_upload(intent.size_bytes)
        if not isinstance(outcome, Denied):
            return None
        logger.info("not uploading %s: %s", intent.artifact_name, outcome.reason)
        payload: dict[str, Any] = {
            "artifactName": intent.artifact_name,
            "artifactType": intent.artifact_type.value,
            "sizeBytes": intent.size_bytes,
            "reason": outcome.reason,
            "code": outcome.code.value,
        }
        self._emit(EventType.UPLOAD_SKIPPED, payload, task_id=intent.task_id, step_id=intent.step_id)
        return outcome.reason
