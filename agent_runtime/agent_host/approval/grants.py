"""Session grants: "approve for this session" remembered as exactly what the user saw.

A grant is the pair (capability, grant key), where the key is the normalised target the approval
dialog showed — the resolved path, the command line, the URL's domain — computed by the caller
(``routing.PreparedCall.target``). Coverage is exact string equality of both halves: this module never
normalises, widens or pattern-matches, so ``rm -rf build`` never covers ``rm -rf build/``, a grant for
``File.Write`` never covers ``File.Delete`` of the same path, and a call without a key is never covered.
Only approvals with ``scope: "session"`` become grants; denials are never remembered session-wide (the
next request asks again, so a user who said no once is not locked out of changing their mind). A new
grant also answers requests for the very same action that are already waiting (parallel calls), since
the user has just approved exactly that action; it never reaches any other waiting request.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from contracts.approvals import ApprovalDecisionRecord
from contracts.enums import ApprovalDecision, ApprovalScope, Capability

__all__ = ["RECORDS_CARRY_GRANTS", "SessionGrant", "SessionGrants", "grant_fields", "grant_of"]

RECORDS_CARRY_GRANTS: Final = {"capability", "grant_key"} <= ApprovalDecisionRecord.model_fields.keys()
"""Whether the wire record has room for what a grant covers.

A session grant outlives a crash only if the checkpoint's decision records say which capability and
target they approved; the records are the contract's (``contracts.approvals``), so this module writes
and reads those two fields only when the contract defines them.
"""


@dataclass(frozen=True, slots=True)
class SessionGrant:
    capability: Capability
    grant_key: str
    approval_id: str
    """The user's decision that created the grant, named in the records it later approves."""


def grant_fields(capability: Capability, grant_key: str | None) -> dict[str, Any]:
    """The record fields that name what a decision was about, when the contract has them."""
    if not RECORDS_CARRY_GRANTS:
        return {}
    return {"capability": capability, "grant_key": grant_key}


def grant_of(record: ApprovalDecisionRecord) -> SessionGrant | None:
    """The session grant a decision record stands for, if it is one."""
    if record.decision is not ApprovalDecision.APPROVED or record.scope is not ApprovalScope.SESSION:
        return None
    # model_dump reads the fields by name whether or not this version of the contract declares them.
    data = record.model_dump()
    capability, grant_key = data.get("capability"), data.get("grant_key")
    if not isinstance(capability, Capability) or not isinstance(grant_key, str) or not grant_key:
        return None
    return SessionGrant(capability, grant_key, record.approval_id)


class SessionGrants:
    """The grants of one session; exact matches only (see the module docstring)."""

    def __init__(self) -> None:
        self._grants: dict[tuple[Capability, str], SessionGrant] = {}

    def add(self, grant: SessionGrant) -> None:
        # The first grant for a key stays the one cited: later ones were themselves covered by it.
        self._grants.setdefault((grant.capability, grant.grant_key), grant)

    def extend(self, grants: Iterable[SessionGrant]) -> None:
        for grant in grants:
            self.add(grant)

    def covering(self, capability: Capability, grant_key: str | None) -> SessionGrant | None:
        if not grant_key:
            return None
        return self._grants.get((capability, grant_key))

    def __len__(self) -> int:
        return len(self._grants)

    def __iter__(self) -> Iterator[SessionGrant]:
        return iter(list(self._grants.values()))
