"""``cowork-agent-runtime mcp probe URL``: check an MCP server before adding it to a policy.

Connects, initializes, lists every page of tools, calls each listed tool once — with arguments built
from its input schema (each required property's default, else its first enum value or example, else a
value of its type) — or only the tool named with ``--call`` (with ``--args``), prints one line per
request, and closes the session (DELETE).

It never waits for a person: a server's request for input is answered with the schema's defaults
(declined when a required field has none), and OAuth runs headlessly, following the authorization
redirect itself to its loopback redirect URI. ``--token`` sends a static bearer token instead.

Exit status: 0 when every request got an answer — a JSON-RPC error or a tool result flagged
``isError`` is an answer — 1 when one did not (no connection, a timeout, a stream cut for good, a
response over 10 MB, an unsupported protocol version), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from contracts.ipc import eventloop

from .elicitation import answer_with_defaults
from .errors import McpError, McpProtocolError
from .manifest import translate_tools
from .results import translate_result
from .session import DEFAULT_CALL_TIMEOUT_S, McpSession

__all__ = ["build_parser", "command_main", "example_arguments", "main", "probe"]

EXIT_OK = 0
EXIT_UNANSWERED = 1
EXIT_USAGE = 2

_SHOWN_CHARS = 100


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(prog="cowork-agent-runtime mcp probe")
    parser.description = "Check an MCP server: initialize, list its tools, call them, close."
    parser.add_argument("url", help="the server's MCP endpoint (https://…)")
    parser.add_argument(
        "--header", action="append", default=[], metavar="K:V", help="an extra request header (repeatable)"
    )
    parser.add_argument("--token", help="a static bearer token (instead of OAuth)")
    parser.add_argument("--call", metavar="TOOL", help="call only this tool")
    parser.add_argument("--args", metavar="JSON", help="the arguments for --call, a JSON object")
    parser.add_argument(
        "--allow-insecure-loopback",
        action="store_true",
        help="accept http:// to a loopback address (development)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_CALL_TIMEOUT_S,
        metavar="SECONDS",
        help="per request (default 120)",
    )
    return parser


def command_main(argv: Sequence[str]) -> int:
    """``cowork-agent-runtime mcp …``: the MCP commands (one so far, ``probe``)."""
    parser = argparse.ArgumentParser(
        prog="cowork-agent-runtime mcp", description="MCP commands for operators."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    commands.add_parser("probe", help="check an MCP server", add_help=False)
    if argv[:1] == ["probe"]:
        return main(argv[1:])
    if argv[:1] in (["-h"], ["--help"]):
        parser.print_help()
        return EXIT_OK
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: choose a command: probe", file=sys.stderr)
    return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    """``mcp probe``'s arguments (without ``mcp probe``); returns the exit status."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    headers: dict[str, str] = {}
    for header in args.header:
        name, colon, value = header.partition(":")
        if not colon or not name.strip():
            parser.error(f"--header {header!r} is not K:V")
        headers[name.strip()] = value.strip()
    arguments: dict[str, Any] | None = None
    if args.args is not None:
        if args.call is None:
            parser.error("--args goes with --call")
        try:
            arguments = json.loads(args.args)
        except ValueError as exc:
            parser.error(f"--args is not JSON: {exc}")
        if not isinstance(arguments, dict):
            parser.error("--args must be a JSON object")
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    return eventloop.run(
        probe(
            args.url,
            headers=headers,
            token=args.token,
            call=args.call,
            arguments=arguments,
            allow_insecure_loopback=args.allow_insecure_loopback,
            timeout_s=args.timeout,
        )
    )


async def probe(
    url: str,
    *,
    headers: dict[str, str] | None = None,
    token: str | None = None,
    call: str | None = None,
    arguments: dict[str, Any] | None = None,
    allow_insecure_loopback: bool = False,
    timeout_s: float = DEFAULT_CALL_TIMEOUT_S,
    out: TextIO | None = None,
) -> int:
    """Run the probe against ``url``, printing to ``out`` (stdout); returns the exit status."""
    report = _Report(out or sys.stdout)
    from .oauth import bearer_auth, memory_token_store, oauth_auth

    try:
        auth = (
            bearer_auth(token)
            if token is not None
            else oauth_auth(
                url,
                store=memory_token_store(),
                prompt=None,
                headless=True,
                allow_insecure_loopback=allow_insecure_loopback,
            )
        )
        session = McpSession(
            "probe",
            url,
            headers=headers,
            auth=auth,
            allow_insecure_loopback=allow_insecure_loopback,
            elicitation=answer_with_defaults,
            call_timeout_s=timeout_s,
        )
    except (McpError, ValueError) as exc:
        report.line("connect", "FAILED", str(exc))
        return EXIT_UNANSWERED
    answered = True
    try:
        answered = await _run(session, report, call, arguments)
    finally:
        started = time.perf_counter()
        closing = session.session_id
        await session.aclose()
        if closing is not None:
            report.line("close", "ok", "session ended (DELETE sent)", started)
    return EXIT_OK if answered else EXIT_UNANSWERED


