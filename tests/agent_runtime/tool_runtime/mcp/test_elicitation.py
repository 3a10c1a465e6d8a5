"""Form-mode elicitation: the form's fields, checking an answer, the headless rule."""

from __future__ import annotations

from typing import Any

import pytest

from agent_runtime.tool_runtime.mcp.elicitation import (
    ElicitationAnswer,
    ElicitationRequest,
    FormField,
    answer_with_defaults,
    form_fields,
    validate_answer,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "title": "E-mail", "description": "Where to write"},
        "age": {"type": "integer", "minimum": 18, "maximum": 150},
        "ratio": {"type": "number", "default": 0.5},
        "subscribe": {"type": "boolean", "default": False},
        "color": {
            "type": "string",
            "enum": ["red", "green"],
            "enumNames": ["Red", "Green"],
            "default": "red",
        },
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["a", "b"]},
            "minItems": 1,
            "default": ["a"],
        },
    },
    "required": ["email", "age"],
}


def test_form_fields_lists_each_property_as_a_form_shows_it() -> None:
    fields = {field.name: field for field in form_fields(SCHEMA)}
    assert list(fields) == ["email", "age", "ratio", "subscribe", "color", "size", "tags"]
    assert fields["email"] == FormField(
        name="email",
        type="string",
        title="E-mail",
        description="Where to write",
        default=None,
        required=True,
        constraints={"format": "email"},
    )
    assert fields["age"].constraints == {"minimum": 18, "maximum": 150}
    assert fields["age"].title == "age"
    assert (fields["ratio"].type, fields["ratio"].default, fields["ratio"].required) == ("number", 0.5, False)
    assert fields["subscribe"].type == "boolean"
    assert fields["color"].choices == [("red", "Red"), ("green", "Green")]
    assert fields["size"].choices == [("s", "Small"), ("l", "Large")]
    assert fields["tags"].multiple
    assert fields["tags"].choices == [("a", "a"), ("b", "b")]


def test_an_optional_nested_property_is_left_out_and_a_required_one_refused() -> None:
    nested = {"type": "object", "properties": {"deep": {"type": "object"}, "name": {"type": "string"}}}
    assert [field.name for field in form_fields(nested)] == ["name"]
    with pytest.raises(ValueError, match="deep"):
        form_fields({**nested, "required": ["deep"]})
    with pytest.raises(ValueError, match="not an object"):
        form_fields({"type": "string"})


def test_validate_answer_names_each_problem() -> None:
    assert validate_answer(SCHEMA, {"email": "ada@example.com", "age": 36}) == []
    problems = validate_answer(SCHEMA, {"email": "ada@example.com", "age": 12, "color": "blue"})
    assert len(problems) == 2
    assert any(problem.startswith("age:") for problem in problems)
    assert any(problem.startswith("color:") for problem in problems)
    assert validate_answer(SCHEMA, {"age": 20}) == ["'email' is a required property"]
    assert validate_answer(SCHEMA, {"email": "not an address", "age": 20}) == [
        "email: 'not an address' is not a 'email'"
    ]
    assert validate_answer(SCHEMA, ["a list"]) == ["the answer is not an object"]


def _request(schema: dict[str, Any]) -> ElicitationRequest:
    return ElicitationRequest("srv", "Need input", schema)


async def test_headless_accepts_with_the_defaults() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "default": "Ada"}, "note": {"type": "string"}},
        "required": ["name"],
    }
    assert await answer_with_defaults(_request(schema)) == ElicitationAnswer("accept", {"name": "Ada"})


async def test_headless_declines_when_a_required_field_has_no_default() -> None:
    assert await answer_with_defaults(_request(SCHEMA)) == ElicitationAnswer("decline")


async def test_headless_declines_defaults_that_break_the_schema_and_schemas_that_are_no_form() -> None:
    bad_default = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "default": 1}}}
    assert (await answer_with_defaults(_request(bad_default))).action == "decline"
    assert (await answer_with_defaults(_request({"type": "array"}))).action == "decline"


async def test_headless_accepts_an_empty_form() -> None:
    assert await answer_with_defaults(_request({"type": "object", "properties": {}})) == ElicitationAnswer(
        "accept", {}
    )
