"""Elicitation in form mode (MCP 2025-11-25, client/elicitation): a server asks the user for a few values.

The server's ``requestedSchema`` is a flat object whose properties are primitives: strings (with
``format`` email, uri, date or date-time), numbers, integers, booleans, single-select enums (``enum``,
or ``oneOf`` of ``const``/``title``) and multi-select enums (``type: array`` whose ``items`` hold the
choices). :func:`form_fields` turns it into what a form shows — the desktop builds its Qt form from
it, so the rules live here, Qt-free — and :func:`validate_answer` checks what the user typed before it
is sent. The headless rule (``cowork exec`` without a terminal, and the probe) is
:func:`answer_with_defaults`: accept with each property's default, decline when a required property
has none.

The answer is ``accept`` (with ``content``), ``decline`` (the user said no) or ``cancel`` (the user
dismissed the form without choosing).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ElicitationAnswer",
    "ElicitationHandler",
    "ElicitationRequest",
    "FieldType",
    "FormField",
    "answer_with_defaults",
    "form_fields",
    "validate_answer",
]

logger = logging.getLogger(__name__)

FieldType = Literal["string", "number", "integer", "boolean"]
_PRIMITIVES: tuple[FieldType, ...] = ("string", "number", "integer", "boolean")


@dataclass(frozen=True)
class ElicitationRequest:
    server_name: str
    message: str
    requested_schema: dict[str, Any]
    tool_name: str | None = None
    """The tool whose call the server asked during, when it asked on that call's response stream."""


@dataclass(frozen=True)
class ElicitationAnswer:
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] | None = None


ElicitationHandler = Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]]


@dataclass(frozen=True)
class FormField:
    """One property of the requested schema, as a form shows it."""

    name: str
    type: FieldType
    """The JSON type of the value (of each chosen value, for a multi-select)."""
    title: str
    """The schema's ``title``, else the property name."""
    description: str | None
    default: Any
    """The schema's default (``None`` when it gives none): a form fills it in."""
    required: bool
    choices: list[tuple[Any, str]] | None = None
    """For an enum: each allowed value with the label to show (its ``title``, else the value)."""
    multiple: bool = False
    """A multi-select enum: the answer is a list of the chosen values."""
    constraints: dict[str, Any] = field(default_factory=dict)
    """What a form can check as the user types: minLength, maxLength, pattern, format, minimum,
    maximum, minItems, maxItems — those the schema gives."""


_CONSTRAINTS = ("minLength", "maxLength", "pattern", "format", "minimum", "maximum", "minItems", "maxItems")


def form_fields(schema: dict[str, Any]) -> list[FormField]:
    """The form for ``schema``, in the schema's property order.

    Raises ValueError when the schema is not a flat object of primitive properties, or a required
    property is of a kind a form cannot show; an optional one of such a kind is left out of the form
    (the answer simply omits it).
    """
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError("the requested schema is not an object")
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, dict) or not isinstance(required, list):
        raise ValueError("the requested schema's properties or required list is malformed")
    fields: list[FormField] = []
    for name, prop in properties.items():
        made = _field(name, prop, name in required)
        if made is not None:
            fields.append(made)
        elif name in required:
            raise ValueError(f"the required field {name!r} is not a primitive value a form can ask for")
    return fields


def _field(name: str, prop: object, required: bool) -> FormField | None:
    if not isinstance(prop, dict):
        return None
    kind = prop.get("type")
    multiple = kind == "array"
    options_source = prop.get("items") if multiple else prop
    if not isinstance(options_source, dict):
        return None
    choices = _choices(options_source)
    if multiple:
        if choices is None:
            return None
        kind = options_source.get("type", "string")
    elif kind is None and choices is not None:
        kind = "string"
    if kind not in _PRIMITIVES:
        return None
    title = prop.get("title")
    description = prop.get("description")
    return FormField(
        name=name,
        type=kind,
        title=title if isinstance(title, str) and title else name,
        description=description if isinstance(description, str) else None,
        default=prop.get("default"),
        required=required,
        choices=choices,
        multiple=multiple,
        constraints={key: prop[key] for key in _CONSTRAINTS if key in prop},
    )


def _choices(prop: dict[str, Any]) -> list[tuple[Any, str]] | None:
    if isinstance(prop.get("enum"), list):
        names = prop.get("enumNames")  # the 2025-06-18 way of giving labels
        labels = names if isinstance(names, list) and len(names) == len(prop["enum"]) else None
        return [(value, str(labels[i]) if labels else str(value)) for i, value in enumerate(prop["enum"])]
    for key in ("oneOf", "anyOf"):
        options = prop.get(key)
        if (
            isinstance(options, list)
            and options
            and all(isinstance(o, dict) and "const" in o for o in options)
        ):
            return [(o["const"], str(o.get("title", o["const"]))) for o in options]
    return None


def validate_answer(schema: dict[str, Any], content: object) -> list[str]:
    """What is wrong with ``content`` as an answer to ``schema``, one sentence each; empty when valid."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not isinstance(content, dict):
        return ["the answer is not an object"]
    try:
        validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        errors = sorted(validator.iter_errors(content), key=lambda error: list(error.absolute_path))
    except SchemaError as exc:
        return [f"the requested schema is not valid: {exc.message}"]
    problems = []
    for error in errors:
        where = "/".join(str(part) for part in error.absolute_path)
        problems.append(f"{where}: {error.message}" if where else error.message)
    return problems


async def answer_with_defaults(request: ElicitationRequest) -> ElicitationAnswer:
    """The headless answer: accept with the schema's defaults; decline when a required field has none
    (or the defaults do not satisfy the schema, or the schema is not a form)."""
    try:
        fields = form_fields(request.requested_schema)
    except ValueError as exc:
        logger.info("Declined %s's request for input: %s", request.server_name, exc)
        return ElicitationAnswer("decline")
    missing = [f.name for f in fields if f.required and f.default is None]
    if missing:
        logger.info("Declined %s's request for input: no default for %s", request.server_name, missing)
        return ElicitationAnswer("decline")
    content = {f.name: f.default for f in fields if f.default is not None}
    problems = validate_answer(request.requested_schema, content)
    if problems:
        logger.info(
            "Declined %s's request for input: its defaults are invalid (%s)", request.server_name, problems
        )
        return ElicitationAnswer("decline")
    return ElicitationAnswer("accept", content)
