"""Answering ``approval_requested`` events (seed 000 §10) in a terminal, or without one.

With a terminal, each request is shown — title, what would run, risk, details — and answered with
``y`` (this once), ``a`` (this same action for the rest of the run), ``p`` (always in this project:
saves the rule the request suggests, where the runtime offers one) or ``n``; requests are asked one
at a time, in order. Without a terminal nobody can answer, so every request is denied with a reason
that says so — unless ``--approve-all`` was given, which approves them all (and was warned about).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from desktop.approval.present import reveal_hidden
from desktop.headless.terminal import TerminalLines

__all__ = ["NO_TERMINAL_REASON", "Answer", "Approver", "TerminalApprover", "UnattendedApprover"]

NO_TERMINAL_REASON = "No terminal to ask on; run cowork exec with --approve-all to approve such actions"


@dataclass(frozen=True)
class Answer:
    decision: str  # "approved" | "denied"
    scope: str = "once"
    reason: str | None = None


class Approver(Protocol):
    async def answer(self, request: dict[str, Any]) -> Answer: ...


class UnattendedApprover:
    def __init__(self, approve_all: bool) -> None:
        self._approve_all = approve_all

    async def answer(self, request: dict[str, Any]) -> Answer:
        if self._approve_all:
            return Answer("approved", reason="approved by --approve-all")
        return Answer("denied", reason=NO_TERMINAL_REASON)


class TerminalApprover:
    """Asks on ``prompt_to`` and reads answers from ``answers_from`` (both the terminal)."""

    def __init__(
        self,
        answers_from: TextIO,
        prompt_to: TextIO,
        *,
        before_prompt: Callable[[], None],
        save_rules: Callable[[Any], str] | None = None,
        lines: TerminalLines | None = None,
    ) -> None:
        """``save_rules(suggestedRules)`` saves them for the project and says what it saved; it raises
        ``ValueError`` with a message for the user when it cannot. None: a run without a project.
        ``lines``: the terminal's reader, when other questions are asked on the same terminal."""
        self._output = prompt_to
        self._before_prompt = before_prompt
        self._save_rules = save_rules
        self._lines = lines if lines is not None else TerminalLines(answers_from)

    async def answer(self, request: dict[str, Any]) -> Answer:
        async with self._lines.one_at_a_time:
            self._before_prompt()
            self._output.write(_describe(request))
            suggested = request.get("suggestedRules") if self._save_rules is not None else None
            if suggested:
                shown = ", ".join(
                    f"{rule.get('kind')} {rule.get('pattern')}"
                    for rule in suggested
                    if isinstance(rule, dict)
                )
                self._output.write(f"   or [p]: always allow in this project ({reveal_hidden(shown)})\n")
            while True:
                self._output.write("Approve? [y]es once / [a]lways for this run / [n]o: ")
                self._output.flush()
                line = await self._next_line()
                if line is None:
                    self._output.write("\n")
                    return Answer("denied", reason="The terminal closed before an answer")
                choice = line.strip().lower()
                if choice in ("y", "yes"):
                    return Answer("approved")
                if choice in ("a", "always"):
                    return Answer("approved", scope="session")
                if suggested and self._save_rules is not None and choice in ("p", "project"):
                    try:
                        saved = self._save_rules(suggested)
                    except ValueError as exc:
                        self._output.write(f"   the rule was not saved: {reveal_hidden(str(exc))}\n")
                        continue
                    self._output.write(f"   saved for this project: {reveal_hidden(saved)}\n")
                    # The rule is sent with the next task; this run's later requests for the very
                    # same action are covered by a session approval.
                    return Answer(
                        "approved", scope="session", reason=f"Always allowed in this project: {saved}"
                    )
                if choice in ("n", "no"):
                    return Answer("denied", reason="Denied in the terminal")

    async def _next_line(self) -> str | None:
        return await self._lines.next_line()


# toolCallId only ties a request to its call: an identifier, not a fact the user decides on.
_MCP_DETAILS = frozenset({"diff", "mcpServer", "mcpTool", "arguments", "toolName", "toolCallId"})
_MAX_ARGUMENT_LINES = 40


def _arguments(arguments: object) -> list[str]:
    """An MCP call's arguments as indented JSON, cut at a screenful (the dialog shows them whole)."""
    text = json.dumps(arguments if arguments is not None else {}, indent=2, ensure_ascii=False, default=str)
    shown = text.split("\n")
    if len(shown) > _MAX_ARGUMENT_LINES:
        more = len(shown) - _MAX_ARGUMENT_LINES
        shown = [*shown[:_MAX_ARGUMENT_LINES], f"… {more} more line{'s' if more != 1 else ''}"]
    return shown


def _describe(request: dict[str, Any]) -> str:
    """The request as the terminal shows it. Every text from the wire has its control and invisible
    characters spelled out (⟨U+001B⟩): an escape sequence in a command or a file could otherwise
    rewrite the line the user reads before answering."""
    details = request.get("details") or {}
    lines = [
        "",
        f"── Approval needed: {request.get('title')}",
        f"   {request.get('actionSummary')}",
        f"   risk: {request.get('riskLevel')}",
    ]
    if request.get("description"):
        lines.append(f"   rule: {request['description']}")
    if details.get("mcpServer"):
        # An MCP server's tool (seed 003 §9.4): which server, which tool, and exactly what it is sent.
        lines.append(f"   MCP server: {details['mcpServer']}")
        lines.append(f"   tool: {details.get('mcpTool')}")
        lines.append("   arguments:")
        lines.extend(f"     {line}" for line in _arguments(details.get("arguments")))
    apart = _MCP_DETAILS if details.get("mcpServer") else frozenset({"diff", "toolCallId"})
    for key, value in details.items():
        if key in apart or value in (None, "", [], {}):
            continue
        lines.append(f"   {key}: {value}")
    if isinstance(details.get("diff"), str) and details["diff"]:
        lines.append("   the change it would make:")
        lines.extend(f"     {line}" for line in details["diff"].rstrip("\n").split("\n"))
    for note in request.get("notes") or []:
        lines.append(f"   note: {note}")
    return "\n".join(reveal_hidden(line) for line in lines) + "\n"
