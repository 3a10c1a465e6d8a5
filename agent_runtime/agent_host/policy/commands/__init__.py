"""Which programs a command line would run (seed 000 §8.4, extended to every command of the line).

``analyse_command("cd src && PATH=x make | tee log", OsFamily.LINUX)`` parses the whole line the way
the platform's shell would (``zsh -c``/``sh -c`` on macOS and Linux, ``cmd.exe /c`` on Windows) and
returns every program it would start — through ``;``, ``&&``, ``||``, pipes, ``$(…)``, backticks,
subshells, here-documents, wrappers such as ``env``/``sudo``/``xargs``/``find -exec`` and nested
``sh -c``/``cmd /c`` strings — by base name (``/bin/rm`` is ``rm``), plus the reasons, if any, why the
line cannot be analysed with confidence.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_runtime.agent_host.policy.commands.programs import MODIFIERS, Collector, ProgramCall, analyse_into
from contracts.enums import OsFamily

__all__ = ["MODIFIERS", "CommandAnalysis", "ProgramCall", "analyse_command"]


@dataclass(frozen=True, slots=True)
class CommandAnalysis:
    programs: tuple[str, ...]
    """Base names of every program the line would start, in order of appearance (Windows: lower case,
    without ``.exe``/``.com``/``.bat``/``.cmd``)."""
    problems: tuple[str, ...]
    """Why the line cannot be analysed with confidence; empty when it can. Each reads after "The
    command …", e.g. "uses eval, which runs or defines code the policy cannot see"."""
    calls: tuple[ProgramCall, ...] = ()
    """``programs`` with the words each would receive, for saved permission rules."""

    @property
    def parseable(self) -> bool:
        return not self.problems


def analyse_command(command: str, os_family: OsFamily) -> CommandAnalysis:
    collector = Collector(windows=os_family is OsFamily.WINDOWS)
    if not command.strip():
        return CommandAnalysis((), ("is empty",))
    analyse_into(command, collector)
    return CommandAnalysis(
        tuple(collector.programs), tuple(dict.fromkeys(collector.problems)), tuple(collector.calls)
    )
