"""Tool manifests checked at ingress, and the reversible names on the LLM wire."""

from __future__ import annotations

import random
import re
import string
from typing import Any

import pytest

from agent_runtime.tool_runtime.mcp.manifest import WIRE_NAME_PATTERN, WireNames, translate_tools, wire_name

OK_SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def _tool(name: object = "search", **fields: Any) -> dict[str, Any]:
    return {"name": name, "description": "Search", "inputSchema": OK_SCHEMA, **fields}


def test_a_sound_tool_is_translated_with_its_qualified_name() -> None:
    specs, rejected = translate_tools(
        "docs",
        [_tool(title="Search docs", annotations={"readOnlyHint": True}, outputSchema={"type": "object"})],
    )
    assert rejected == []
    [spec] = specs
    assert spec.qualified_name == "docs/search"
    assert (spec.server_name, spec.tool_name, spec.description, spec.title) == (
        "docs",
        "search",
        "Search",
        "Search docs",
    )
    assert spec.input_schema == OK_SCHEMA
    assert spec.output_schema == {"type": "object"}
    assert spec.annotations == {"readOnlyHint": True}


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ({"name": "x"}, "inputSchema: missing"),
        (_tool(inputSchema=None), "inputSchema: missing"),
        (_tool(inputSchema={"type": "string"}), '"type": "object"'),
        (_tool(inputSchema={"properties": {}}), '"type": "object"'),
        (_tool(inputSchema={"type": "object", "properties": {"x": {"type": 12}}}), "not a valid JSON Schema"),
        (_tool(inputSchema={"type": "object", "required": "q"}), "not a valid JSON Schema"),
        (_tool(inputSchema={"type": "object", "$schema": "https://example.com/x"}), "dialect"),
        (_tool(inputSchema={"type": "object", "$schema": 7}), "dialect"),
        (_tool(outputSchema={"type": "array"}), "outputSchema"),
        (_tool(outputSchema={"type": "object", "properties": 3}), "outputSchema"),
        (_tool(name=""), "name"),
        (_tool(name="has space"), "name"),
        (_tool(name="x" * 129), "name"),
        (_tool(name="bell\x07"), "name"),
        (_tool(name=None), "name"),
        (_tool(name="*"), "reserved"),
        (_tool(description=["not", "text"]), "description"),
        ("not an object", "not an object"),
    ],
)
def test_a_malformed_tool_is_rejected_alone(raw: Any, reason: str) -> None:
    specs, rejected = translate_tools("srv", [_tool("good"), raw, _tool("also_good")])
    assert [spec.tool_name for spec in specs] == ["good", "also_good"]
    [bad] = rejected
    assert reason in bad.reason
    assert bad.server_name == "srv"


@pytest.mark.parametrize(
    "dialect",
    [
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-04/schema#",
    ],
)
def test_known_dialects_are_checked_against_their_own_metaschema(dialect: str) -> None:
    specs, rejected = translate_tools("srv", [_tool(inputSchema={**OK_SCHEMA, "$schema": dialect})])
    assert rejected == []
    assert len(specs) == 1


def test_a_tool_listed_twice_keeps_the_first() -> None:
    specs, rejected = translate_tools("srv", [_tool("dup"), _tool("dup")])
    assert len(specs) == 1
    assert "same name" in rejected[0].reason


def test_a_deeply_nested_schema_is_refused_not_crashed() -> None:
    schema: dict[str, Any] = {"type": "object"}
    inner = schema
    for _ in range(5000):
        inner["properties"] = {"x": {"type": "object"}}
        inner = inner["properties"]["x"]
    _, rejected = translate_tools("srv", [_tool(inputSchema=schema)])
    assert len(rejected) == 1


# ---------------------------------------------------------------------- wire names

WIRE = re.compile(WIRE_NAME_PATTERN)


def test_a_plain_name_reads_as_itself() -> None:
    assert wire_name("github/search_issues") == "github__search_issues"


@pytest.mark.parametrize(
    "qualified",
    [
        "docs/admin.tools.list",
        "docs/has space",
        "docs/ünïcödé",
        "docs/" + "x" * 128,
        "a__b/c",
        "a_/b",
        "a/b--c",
        "srv/a/b",
        "my-server/tool",
    ],
)
def test_every_name_maps_to_a_wire_name_and_back(qualified: str) -> None:
    names = WireNames()
    wired = names.wire(qualified)
    assert WIRE.fullmatch(wired)
    assert names.internal(wired) == qualified
    assert names.wire(qualified) == wired
    assert wire_name(qualified) == wired, "the same name maps the same way in another table"


def test_names_that_would_read_alike_stay_apart() -> None:
    names = WireNames()
    pairs = [("a__b/c", "a/b__c"), ("a_/b", "a/_b"), ("s/t.x", "s/t_x"), ("s/" + "y" * 70, "s/" + "y" * 71)]
    for left, right in pairs:
        assert names.wire(left) != names.wire(right)
        assert names.internal(names.wire(left)) == left
        assert names.internal(names.wire(right)) == right


def test_a_hashed_name_never_equals_a_plain_one() -> None:
    # A server cannot pick a tool name whose plain wire form is another tool's hashed form: plain
    # forms never hold "--", hashed ones always do.
    hashed = wire_name("docs/admin.tools.list")
    assert "--" in hashed
    server, _, tool = hashed.partition("__")
    assert wire_name(f"{server}/{tool}") != hashed


def test_many_random_names_are_distinct_and_valid() -> None:
    rng = random.Random(19)
    alphabet = string.ascii_letters + string.digits + "_-./: é"
    names = WireNames()
    seen: dict[str, str] = {}
    for _ in range(3000):
        server = "".join(rng.choice(string.ascii_letters + "_-") for _ in range(rng.randint(1, 32)))
        tool = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 128)))
        qualified = f"{server}/{tool}"
        wired = names.wire(qualified)
        assert WIRE.fullmatch(wired)
        assert seen.setdefault(wired, qualified) == qualified
        assert names.internal(wired) == qualified


def test_an_unknown_wire_name_maps_to_nothing() -> None:
    names = WireNames()
    names.wire("a/b")
    assert names.internal("ReadFile") is None
    assert names.internal("a__c") is None


def test_a_name_without_a_server_is_refused() -> None:
    with pytest.raises(ValueError, match="server/tool"):
        wire_name("ReadFile")
