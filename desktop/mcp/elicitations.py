"""MCP servers' requests for input waiting for the user, oldest first. Qt-free.

Every conversation's runtime sends its ``elicitation_requested`` events here; the dialog
(:mod:`desktop.mcp.elicitation_dialog`) shows the head and the others wait their turn, as approvals
do. A request leaves the queue when the user answers it, when the runtime says it was resolved
(``elicitation_resolved``: answered elsewhere, timed out, its tool call ended), when its
conversation's runtime goes away, or when the time it was given runs out (:meth:`expire`).

Time is ``time.monotonic()`` seconds, counted from the request's arrival here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from desktop.approval.queue import PendingRequest, RequestQueue

__all__ = ["ElicitationQueue", "PendingElicitation"]


@dataclass(frozen=True)
class PendingElicitation(PendingRequest):
    """One request: ``request`` is the ``elicitation_requested`` payload (wire dict)."""

    id_field: ClassVar[str] = "elicitationId"

    refusal: str = ""
    """Why the runtime refused the answer sent before (its content did not fit the schema); the request
    is back in the queue to be corrected."""
    entered: dict[str, Any] | None = None
    """What the refused answer held: the form starts from it instead of the defaults."""

    @property
    def elicitation_id(self) -> str:
        return self.key

    @property
    def server_name(self) -> str:
        return str(self.request.get("serverName") or "an MCP server")

    @property
    def tool_name(self) -> str:
        return str(self.request.get("toolName") or "")

    @property
    def message(self) -> str:
        return str(self.request.get("message") or "")

    @property
    def schema(self) -> dict[str, Any] | None:
        schema = self.request.get("requestedSchema")
        return schema if isinstance(schema, dict) else None


class ElicitationQueue(RequestQueue[PendingElicitation]):
    """Pending requests of every conversation in arrival order (an expired one the runtime has
    cancelled). The ``ElicitationSink`` of :class:`desktop.conversation.session.ConversationSession`."""

    def __init__(self) -> None:
        super().__init__("elicitationId", "an elicitation request")

    def add(
        self,
        session_id: str,
        request: dict[str, Any],
        *,
        received_at: float,
        refusal: str = "",
        entered: dict[str, Any] | None = None,
    ) -> PendingElicitation:
        """Queue a request; one already queued (the same ``elicitationId``) is kept and returned.
        ``refusal`` and ``entered``: an answer to it was refused, and here it is again to correct.

        ``ValueError`` when it has no ``elicitationId``: nothing could ever answer it."""
        return self._add(
            request,
            lambda copy: PendingElicitation(
                session_id=session_id,
                request=copy,
                received_at=received_at,
                refusal=refusal,
                entered=dict(entered) if entered is not None else None,
            ),
        )
