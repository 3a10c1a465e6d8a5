"""The form an MCP server's elicitation asks the user to fill in, without Qt.

An elicitation in form mode (MCP 2025-06-18 and 2025-11-25, ``elicitation/create``) carries a
``requestedSchema``: a flat object whose properties are primitives — a string (``minLength``,
``maxLength``, ``format`` email/uri/date/date-time), a number or integer (``minimum``, ``maximum``),
a boolean, a single choice (``enum``, ``enum`` + legacy ``enumNames``, or ``oneOf`` of ``const`` +
``title``) or, since 2025-11-25, a multiple choice (``type: array`` with ``items.enum`` or
``items.anyOf``, ``minItems``, ``maxItems``). Each may have a ``title``, a ``description`` and a
``default``; ``required`` names the properties that must be answered.

:func:`form_fields` reads the schema into :class:`FormField` rows (what a form shows);
:class:`ElicitationForm` holds what the user has entered, says what is wrong with it, and gives the
``content`` an ``accept`` answer sends. The desktop cannot import the runtime's own reading of the
schema (the parts talk only over the wire), so this one is the window's.

A property the form cannot show (a nested object, an unknown type) is kept as an *unsupported* row:
when it is required the form can never be accepted — the user can still decline or cancel — and when
it is optional it is left out of the answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from desktop.i18n import QT_TRANSLATE_NOOP, translate

__all__ = [
    "ElicitationForm",
    "FieldKind",
    "FormField",
    "Option",
    "form_fields",
]


class FieldKind(StrEnum):
    TEXT = "text"
    NUMBER = "number"
    INTEGER = "integer"
    BOOLEAN = "boolean"
    CHOICE = "choice"
    MULTI_CHOICE = "multi_choice"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class Option:
    value: str
    label: str


FORMAT_HINTS = {
    "email": "name@example.com",
    "uri": "https://example.com/…",
    "date": "YYYY-MM-DD",
    "date-time": "YYYY-MM-DDThh:mm:ssZ",
}
"""What an empty text field shows for each string ``format``."""

_FORMAT_WORDS = {  # translated where used
    "email": QT_TRANSLATE_NOOP("McpForm", "{field} must be an email address (name@example.com)."),
    "uri": QT_TRANSLATE_NOOP("McpForm", "{field} must be an absolute address such as https://example.com/."),
    "date": QT_TRANSLATE_NOOP("McpForm", "{field} must be a date written YYYY-MM-DD."),
    "date-time": QT_TRANSLATE_NOOP(
        "McpForm",
        "{field} must be a date and time written YYYY-MM-DDThh:mm:ss with a time zone (Z or +01:00).",
    ),
}


@dataclass(frozen=True)
class FormField:
    """One property of the requested schema, as the form shows it."""

    name: str
    kind: FieldKind
    label: str
    """The property's ``title``, else its name."""
    description: str = ""
    required: bool = False
    default: Any = None
    """The schema's default when it fits the field (a default that does not is ignored), else None."""
    format: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    options: tuple[Option, ...] = ()
    min_items: int | None = None
    max_items: int | None = None
    unsupported_reason: str = ""

    @property
    def hint(self) -> str:
        """Placeholder text for a text field: the format's shape."""
        return FORMAT_HINTS.get(self.format or "", "")

    def label_of(self, value: str) -> str:
        """The option label shown for ``value``."""
        for option in self.options:
            if option.value == value:
                return option.label
        return value


def form_fields(schema: Mapping[str, Any] | None) -> list[FormField]:
    """The rows of the form for ``requestedSchema``, in the order its properties are listed.

    A schema that is not an object of properties gives no rows (``ElicitationForm.schema_problem``
    says why)."""
    if not isinstance(schema, Mapping):
        return []
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    required_names = schema.get("required")
    required = (
        {name for name in required_names if isinstance(name, str)}
        if isinstance(required_names, list)
        else set()
    )
    return [
        _field(str(name), spec, str(name) in required)
        for name, spec in properties.items()
        if isinstance(name, str)
    ]


