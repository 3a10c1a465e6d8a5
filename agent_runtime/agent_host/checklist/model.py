"""The checklist's rules (seed 002 "Runtime semantics"), on ``SessionChecklist`` values.

* ``task_list_create`` makes the first ordered checklist; it fails if one already exists.
* ``task_list_update`` replaces the whole ordered state.
* An item keeps the id the caller gives it; an item without one gets a new id.
* ``kind`` defaults to ``implementation`` (``status`` to ``pending``).
* Both refuse an empty list, an id used twice and more than one ``in_progress`` item.

Functions return a new checklist or raise :class:`ChecklistRejected` with a sentence the model can act
on; nothing here does I/O or keeps state, so the rules are tested on their own.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from contracts.checklist import ChecklistItem, ChecklistItemStatus, SessionChecklist
from contracts.validation import invalid_request

__all__ = [
    "MAX_ITEMS",
    "ChecklistRejected",
    "create_checklist",
    "new_item_id",
    "parse_items",
    "update_checklist",
]

MAX_ITEMS = 100
"""A checklist is a handful of steps; a hundred is already no longer a checklist."""


class ChecklistRejected(ValueError):
    """The call breaks one of the checklist's rules; the message says which."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def new_item_id() -> str:
    return f"item_{uuid.uuid4().hex[:8]}"


def parse_items(
    arguments: dict[str, Any], *, new_id: Callable[[], str] = new_item_id, taken: Collection[str] = ()
) -> list[ChecklistItem]:
    """The ordered items of a create or update call, with ids filled in and the rules checked."""
    raw = arguments.get("items")
    if not isinstance(raw, list):
        raise ChecklistRejected("items must be a list of checklist items.", field="items")
    if not raw:
        raise ChecklistRejected("items must not be empty: a checklist has at least one item.", field="items")
    if len(raw) > MAX_ITEMS:
        raise ChecklistRejected(
            f"items holds {len(raw)} entries; at most {MAX_ITEMS} are allowed.", field="items"
        )
    extra = sorted(set(arguments) - {"items"})
    if extra:
        raise ChecklistRejected(f"Unknown argument {extra[0]!r}; only items is accepted.", field=extra[0])
    given = [entry.get("id") for entry in raw if isinstance(entry, dict) and entry.get("id") is not None]
    used = {*taken, *(i for i in given if isinstance(i, str))}
    items: list[ChecklistItem] = []
    for index, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise ChecklistRejected(
                f"items[{index}] must be an object with a title.", field=f"items[{index}]"
            )
        data = dict(entry)
        if data.get("id") is None:
            fresh = new_id()
            while fresh in used:
                fresh = new_id()
            used.add(fresh)
            data["id"] = fresh
        try:
            # Through JSON, as the arguments arrived: strict models read enums from strings there.
            items.append(ChecklistItem.model_validate_json(json.dumps(data)))
        except ValidationError as exc:
            shape = invalid_request(exc)
            where = f"items[{index}].{shape.details.get('field', '')}".rstrip(".")
            raise ChecklistRejected(
                f"{where}: {shape.details.get('problem', shape.message)}", field=where
            ) from None
    seen: set[str] = set()
    for index, item in enumerate(items):
        if item.id in seen:
            raise ChecklistRejected(
                f"Item id {item.id!r} is used twice; ids must be unique.", field=f"items[{index}].id"
            )
        seen.add(item.id)
    running = [item.id for item in items if item.status is ChecklistItemStatus.IN_PROGRESS]
    if len(running) > 1:
        raise ChecklistRejected(
            f"Only one item may be in_progress at a time; {', '.join(running)} all are.", field="items"
        )
    return items


def create_checklist(
    current: SessionChecklist | None,
    arguments: dict[str, Any],
    *,
    now: datetime,
    new_id: Callable[[], str] = new_item_id,
) -> SessionChecklist:
    if current is not None:
        raise ChecklistRejected(
            "A checklist already exists for this session; use task_list_update to change it."
        )
    items = parse_items(arguments, new_id=new_id)
    return SessionChecklist(items=items, created_at=now, updated_at=now)


def update_checklist(
    current: SessionChecklist | None,
    arguments: dict[str, Any],
    *,
    now: datetime,
    new_id: Callable[[], str] = new_item_id,
) -> SessionChecklist:
    if current is None:
        raise ChecklistRejected("There is no checklist yet; create one with task_list_create.")
    # Ids of the items replaced stay reserved for the items that name them, not for new ones.
    items = parse_items(arguments, new_id=new_id, taken=[item.id for item in current.items])
    return current.model_copy(update={"items": items, "updated_at": now})
