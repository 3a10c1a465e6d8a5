"""The verification nudge (seed 002 "Verification nudge algorithm").

The checklist raises a non-blocking reminder when all of these hold:

1. a session checklist exists;
2. at least one item has kind ``implementation``;
3. every implementation item is completed;
4. no item has kind ``verification``;
5. the current plan does not already contain a verification step;
6. the task is not already on a verified path with explicit verification coverage.

Conditions 5 and 6 name parts of the seed's system this runtime does not have — there is no plan
beside the checklist and no post-hoc verification runtime — so neither ever holds here, and
:func:`verification_nudge_needed` takes them as arguments (False by default) to keep the rule whole.

When the nudge is needed, ``task_list_update`` answers ``verificationNudgeNeeded: true``, create and
update add :data:`RESULT_REMINDER` to the result the model reads, the flag is kept in the checklist
(checkpointed), ``task_list_verification_nudged`` is emitted, and the next request carries
:data:`NEXT_TURN_REMINDER` once. The reminder is advice: it never fails the task.
"""

from __future__ import annotations

from contracts.checklist import ChecklistItemKind, ChecklistItemStatus, SessionChecklist

__all__ = ["NEXT_TURN_REMINDER", "RESULT_REMINDER", "apply_nudge", "verification_nudge_needed"]

RESULT_REMINDER = (
    "Reminder: every implementation item is completed but the checklist has no verification item."
    " Add a verification item (kind: verification) and run it before you finish."
)
NEXT_TURN_REMINDER = (
    "Checklist reminder: the implementation items are done and nothing has verified them yet. Add or"
    " run a verification item before you give your final answer."
)


def verification_nudge_needed(
    checklist: SessionChecklist | None,
    *,
    plan_has_verification_step: bool = False,
    verified_path: bool = False,
) -> bool:
    if checklist is None:
        return False
    implementation = [item for item in checklist.items if item.kind is ChecklistItemKind.IMPLEMENTATION]
    return (
        bool(implementation)
        and all(item.status is ChecklistItemStatus.COMPLETED for item in implementation)
        and not any(item.kind is ChecklistItemKind.VERIFICATION for item in checklist.items)
        and not plan_has_verification_step
        and not verified_path
    )


def apply_nudge(checklist: SessionChecklist) -> tuple[SessionChecklist, bool]:
    """The checklist with its nudge flag set from the rule, and whether the nudge was just raised
    (was not needed before): only then is the event emitted and the next-turn reminder armed."""
    needed = verification_nudge_needed(checklist)
    raised = needed and not checklist.verification_nudge_needed
    update = {"verification_nudge_needed": needed}
    if raised:
        update["reminder_pending"] = True
    elif not needed:
        update["reminder_pending"] = False
    return checklist.model_copy(update=update), raised
