"""Answering ``approval_requested`` events (seed 000 §10) in a terminal, or without one.

With a terminal, each request is shown — title, what would run, risk, details — and answered with
``y`` (this once), ``a`` (this same action for the rest of the run), ``p`` (always in this project:
saves the rule the request suggests, where the runtime offers one) or ``n``; requests are asked one
at a time, in order. Without a terminal nobody can answer, so every request is denied with a reason
that says so — unless ``--approve-all`` was given, which approves them all (and was warned about).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from desktop.approval.present import reveal_hidden

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
    ) -> None:
        """``save_rules(suggestedRules)`` saves them for the project and says what it saved; it raises
        ``ValueError`` with a message for the user when it cannot. None: a run without a project."""
        self._input = answers_from
        self._output = prompt_to
        self._before_prompt = before_prompt
        self._save_rules = save_rules
        self._lines: asyncio.Queue[str | None] | None = None
        self._one_at_a_time = asyncio.Lock()

    async def answer(self, request: dict[str, Any]) -> Answer:
        async with self._one_at_a_time:
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
        if self._lines is None:
            self._lines = asyncio.Queue()
            _start_reader(self._input, self._lines, asyncio.get_running_loop())
        return await self._lines.get()


def _start_reader(stream: TextIO, lines: asyncio.Queue[str | None], loop: asyncio.AbstractEventLoop) -> None:
    # A daemon thread: a blocked read of the terminal must never keep the process from exiting.
    def read() -> None:
        while True:
            try:
                line = stream.readline()
            except (OSError, ValueError):
                line = ""
            loop.call_soon_threadsafe(lines.put_nowait, line or None)
            if not line:
                return

    threading.Thread(target=read, name="terminal-answers", daemon=True).start()


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
    for key, value in details.items():
        if key != "diff" and value not in (None, "", [], {}):
            lines.append(f"   {key}: {value}")
    if isinstance(details.get("diff"), str) and details["diff"]:
        lines.append("   the change it would make:")
        lines.extend(f"     {line}" for line in details["diff"].rstrip("\n").split("\n"))
    for note in request.get("notes") or []:
        lines.append(f"   note: {note}")
    return "\n".join(reveal_hidden(line) for line in lines) + "\n"
