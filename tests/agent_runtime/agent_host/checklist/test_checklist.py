"""The session checklist's rules and its verification nudge, as seed 002 states them ("Runtime
semantics", "Verification nudge algorithm"), through the session tools' handler."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from agent_runtime.agent_host.checklist import (
    NEXT_TURN_REMINDER,
    RESULT_REMINDER,
    SessionToolOutcome,
    run_session_tool,
    verification_nudge_needed,
)
from contracts.checklist import SessionChecklist
from contracts.enums import ToolStatus
from contracts.events import EventType
from contracts.tools import ToolCall

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(tool_call_id="call_1", tool_name=name, arguments=arguments)


def run(name: str, checklist: SessionChecklist | None, **arguments: Any) -> SessionToolOutcome:
    counter = itertools.count(1)
    return run_session_tool(
        call(name, **arguments),
        checklist,
        now=NOW,
        session_id="s",
        task_id="t",
        step_id="p",
        new_id=lambda: f"gen_{next(counter)}",
    )


def made(*items: dict[str, Any]) -> SessionChecklist:
    outcome = run("task_list_create", None, items=list(items))
    assert outcome.result.status is ToolStatus.SUCCEEDED, outcome.result
    assert outcome.checklist is not None
    return outcome.checklist


# Seed 002 "Runtime semantics", one row per sentence: (tool, existing checklist?, items, accepted?, why)
SEMANTICS = [
    ("task_list_create", False, [{"title": "a"}], True, "creates the first ordered checklist"),
    ("task_list_create", True, [{"title": "a"}], False, "fails if one already exists"),
    ("task_list_update", True, [{"id": "x", "title": "b"}], True, "replaces the full ordered state"),
    ("task_list_update", False, [{"title": "b"}], False, "nothing to update before create"),
    ("task_list_create", False, [], False, "rejects an empty list"),
    ("task_list_update", True, [], False, "rejects an empty list"),
    (
        "task_list_create",
        False,
        [{"id": "d", "title": "a"}, {"id": "d", "title": "b"}],
        False,
        "duplicate ids",
    ),
    (
        "task_list_update",
        True,
        [{"id": "d", "title": "a"}, {"id": "d", "title": "b"}],
        False,
        "duplicate ids",
    ),
    (
        "task_list_create",
        False,
        [{"title": "a", "status": "in_progress"}, {"title": "b", "status": "in_progress"}],
        False,
        "more than one in_progress",
    ),
    (
        "task_list_update",
        True,
        [{"title": "a", "status": "in_progress"}, {"title": "b", "status": "in_progress"}],
        False,
        "more than one in_progress",
    ),
    ("task_list_create", False, [{"title": "a", "status": "in_progress"}], True, "one in_progress is fine"),
]


@pytest.mark.parametrize(("tool", "exists", "items", "accepted", "why"), SEMANTICS)
def test_the_seeds_semantics(tool: str, exists: bool, items: list[Any], accepted: bool, why: str) -> None:
    existing = made({"id": "x", "title": "old"}) if exists else None
    outcome = run(tool, existing, items=items)
    assert (outcome.result.status is ToolStatus.SUCCEEDED) is accepted, (why, outcome.result)
    if not accepted:
        assert outcome.result.error is not None
        assert outcome.result.error.message
        assert outcome.checklist is existing  # a refused call changes nothing
        assert outcome.events == []


def test_ids_are_kept_when_given_generated_when_omitted_and_kind_defaults_to_implementation() -> None:
    checklist = made({"id": "keep", "title": "first"}, {"title": "second", "kind": "verification"})
    assert [item.id for item in checklist.items] == ["keep", "gen_1"]
    assert [item.kind.value for item in checklist.items] == ["implementation", "verification"]
    assert [item.status.value for item in checklist.items] == ["pending", "pending"]

    outcome = run(
        "task_list_update",
        checklist,
        items=[{"title": "new first"}, {"id": "gen_1", "title": "second", "status": "completed"}],
    )
    assert outcome.checklist is not None
    # Order is the caller's; the new item does not take an id an earlier item had.
    assert [(item.id, item.title) for item in outcome.checklist.items] == [
        ("gen_2", "new first"),
        ("gen_1", "second"),
    ]
    assert outcome.events[0][0] is EventType.TASK_LIST_UPDATED
    assert outcome.events[0][1]["checklist"]["items"][1]["status"] == "completed"


def test_list_shows_the_checklist_and_bad_fields_are_named() -> None:
    checklist = made({"id": "a", "title": "first"})
    listed = run("task_list_list", checklist)
    assert json.loads(listed.result.output_text or "")["items"][0]["id"] == "a"
    assert listed.events == []
    bad = run("task_list_update", checklist, items=[{"title": "x", "status": "done"}])
    assert bad.result.status is ToolStatus.FAILED
    assert bad.result.error is not None
    assert "items[0].status" in bad.result.error.message


def item(kind: str, status: str, n: int) -> dict[str, Any]:
    return {"id": f"i{n}", "title": f"{kind} {n}", "kind": kind, "status": status}


# Seed 002 "Verification nudge algorithm": all conditions must hold.
NUDGE = [
    ([item("implementation", "completed", 1)], True, "all implementation done, no verification"),
    ([item("implementation", "completed", 1), item("other", "pending", 2)], True, "other items do not count"),
    ([item("implementation", "completed", 1), item("implementation", "pending", 2)], False, "work left"),
    ([item("implementation", "completed", 1), item("verification", "pending", 2)], False, "has verification"),
    ([item("other", "completed", 1)], False, "no implementation item"),
]


@pytest.mark.parametrize(("items", "nudged", "why"), NUDGE)
def test_the_nudge_conditions(items: list[dict[str, Any]], nudged: bool, why: str) -> None:
    created = run("task_list_create", None, items=items)
    assert created.checklist is not None
    assert created.checklist.verification_nudge_needed is nudged, why
    assert verification_nudge_needed(created.checklist) is nudged
    # A plan step or a verified path that covers verification would silence it (not in this runtime).
    assert not verification_nudge_needed(created.checklist, plan_has_verification_step=True)
    assert not verification_nudge_needed(created.checklist, verified_path=True)
    assert verification_nudge_needed(None) is False


def test_when_the_nudge_is_raised_the_result_flag_reminder_state_and_event_follow() -> None:
    checklist = made(item("implementation", "in_progress", 1), item("other", "pending", 2))
    assert not checklist.verification_nudge_needed

    outcome = run("task_list_update", checklist, items=[item("implementation", "completed", 1)])
    data = json.loads((outcome.result.output_text or "").split("\n\n")[0])
    assert data["verificationNudgeNeeded"] is True
    assert (outcome.result.output_text or "").endswith(RESULT_REMINDER)
    assert outcome.checklist is not None
    assert outcome.checklist.verification_nudge_needed
    assert outcome.checklist.reminder_pending
    assert [event for event, _ in outcome.events] == [
        EventType.TASK_LIST_UPDATED,
        EventType.TASK_LIST_VERIFICATION_NUDGED,
    ]
    assert outcome.events[1][1]["checklist"]["verificationNudgeNeeded"] is True

    # Raised once: a further update that still needs it returns the flag and the reminder, no event.
    seen = outcome.checklist.model_copy(update={"reminder_pending": False})
    again = run("task_list_update", seen, items=[item("implementation", "completed", 1)])
    assert json.loads((again.result.output_text or "").split("\n\n")[0])["verificationNudgeNeeded"] is True
    assert [event for event, _ in again.events] == [EventType.TASK_LIST_UPDATED]
    assert again.checklist is not None
    assert not again.checklist.reminder_pending

    # Adding a verification item clears it.
    fixed = run(
        "task_list_update",
        again.checklist,
        items=[item("implementation", "completed", 1), item("verification", "pending", 2)],
    )
    assert fixed.checklist is not None
    assert not fixed.checklist.verification_nudge_needed
    assert RESULT_REMINDER not in (fixed.result.output_text or "")
    assert NEXT_TURN_REMINDER


def test_the_state_round_trips_through_its_wire_form() -> None:
    checklist = made(item("implementation", "completed", 1))
    assert SessionChecklist.from_wire(checklist.to_wire()) == checklist
