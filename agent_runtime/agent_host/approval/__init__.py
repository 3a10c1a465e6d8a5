"""Approvals (seed 000 §10): ask the user before risky tool calls, wait, remember, persist.

:class:`ApprovalGate` is the session's one gate; see :mod:`.gate` for the flow, :mod:`.grants` for
what a session-wide approval covers and :mod:`.persistence` for the background posts to the Approval
Service.
"""

from __future__ import annotations

from agent_runtime.agent_host.approval.errors import ApprovalConfigError, ApprovalError, WrongSession
from agent_runtime.agent_host.approval.gate import (
    DEFAULT_TIMEOUT_S,
    TIMEOUT_VARIABLE,
    ApprovalGate,
    EmitFn,
    new_approval_id,
    timeout_from_environment,
)
from agent_runtime.agent_host.approval.grants import RECORDS_CARRY_GRANTS, SessionGrant
from agent_runtime.agent_host.approval.persistence import DecisionPersister, PersistFn

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "RECORDS_CARRY_GRANTS",
    "TIMEOUT_VARIABLE",
    "ApprovalConfigError",
    "ApprovalError",
    "ApprovalGate",
    "DecisionPersister",
    "EmitFn",
    "PersistFn",
    "SessionGrant",
    "WrongSession",
    "new_approval_id",
    "timeout_from_environment",
]
