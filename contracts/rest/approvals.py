"""Approval Service payloads (seed 000 §10.4, seed 001 §4.3).

``POST /approvals`` takes :class:`contracts.approvals.ApprovalDecisionRecord` as it is and answers
:class:`ApprovalResource`; posting the same ``approvalId`` again returns the stored record (a retry
never duplicates), a different decision under a used ``approvalId`` is a 409.
``GET /approvals?sessionId=`` → :class:`ApprovalList`, oldest decision first.
"""

from __future__ import annotations

from contracts._base import UtcDatetime, WireModel
from contracts.approvals import ApprovalDecisionRecord

__all__ = ["ApprovalList", "ApprovalResource"]


class ApprovalResource(ApprovalDecisionRecord):
    """The decision record as persisted, with when the service recorded it."""

    workspace_id: str
    recorded_at: UtcDatetime


class ApprovalList(WireModel):
    approvals: list[ApprovalResource]