def _field(name: str, spec: Any, required: bool) -> FormField:
    if not isinstance(spec, Mapping):
        return _unsupported(name, required, translate("McpForm", "its schema is not an object"))
    title = spec.get("title")
    label = " ".join(title.split()) if isinstance(title, str) and title.strip() else name
    description = spec.get("description")
    common: dict[str, Any] = {
        "name": name,
        "label": label,
        "description": description.strip() if isinstance(description, str) else "",
        "required": required,
    }
    kind = spec.get("type")
    if kind == "string":
        options = _single_options(spec)
        if options is not None:
            if not options:
                return _unsupported(name, required, translate("McpForm", "it offers no choices"), label)
            values = {option.value for option in options}
            default = spec.get("default")
            return FormField(
                kind=FieldKind.CHOICE,
                options=options,
                default=default if isinstance(default, str) and default in values else None,
                **common,
            )
        text_format = spec.get("format")
        text_default = spec.get("default")
        return FormField(
            kind=FieldKind.TEXT,
            format=text_format if isinstance(text_format, str) and text_format in FORMAT_HINTS else None,
            min_length=_count(spec.get("minLength")),
            max_length=_count(spec.get("maxLength")),
            default=text_default if isinstance(text_default, str) else None,
            **common,
        )
    if kind in ("number", "integer"):
        minimum, maximum = _number(spec.get("minimum")), _number(spec.get("maximum"))
        number_default = _number(spec.get("default"))
        if kind == "integer" and number_default is not None and not float(number_default).is_integer():
            number_default = None
        if number_default is not None and (
            (minimum is not None and number_default < minimum)
            or (maximum is not None and number_default > maximum)
        ):
            number_default = None  # a spin box cannot show a value outside its range
        if kind == "integer" and number_default is not None:
            number_default = int(number_default)
        return FormField(
            kind=FieldKind.INTEGER if kind == "integer" else FieldKind.NUMBER,
            minimum=minimum,
            maximum=maximum,
            default=number_default,
            **common,
        )
    if kind == "boolean":
        flag = spec.get("default")
        return FormField(kind=FieldKind.BOOLEAN, default=flag if isinstance(flag, bool) else None, **common)
    if kind == "array":
        items = spec.get("items")
        options = _multi_options(items) if isinstance(items, Mapping) else None
        if not options:
            return _unsupported(
                name, required, translate("McpForm", "it is a list of something other than choices"), label
            )
        values = {option.value for option in options}
        chosen = spec.get("default")
        default = (
            [value for value in chosen if isinstance(value, str) and value in values]
            if isinstance(chosen, list)
            else None
        )
        return FormField(
            kind=FieldKind.MULTI_CHOICE,
            options=options,
            default=default,
            min_items=_count(spec.get("minItems")),
            max_items=_count(spec.get("maxItems")),
            **common,
        )
    shown = kind if isinstance(kind, str) else "unknown"
    return _unsupported(
        name,
        required,
        translate("McpForm", "values of type {kind} cannot be entered in a form").format(kind=shown),
        label,
    )


def _unsupported(name: str, required: bool, reason: str, label: str | None = None) -> FormField:
    return FormField(
        name=name,
        kind=FieldKind.UNSUPPORTED,
        label=label or name,
        required=required,
        unsupported_reason=reason,
    )


def _single_options(spec: Mapping[str, Any]) -> tuple[Option, ...] | None:
    """The choices of a single-select string (None when it is free text)."""
    one_of = spec.get("oneOf")
    if isinstance(one_of, list):
        return _titled(one_of)
    values = spec.get("enum")
    if isinstance(values, list):
        names = spec.get("enumNames")  # the legacy titled form (2025-06-18)
        labels = names if isinstance(names, list) and len(names) == len(values) else values
        return _distinct(
            Option(value, str(label) if isinstance(label, str) and label.strip() else value)
            for value, label in zip(values, labels, strict=True)
            if isinstance(value, str)
        )
    return None


def _multi_options(items: Mapping[str, Any]) -> tuple[Option, ...] | None:
    any_of = items.get("anyOf")
    if isinstance(any_of, list):
        return _titled(any_of)
    values = items.get("enum")
    if isinstance(values, list):
        return _distinct(Option(value, value) for value in values if isinstance(value, str))
    return None


