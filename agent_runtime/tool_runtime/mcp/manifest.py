"""Tool manifests in (seed 003 §9.2 step 3, §9.5) and tool names out to the LLM.

:func:`translate_tools` checks each tool a server lists and keeps the sound ones; a malformed tool is
rejected alone, with the reason, and its server keeps its other tools (seed 003 §9.3, "schema
validation at manifest ingress"). A tool is sound when

* its name is 1–128 characters without whitespace or control characters, is not ``*`` (the pattern
  that means every tool of a server in ``allowedToolNames``), and is unique within the server —
  the rule ``contracts.mcp`` applies to ``"server/tool"`` names;
* its ``inputSchema`` is a JSON Schema object with ``type: object`` that is valid against the
  metaschema of its dialect — ``$schema`` when given, else 2020-12 (MCP 2025-11-25, "JSON Schema
  usage"); a dialect jsonschema does not know is refused, as the spec asks;
* its ``outputSchema``, when it has one, is the same.

:class:`WireNames` maps ``"{server}/{tool}"`` to the names the LLM dialects allow on the wire —
Anthropic's and OpenAI's tool names match ``^[A-Za-z0-9_-]{1,64}$``, so no ``/`` — and back.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "WIRE_NAME_PATTERN",
    "McpToolSpec",
    "RejectedTool",
    "WireNames",
    "schema_problem",
    "translate_tools",
    "validator_for",
    "wire_name",
]

WIRE_NAME_PATTERN: Final = r"^[A-Za-z0-9_-]{1,64}$"

_TOOL_NAME = re.compile(r"[^\s\x00-\x1f\x7f]{1,128}")
_WIRE_NAME = re.compile(WIRE_NAME_PATTERN)
_WIRE_CHARS = re.compile(r"[A-Za-z0-9_-]+")
_NOT_WIRE_CHAR = re.compile(r"[^A-Za-z0-9_-]+")
_MAX_WIRE = 64
_HASH_CHARS = 10


@dataclass(frozen=True)
class McpToolSpec:
    server_name: str
    tool_name: str
    qualified_name: str
    """``"{server}/{tool}"``: the tool's name inside Cowork (policy, approvals, events)."""
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]
    title: str | None = None


@dataclass(frozen=True)
class RejectedTool:
    server_name: str
    tool_name: str
    reason: str


def translate_tools(
    server_name: str, raw_tools: list[dict[str, Any]]
) -> tuple[list[McpToolSpec], list[RejectedTool]]:
    """The sound tools of ``raw_tools`` (``tools/list`` items, every page), and the rejected ones."""
    accepted: list[McpToolSpec] = []
    rejected: list[RejectedTool] = []
    seen: set[str] = set()
    for raw in raw_tools:
        name = raw.get("name") if isinstance(raw, dict) else None
        shown = name if isinstance(name, str) else repr(name)
        problem = _tool_problem(raw, seen)
        if problem is not None:
            rejected.append(RejectedTool(server_name, shown, problem))
            continue
        assert isinstance(name, str)
        seen.add(name)
        description, title, annotations = raw.get("description"), raw.get("title"), raw.get("annotations")
        accepted.append(
            McpToolSpec(
                server_name=server_name,
                tool_name=name,
                qualified_name=f"{server_name}/{name}",
                description=description if isinstance(description, str) else "",
                input_schema=raw["inputSchema"],
                output_schema=raw.get("outputSchema"),
                # Hints only, and untrusted unless the server is (MCP tools): kept for display.
                annotations=annotations if isinstance(annotations, dict) else {},
                title=title if isinstance(title, str) else None,
            )
        )
    return accepted, rejected


def _tool_problem(raw: object, seen: set[str]) -> str | None:
    if not isinstance(raw, dict):
        return "the tool is not an object"
    name = raw.get("name")
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        return "the name must be 1 to 128 characters without spaces or control characters"
    if name == "*":
        return "the name '*' is reserved (it means every tool of a server)"
    if name in seen:
        return "another tool of this server has the same name"
    if "description" in raw and not isinstance(raw["description"], str):
        return "the description is not text"
    problem = schema_problem(raw.get("inputSchema"))
    if problem is not None:
        return f"inputSchema: {problem}"
    if raw.get("outputSchema") is not None:
        problem = schema_problem(raw["outputSchema"])
        if problem is not None:
            return f"outputSchema: {problem}"
    return None


