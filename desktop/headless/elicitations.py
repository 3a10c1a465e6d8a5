"""Answering ``elicitation_requested`` events — an MCP server asking the user for a few values during a
tool call — in a terminal, or without one.

With a terminal the request is shown (which server asks, its message) and answered field by field,
each field's default shown and taken on an empty line; ``d`` declines and ``c`` cancels instead. Without
a terminal nobody can answer, so the headless rule of the MCP client applies: accept with the schema's
defaults, decline when a required field has none (or the defaults do not make a valid answer).

The form is read with the desktop's own reading of the schema (:mod:`desktop.mcp.form`, Qt-free): the
window and ``cowork exec`` offer the same fields and check them the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from desktop.approval.present import reveal_hidden
from desktop.headless.terminal import TerminalLines
from desktop.mcp.form import ElicitationForm, FieldKind, FormField

__all__ = ["DefaultsElicitor", "Elicitor", "ElicitorAnswer", "TerminalElicitor", "defaults_answer"]


@dataclass(frozen=True)
class ElicitorAnswer:
    action: str  # "accept" | "decline" | "cancel"
    content: dict[str, Any] | None = None


class Elicitor(Protocol):
    async def answer(self, request: dict[str, Any]) -> ElicitorAnswer: ...


def defaults_answer(schema: Any) -> ElicitorAnswer:
    """Accept with each field's default; decline when that is not a complete, valid answer."""
    form = ElicitationForm(schema if isinstance(schema, dict) else None)
    if not form.valid:
        return ElicitorAnswer("decline")
    return ElicitorAnswer("accept", form.content())


class DefaultsElicitor:
    async def answer(self, request: dict[str, Any]) -> ElicitorAnswer:
        return defaults_answer(request.get("requestedSchema"))


class TerminalElicitor:
    """Asks on ``prompt_to`` and reads the answers from ``lines`` (the terminal both are)."""

    def __init__(self, lines: TerminalLines, prompt_to: TextIO, *, before_prompt: Callable[[], None]) -> None:
        self._lines = lines
        self._output = prompt_to
        self._before_prompt = before_prompt

    async def answer(self, request: dict[str, Any]) -> ElicitorAnswer:
        async with self._lines.one_at_a_time:
            self._before_prompt()
            form = ElicitationForm(request.get("requestedSchema"))
            self._say(_introduction(request))
            if form.schema_problem:
                self._say(f"   {form.schema_problem} It is declined.")
                return ElicitorAnswer("decline")
            while True:
                self._ask("Answer? [a]nswer / [d]ecline / [c]ancel: ")
                line = await self._lines.next_line()
                if line is None:
                    return ElicitorAnswer("cancel")
                choice = line.strip().lower()
                if choice in ("d", "decline"):
                    return ElicitorAnswer("decline")
                if choice in ("c", "cancel"):
                    return ElicitorAnswer("cancel")
                if choice in ("a", "answer", ""):
                    break
            for spec in form.fields:
                if spec.kind is FieldKind.UNSUPPORTED:
                    if spec.required:
                        self._say(f"   {spec.label} cannot be answered here ({spec.unsupported_reason}).")
                        return ElicitorAnswer("decline")
                    continue
                if not await self._field(form, spec):
                    return ElicitorAnswer("cancel")
            return ElicitorAnswer("accept", form.content())

    async def _field(self, form: ElicitationForm, spec: FormField) -> bool:
        """Ask for one field until its value is acceptable; False when the terminal closed."""
        if spec.description:
            self._say(f"   {spec.description}")
        if spec.options:
            for number, option in enumerate(spec.options, start=1):
                self._say(f"     {number}) {option.label}")
        while True:
            self._ask(f"   {spec.label}{_shape(spec)}{_default(spec, form.values.get(spec.name))}: ")
            line = await self._lines.next_line()
            if line is None:
                return False
            text = line.strip()
            before = form.values.get(spec.name)
            if text:
                value, problem = _parse(spec, text)
                if problem:
                    self._say(f"   {problem}")
                    continue
                form.set(spec.name, value)
            problem = form.problem(spec.name)
            if not problem:
                return True
            self._say(f"   {problem}")
            if text:
                form.set(spec.name, before)  # the offer stays what it was: an empty line still takes it

    def _say(self, text: str) -> None:
        self._output.write(reveal_hidden(text) + "\n")
        self._output.flush()

    def _ask(self, text: str) -> None:
        self._output.write(reveal_hidden(text))
        self._output.flush()


def _introduction(request: dict[str, Any]) -> str:
    server = request.get("serverName") or "an MCP server"
    tool = request.get("toolName")
    asking = f"── The MCP server {server} asks" + (f" (during {tool})" if tool else "")
    return f"\n{asking}:\n   {request.get('message') or ''}"


def _shape(spec: FormField) -> str:
    marks = []
    if spec.kind is FieldKind.BOOLEAN:
        marks.append("y/n")
    elif spec.kind is FieldKind.MULTI_CHOICE:
        marks.append("numbers, comma-separated")
    elif spec.kind is FieldKind.CHOICE:
        marks.append("number")
    elif spec.hint:
        marks.append(spec.hint)
    if spec.required:
        marks.append("required")
    return f" ({', '.join(marks)})" if marks else ""


def _default(spec: FormField, value: Any) -> str:
    if value is None or value == "" or value == []:
        return ""
    if spec.kind is FieldKind.BOOLEAN:
        return f" [{'y' if value else 'n'}]"
    if spec.kind is FieldKind.CHOICE:
        return f" [{spec.label_of(str(value))}]"
    if spec.kind is FieldKind.MULTI_CHOICE:
        return f" [{', '.join(spec.label_of(str(item)) for item in value)}]"
    return f" [{value}]"


def _parse(spec: FormField, text: str) -> tuple[Any, str]:
    """The value typed for ``spec`` and, when it cannot be read, why."""
    if spec.kind is FieldKind.TEXT:
        return text, ""
    if spec.kind is FieldKind.BOOLEAN:
        lowered = text.lower()
        if lowered in ("y", "yes", "true", "on", "1"):
            return True, ""
        if lowered in ("n", "no", "false", "off", "0"):
            return False, ""
        return None, f"{spec.label}: answer y or n."
    if spec.kind in (FieldKind.NUMBER, FieldKind.INTEGER):
        try:
            number = float(text)
        except ValueError:
            return None, f"{spec.label} must be a number."
        if not math.isfinite(number):
            return None, f"{spec.label} must be a number."
        if spec.kind is FieldKind.INTEGER:
            if not number.is_integer():
                return None, f"{spec.label} must be a whole number."
            return int(number), ""
        return number, ""
    if spec.kind is FieldKind.CHOICE:
        chosen = _option(spec, text)
        if chosen is None:
            return None, f"{spec.label}: choose one of the numbers shown."
        return chosen, ""
    values = []
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        chosen = _option(spec, part)
        if chosen is None:
            return None, f"{spec.label}: {part!r} is not one of the numbers shown."
        values.append(chosen)
    return values, ""


def _option(spec: FormField, text: str) -> str | None:
    if text.isdigit() and 1 <= int(text) <= len(spec.options):
        return spec.options[int(text) - 1].value
    for option in spec.options:
        if text == option.value or text.lower() == option.label.lower():
            return option.value
    return None