def _titled(entries: list[Any]) -> tuple[Option, ...]:
    return _distinct(
        Option(entry["const"], _title(entry.get("title"), entry["const"]))
        for entry in entries
        if isinstance(entry, Mapping) and isinstance(entry.get("const"), str)
    )


def _title(value: Any, fallback: str) -> str:
    return " ".join(value.split()) if isinstance(value, str) and value.strip() else fallback


def _distinct(options: Any) -> tuple[Option, ...]:
    seen: set[str] = set()
    kept = []
    for option in options:
        if option.value not in seen:
            seen.add(option.value)
            kept.append(option)
    return tuple(kept)


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if math.isfinite(value) and value >= 0 else None


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _format_ok(text_format: str, text: str) -> bool:
    if text_format == "email":
        return bool(_EMAIL.match(text))
    if text_format == "uri":
        return bool(_URI.match(text))
    if text_format == "date":
        if not _DATE.match(text):
            return False
        try:
            date.fromisoformat(text)
        except ValueError:
            return False
        return True
    if text_format == "date-time":
        if not _DATE_TIME.match(text):
            return False
        try:
            datetime.fromisoformat(text.replace("z", "Z").replace("Z", "+00:00"))
        except ValueError:
            return False
        return True
    return True


@dataclass
class ElicitationForm:
    """What the user has entered for one elicitation, checked against its schema.

    Values, per kind: text ``str`` (``""`` is empty); number ``float``/``int`` or ``None`` (not set);
    boolean ``bool``; choice the option's ``str`` value or ``None``; multiple choice ``list[str]``.
    Every field starts at its default (a boolean without one starts unchecked)."""

    schema: Mapping[str, Any] | None
    fields: list[FormField] = field(init=False)
    values: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.fields = form_fields(self.schema)
        self.values = {f.name: _initial(f) for f in self.fields if f.kind is not FieldKind.UNSUPPORTED}

    @property
    def schema_problem(self) -> str:
        """Why the schema cannot be shown as a form at all; ``""`` when it can."""
        schema = self.schema
        if not isinstance(schema, Mapping) or not isinstance(schema.get("properties", {}), Mapping):
            return translate("McpForm", "The server's request does not describe a form Cowork can show.")
        if schema.get("type", "object") != "object":
            return translate("McpForm", "The server's request does not describe a form Cowork can show.")
        return ""

    def field_named(self, name: str) -> FormField:
        for candidate in self.fields:
            if candidate.name == name:
                return candidate
        raise KeyError(name)

    def set(self, name: str, value: Any) -> None:
        """Record what the user entered in ``name``'s field (see the class docstring for the types)."""
        if self.field_named(name).kind is FieldKind.UNSUPPORTED:
            raise KeyError(f"{name} cannot be entered")
        self.values[name] = list(value) if isinstance(value, list | tuple) else value

    def problems(self) -> dict[str, str]:
        """Each field that stops the form from being accepted, with a sentence saying why, in order."""
        found: dict[str, str] = {}
        if self.schema_problem:
            found[""] = self.schema_problem
        for spec in self.fields:
            problem = self._problem(spec)
            if problem:
                found[spec.name] = problem
        return found

    def problem(self, name: str) -> str:
        return self._problem(self.field_named(name))

    @property
    def valid(self) -> bool:
        return not self.problems()

    def content(self) -> dict[str, Any]:
        """What ``accept`` sends: every field with a value; empty optional fields are left out."""
        if not self.valid:
            raise ValueError("the form is not complete: " + "; ".join(self.problems().values()))
        answer: dict[str, Any] = {}
        for spec in self.fields:
            if spec.kind is FieldKind.UNSUPPORTED:
                continue
            value = self.values.get(spec.name)
            if spec.kind is FieldKind.TEXT:
                text = str(value or "")
                if spec.format is not None:
                    text = text.strip()
                if text.strip():
                    answer[spec.name] = text
            elif spec.kind is FieldKind.MULTI_CHOICE:
                chosen = list(value or [])
                if chosen or spec.required:
                    answer[spec.name] = [o.value for o in spec.options if o.value in chosen]
            elif spec.kind is FieldKind.INTEGER and value is not None:
                answer[spec.name] = int(value)
            elif value is not None:
                answer[spec.name] = value
        return answer

    def _problem(self, spec: FormField) -> str:
        label = spec.label
        if spec.kind is FieldKind.UNSUPPORTED:
            if spec.required:
                return translate("McpForm", "{field} cannot be answered here: {reason}.").format(
                    field=label, reason=spec.unsupported_reason
                )
            return ""
        value = self.values.get(spec.name)
        if spec.kind is FieldKind.TEXT:
            return _text_problem(spec, str(value or ""))
        if spec.kind in (FieldKind.NUMBER, FieldKind.INTEGER):
            return _number_problem(spec, value)
        if spec.kind is FieldKind.BOOLEAN:
            return (
                ""
                if isinstance(value, bool)
                else translate("McpForm", "{field} must be on or off.").format(field=label)
            )
        if spec.kind is FieldKind.CHOICE:
            if value is None or value == "":
                return translate("McpForm", "Choose {field}.").format(field=label) if spec.required else ""
            if value not in {o.value for o in spec.options}:
                return translate("McpForm", "{field} must be one of the choices offered.").format(field=label)
            return ""
        return _choices_problem(spec, list(value or []))


