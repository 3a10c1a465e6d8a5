"""The elicitation form's model: what a schema shows, what the user must fix, what ``accept`` sends.
Qt-free; the schemas are the MCP 2025-06-18 and 2025-11-25 shapes."""

from __future__ import annotations

from typing import Any

import pytest

from desktop.mcp.form import ElicitationForm, FieldKind, Option, form_fields

CONTACT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2, "default": "Ada"},
        "email": {"type": "string", "format": "email", "description": "Where the report goes"},
        "age": {"type": "integer", "minimum": 18, "maximum": 120},
        "newsletter": {"type": "boolean", "title": "Send me news", "default": True},
    },
    "required": ["name", "email"],
}


def test_each_property_becomes_a_row_with_its_title_default_and_requirement() -> None:
    fields = form_fields(CONTACT)

    assert [(f.name, f.kind, f.label, f.required) for f in fields] == [
        ("name", FieldKind.TEXT, "Your name", True),
        ("email", FieldKind.TEXT, "email", True),
        ("age", FieldKind.INTEGER, "age", False),
        ("newsletter", FieldKind.BOOLEAN, "Send me news", False),
    ]
    assert fields[0].default == "Ada"
    assert fields[1].hint == "name@example.com"
    assert fields[1].description == "Where the report goes"
    assert (fields[2].minimum, fields[2].maximum) == (18, 120)


def test_defaults_fill_the_form_and_a_required_field_without_one_stops_accept() -> None:
    form = ElicitationForm(CONTACT)

    assert form.values == {"name": "Ada", "email": "", "age": None, "newsletter": True}
    assert form.problems() == {"email": "email is required."}
    assert not form.valid
    with pytest.raises(ValueError, match="not complete"):
        form.content()

    form.set("email", "ada@example.org")
    assert form.valid
    # The optional number left empty is not sent; the check box is sent as shown.
    assert form.content() == {"name": "Ada", "email": "ada@example.org", "newsletter": True}


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("email", "not an address", "email must be an email address (name@example.com)."),
        ("email", "a@b", "email must be an email address (name@example.com)."),
        ("name", "A", "Your name needs at least 2 characters."),
        ("name", "   ", "Your name is required."),
        ("age", 17, "age must be at least 18."),
        ("age", 121, "age must be at most 120."),
        ("age", 30.5, "age must be a whole number."),
        ("age", True, "age must be a number."),
    ],
)
def test_invalid_input_is_named_and_keeps_the_form_from_being_accepted(
    name: str, value: object, problem: str
) -> None:
    form = ElicitationForm(CONTACT)
    form.set("email", "ada@example.org")
    form.set(name, value)

    assert form.problem(name) == problem
    assert not form.valid


@pytest.mark.parametrize(
    ("text_format", "good", "bad"),
    [
        ("uri", "https://example.com/a?b=c", "example.com"),
        ("date", "2026-02-28", "2026-02-30"),
        ("date-time", "2026-02-28T13:05:00+01:00", "2026-02-28T13:05:00"),
    ],
)
def test_string_formats_are_checked(text_format: str, good: str, bad: str) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": text_format}}}
    form = ElicitationForm(schema)
    form.set("v", good)
    assert form.valid, form.problems()
    form.set("v", bad)
    assert not form.valid


def test_every_enum_shape_becomes_choices_with_their_labels() -> None:
    schema = {
        "type": "object",
        "properties": {
            "plain": {"type": "string", "enum": ["s", "m", "l"], "default": "m"},
            "titled": {
                "type": "string",
                "oneOf": [{"const": "eu", "title": "Europe"}, {"const": "us", "title": "United States"}],
            },
            "legacy": {"type": "string", "enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]},
            "many": {
                "type": "array",
                "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]},
                "minItems": 1,
                "maxItems": 1,
                "default": ["y"],
            },
        },
        "required": ["titled"],
    }
    fields = {f.name: f for f in form_fields(schema)}

    assert fields["plain"].kind is FieldKind.CHOICE
    assert fields["plain"].options == (Option("s", "s"), Option("m", "m"), Option("l", "l"))
    assert fields["titled"].options == (Option("eu", "Europe"), Option("us", "United States"))
    assert fields["legacy"].options == (Option("a", "Alpha"), Option("b", "Beta"))
    assert fields["many"].kind is FieldKind.MULTI_CHOICE
    assert fields["many"].options == (Option("x", "Ex"), Option("y", "Why"))

    form = ElicitationForm(schema)
    assert form.problems() == {"titled": "Choose titled."}
    form.set("titled", "us")
    assert form.content() == {"plain": "m", "titled": "us", "many": ["y"]}
    form.set("titled", "mars")
    assert form.problem("titled") == "titled must be one of the choices offered."
    form.set("titled", "eu")
    form.set("many", ["x", "y"])
    assert form.problem("many") == "Choose at most 1 for many."


def test_defaults_that_do_not_fit_their_field_are_not_filled_in() -> None:
    schema = {
        "type": "object",
        "properties": {
            "size": {"type": "string", "enum": ["s", "m"], "default": "xl"},
            "count": {"type": "integer", "minimum": 1, "maximum": 5, "default": 9},
            "ratio": {"type": "number", "default": "half"},
            "flag": {"type": "boolean", "default": "yes"},
        },
    }
    form = ElicitationForm(schema)
    assert form.values == {"size": None, "count": None, "ratio": None, "flag": False}
    assert form.content() == {"flag": False}


def test_a_property_the_form_cannot_show_blocks_accept_only_when_required() -> None:
    nested = {"type": "object", "properties": {"street": {"type": "string"}}}
    optional = ElicitationForm({"type": "object", "properties": {"address": nested, "n": {"type": "number"}}})
    assert optional.fields[0].kind is FieldKind.UNSUPPORTED
    optional.set("n", 2.5)
    assert optional.content() == {"n": 2.5}

    required = ElicitationForm({"type": "object", "properties": {"address": nested}, "required": ["address"]})
    assert required.problems() == {
        "address": "address cannot be answered here: values of type object cannot be entered in a form."
    }


@pytest.mark.parametrize("schema", [None, [], {"type": "array"}, {"type": "object", "properties": []}])
def test_a_request_that_is_not_a_form_can_only_be_declined(schema: Any) -> None:
    form = ElicitationForm(schema)
    assert form.fields == []
    assert not form.valid
    assert "does not describe a form" in form.problems()[""]


def test_an_empty_form_is_a_plain_confirmation() -> None:
    form = ElicitationForm({"type": "object", "properties": {}})
    assert form.valid
    assert form.content() == {}