def schema_problem(schema: object) -> str | None:
    """Why ``schema`` is not an object schema valid in its dialect; ``None`` when it is."""
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        return "missing or not a JSON object"
    if schema.get("type") != "object":
        return 'the schema must have "type": "object"'
    validator = validator_for(schema)
    if validator is None:
        return f"the JSON Schema dialect {schema['$schema']!r} is not supported"
    try:
        validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(part) for part in exc.absolute_path)
        return f"not a valid JSON Schema{' at ' + where if where else ''}: {exc.message}"
    except RecursionError:
        return "the schema is nested too deeply"
    return None


def validator_for(schema: dict[str, Any]) -> type[Validator] | None:
    """The jsonschema validator class of ``schema``'s dialect (2020-12 when it names none); ``None``
    for a dialect jsonschema does not know."""
    from jsonschema import validators

    dialect = schema.get("$schema")
    if dialect is None:
        return validators.Draft202012Validator
    if not isinstance(dialect, str):
        return None
    known: dict[str, type[Validator]] = {
        str(cls.META_SCHEMA.get("$id", cls.META_SCHEMA.get("id", ""))).rstrip("#"): cls
        for cls in (
            validators.Draft202012Validator,
            validators.Draft201909Validator,
            validators.Draft7Validator,
            validators.Draft6Validator,
            validators.Draft4Validator,
        )
    }
    return known.get(dialect.rstrip("#"))


class WireNames:
    """Reversible names for the LLM wire: ``"{server}/{tool}"`` ↔ ``^[A-Za-z0-9_-]{1,64}$``.

    Deterministic — a name's wire form depends on that name alone — and collision-free:

    * ``{server}__{tool}`` when that is already a wire name and reads back one way only: the server
      name holds no ``__`` and does not end in ``_``, neither part holds ``--``, and it fits in 64;
    * otherwise a readable stem (the characters that fit, others as ``_``) and ``--`` with ten
      characters of the name's SHA-256 (base32): the ``--`` sets these apart from the plain form.

    Two different names could only meet in the hashed form through a 50-bit hash collision; the
    table refuses one rather than route a call to the wrong tool. Built-in tool names hold no ``__``
    and never meet either form.
    """

    def __init__(self) -> None:
        self._wire: dict[str, str] = {}
        self._internal: dict[str, str] = {}

    def wire(self, qualified_name: str) -> str:
        """The wire name of ``qualified_name`` (remembered, so :meth:`internal` can map it back)."""
        known = self._wire.get(qualified_name)
        if known is not None:
            return known
        name = wire_name(qualified_name)
        holder = self._internal.get(name)
        if holder is not None and holder != qualified_name:
            raise ValueError(f"the tool names {holder!r} and {qualified_name!r} map to the same wire name")
        self._wire[qualified_name] = name
        self._internal[name] = qualified_name
        return name

    def internal(self, wire_name: str) -> str | None:
        """The ``"{server}/{tool}"`` name ``wire_name`` stands for; ``None`` when it is not one of ours."""
        return self._internal.get(wire_name)


def wire_name(qualified_name: str) -> str:
    """The wire form of ``qualified_name`` (see :class:`WireNames`), without remembering it."""
    server, slash, tool = qualified_name.partition("/")
    if not slash or not server or not tool:
        raise ValueError(f"{qualified_name!r} is not a 'server/tool' name")
    plain = f"{server}__{tool}"
    if (
        _WIRE_CHARS.fullmatch(server)
        and _WIRE_CHARS.fullmatch(tool)
        and "__" not in server
        and not server.endswith("_")
        and "--" not in plain
        and len(plain) <= _MAX_WIRE
    ):
        return plain
    digest = base64.b32encode(hashlib.sha256(qualified_name.encode()).digest()).decode().lower()[:_HASH_CHARS]
    stem = _NOT_WIRE_CHAR.sub("_", f"{server}__{tool}").replace("--", "-_")
    stem = stem[: _MAX_WIRE - len(digest) - 2].rstrip("-")
    name = f"{stem}--{digest}"
    assert _WIRE_NAME.fullmatch(name)
    return name