async def _run(
    session: McpSession, report: _Report, call: str | None, arguments: dict[str, Any] | None
) -> bool:
    started = time.perf_counter()
    try:
        info = await session.open()
    except McpError as exc:
        report.line("initialize", "FAILED", str(exc), started)
        return False
    report.line(
        "initialize",
        "ok",
        f"protocol {info.protocol_version}, server {info.name or '?'} {info.version}".rstrip(),
        started,
    )
    started = time.perf_counter()
    try:
        raw_tools = await session.list_tools()
    except McpError as exc:
        report.line("tools/list", "FAILED", str(exc), started)
        return False
    tools, rejected = translate_tools("probe", raw_tools)
    report.line("tools/list", "ok", f"{len(raw_tools)} tools", started)
    for bad in rejected:
        report.line(f"  tool {bad.tool_name}", "rejected", bad.reason)
    schemas = {tool.tool_name: tool for tool in tools}
    if call is not None:
        targets = [(call, arguments if arguments is not None else _arguments_for(schemas.get(call)))]
    else:
        targets = [(tool.tool_name, example_arguments(tool.input_schema)) for tool in tools]
    answered = True
    for name, tool_arguments in targets:
        answered = await _call(session, report, name, tool_arguments, schemas.get(name)) and answered
    return answered


def _arguments_for(tool: Any) -> dict[str, Any]:
    return example_arguments(tool.input_schema) if tool is not None else {}


async def _call(
    session: McpSession, report: _Report, name: str, arguments: dict[str, Any], tool: Any
) -> bool:
    what = f"tools/call {name}"
    started = time.perf_counter()
    try:
        raw = await session.call_tool(name, arguments)
    except McpProtocolError as exc:
        report.line(what, "error", f"{exc.message} (JSON-RPC {exc.code})", started)
        return True
    except McpError as exc:
        report.line(what, "FAILED", str(exc), started)
        return False
    result = translate_result(raw, tool.output_schema if tool is not None else None)
    if raw.get("isError") is True:
        report.line(what, "tool error", result.output_text, started)
    elif result.failed:
        report.line(what, "rejected", result.error or "", started)
    else:
        extra = f" (+{len(result.attachments)} attachments)" if result.attachments else ""
        report.line(what, "ok", f"{result.output_text}{extra}", started)
    return True


class _Report:
    def __init__(self, out: TextIO) -> None:
        self._out = out

    def line(self, what: str, outcome: str, detail: str, started: float | None = None) -> None:
        shown = " ".join(detail.split())
        # A tool's output is only glimpsed; why something failed is printed whole.
        if outcome in ("ok", "tool error") and len(shown) > _SHOWN_CHARS:
            shown = shown[: _SHOWN_CHARS - 1] + "…"
        took = f"  ({(time.perf_counter() - started) * 1000:.0f} ms)" if started is not None else ""
        print(f"{what:<28} {outcome:<10} {shown}{took}", file=self._out, flush=True)


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a tool with input ``schema``: each required property filled (see the module)."""
    value = _example(schema, depth=0)
    return value if isinstance(value, dict) else {}


def _example(schema: object, depth: int) -> Any:
    if not isinstance(schema, dict) or depth > 8:
        return None
    for key in ("default", "const"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _example(schema[key][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        properties, required = schema.get("properties"), schema.get("required")
        properties = properties if isinstance(properties, dict) else {}
        required = required if isinstance(required, list) else []
        return {name: _example(properties.get(name), depth + 1) for name in required if isinstance(name, str)}
    if kind == "array":
        count = schema.get("minItems", 0)
        item = _example(schema.get("items", {}), depth + 1)
        return [item] * count if isinstance(count, int) and 0 < count <= 16 else []
    if kind == "integer":
        return _number(schema, 1)
    if kind == "number":
        return float(_number(schema, 1))
    if kind == "boolean":
        return False
    if kind == "string":
        return _string(schema)
    return None


def _number(schema: dict[str, Any], fallback: int) -> int:
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(low, int | float) and not isinstance(low, bool):
        return int(low) if float(low).is_integer() else int(low) + 1
    if isinstance(high, int | float) and not isinstance(high, bool) and high < fallback:
        return int(high)
    return fallback


_FORMATS = {
    "email": "user@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "date": "2025-01-01",
    "date-time": "2025-01-01T00:00:00Z",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


def _string(schema: dict[str, Any]) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in _FORMATS:
        return _FORMATS[fmt]
    length = schema.get("minLength")
    text = "example"
    if isinstance(length, int) and length > len(text):
        text = text + "x" * (length - len(text))
    limit = schema.get("maxLength")
    return text[:limit] if isinstance(limit, int) and limit >= 0 else text