def _initial(spec: FormField) -> Any:
    if spec.kind is FieldKind.TEXT:
        return spec.default if isinstance(spec.default, str) else ""
    if spec.kind is FieldKind.BOOLEAN:
        return spec.default if isinstance(spec.default, bool) else False
    if spec.kind is FieldKind.MULTI_CHOICE:
        return list(spec.default or [])
    return spec.default


def _text_problem(spec: FormField, text: str) -> str:
    label = spec.label
    checked = text.strip() if spec.format is not None else text
    if not checked.strip():
        return _required(spec)
    if spec.min_length is not None and len(checked) < spec.min_length:
        return (
            translate("McpForm", "{field} needs at least 1 character.")
            if spec.min_length == 1
            else translate("McpForm", "{field} needs at least {count} characters.")
        ).format(field=label, count=spec.min_length)
    if spec.max_length is not None and len(checked) > spec.max_length:
        return (
            translate("McpForm", "{field} takes at most 1 character.")
            if spec.max_length == 1
            else translate("McpForm", "{field} takes at most {count} characters.")
        ).format(field=label, count=spec.max_length)
    if spec.format is not None and not _format_ok(spec.format, checked):
        return translate("McpForm", _FORMAT_WORDS[spec.format]).format(field=label)
    return ""


def _number_problem(spec: FormField, value: Any) -> str:
    label = spec.label
    if value is None:
        return _required(spec)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return translate("McpForm", "{field} must be a number.").format(field=label)
    if spec.kind is FieldKind.INTEGER and not float(value).is_integer():
        return translate("McpForm", "{field} must be a whole number.").format(field=label)
    if spec.minimum is not None and value < spec.minimum:
        return translate("McpForm", "{field} must be at least {number}.").format(
            field=label, number=_number_text(spec.minimum)
        )
    if spec.maximum is not None and value > spec.maximum:
        return translate("McpForm", "{field} must be at most {number}.").format(
            field=label, number=_number_text(spec.maximum)
        )
    return ""


def _choices_problem(spec: FormField, chosen: Sequence[Any]) -> str:
    label = spec.label
    offered = {o.value for o in spec.options}
    if any(value not in offered for value in chosen):
        return translate("McpForm", "{field} may only hold the choices offered.").format(field=label)
    count = len(set(chosen))
    if count == 0 and spec.required and not spec.min_items:
        return translate("McpForm", "Choose at least one {field}.").format(field=label)
    if spec.min_items is not None and count < spec.min_items and (count > 0 or spec.required):
        return translate("McpForm", "Choose at least {count} for {field}.").format(
            count=spec.min_items, field=label
        )
    if spec.max_items is not None and count > spec.max_items:
        return translate("McpForm", "Choose at most {count} for {field}.").format(
            count=spec.max_items, field=label
        )
    return ""


def _number_text(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _required(spec: FormField) -> str:
    return translate("McpForm", "{field} is required.").format(field=spec.label) if spec.required else ""
