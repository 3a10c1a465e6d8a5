"""How a ``cmd.exe /c`` line is read for ``Shell.Exec`` (seed 000 §8.4), from cmd's own rules: ``&``,
``&&``, ``||`` and ``|`` separate commands, ``( … )`` groups them, ``^`` escapes the next character, double
quotes protect operators, ``@`` before a command only hides its echo, ``%VAR%`` and ``!VAR!`` are
substituted before the line is parsed, and ``/c`` runs only the first line. Each refusal is asserted by
its reason (it ends up in the denial the user reads)."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.policy import analyse_command
from contracts.enums import OsFamily

WINDOWS = OsFamily.WINDOWS


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("a & b", ("a", "b")),
        ("a && b || c", ("a", "b", "c")),
        ("a | b | c", ("a", "b", "c")),
        ("a&b", ("a", "b")),
        ("git status &", ("git",)),  # a trailing & ends the line
        ("(a & b) > out.txt", ("a", "b")),
        ("(a) 2> err.txt >> log.txt", ("a",)),
        ("(a) < in.txt", ("a",)),
        ("(a) > out.txt", ("a",)),
        ("(a) >& x", ("a",)),
        ("echo a^", ("echo",)),  # a caret at the very end escapes nothing
        ("^a", ("a",)),  # a word may start with an escaped character...
        ("r^m", ("rm",)),  # ...or end with one
        ("echo 12&dir", ("echo", "dir")),  # digits before & are an argument, not a handle
        ("echo 1|more", ("echo", "more")),
        ("((a) & (b))", ("a", "b")),
        ("a > out.txt", ("a",)),
        ("a >> out.txt", ("a",)),
        ("a < in.txt", ("a",)),
        ("a 2> err.txt", ("a",)),
        ("a 2>&1", ("a",)),
        ("a 1>&2", ("a",)),
        ("> out.txt a", ("a",)),
        ("a 12 > x", ("a",)),  # "12" before a space is an argument, not a handle
        ("r^m x", ("rm",)),
        ("^rm x", ("rm",)),
        ('"r"m x', ("rm",)),
        ('"C:\\Program Files\\Git\\bin\\git.exe" status', ("git",)),
        ('a "x & y"', ("a",)),  # an operator inside quotes is text
        ("a x^&y", ("a",)),  # and so is an escaped one
        ("@echo off", ("echo",)),
        ("@@rm x", ("rm",)),
        ("@ rm x", ("rm",)),
        ("echo 100%", ("echo",)),
        ("echo a!", ("echo",)),
        ("  a  \r\n", ("a",)),  # blanks and one line end around the line are not a second line
        ("PYTHON.EXE -V", ("python",)),
        ("C:\\tools\\Build.CMD", ("build",)),
        ("npm.cmd test & yarn.Bat", ("npm", "yarn")),
    ],
)
def test_every_command_of_a_cmd_line_is_found(command: str, programs: tuple[str, ...]) -> None:
    analysis = analyse_command(command, WINDOWS)
    assert analysis.problems == ()
    assert analysis.programs == programs


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("a\x00b", "contains a NUL character"),
        ("a\nb", "spans several lines, and cmd /c runs only the first"),
        ("a\rb", "spans several lines, and cmd /c runs only the first"),
        ("echo %PATH%", "uses %VARIABLE% expansion, which cmd applies before it parses the line"),
        ("echo %~1", "uses %VARIABLE% expansion, which cmd applies before it parses the line"),
        ("echo %*", "uses %VARIABLE% expansion, which cmd applies before it parses the line"),
        ("echo %0", "uses %VARIABLE% expansion, which cmd applies before it parses the line"),
        ("echo !x!", "uses !VARIABLE! expansion, which can add commands when delayed expansion is on"),
        ('echo "unbalanced', "has an unbalanced double quote"),
        ("(a", "has an unbalanced parenthesis"),
        ("(a & b", "has an unbalanced parenthesis"),
        ("a)", "has an unexpected ')'"),
        ("a > ", "has a redirection without a target"),
        ("a 2>", "has a redirection without a target"),
        ("a > | b", "has a redirection without a target"),
        ("(a) >", "has a redirection without a target"),
        ("| a", "has '|' where a command should be"),
        ("a && && b", "has '&&' where a command should be"),
        ("@", "has an unexpected end where a command should be"),
        ("a &&", "has an unexpected end where a command should be"),
        ("a |", "has an unexpected end where a command should be"),
        ("(" * 17 + "a" + ")" * 17, "is nested too deeply"),
    ],
)
def test_what_cmd_could_read_another_way_is_refused_with_its_reason(command: str, problem: str) -> None:
    analysis = analyse_command(command, WINDOWS)
    assert analysis.problems[0] == problem


def test_sixteen_nested_groups_are_still_read() -> None:
    analysis = analyse_command("(" * 16 + "a" + ")" * 16, WINDOWS)
    assert (analysis.programs, analysis.problems) == (("a",), ())


def test_the_commands_before_a_refusal_are_still_reported() -> None:
    analysis = analyse_command("del x & (rm y", WINDOWS)
    assert analysis.programs[:2] == ("del", "rm")
    assert analysis.problems == ("has an unbalanced parenthesis",)


def test_a_cmd_string_nested_past_the_limit_is_refused() -> None:
    from agent_runtime.agent_host.policy.commands.programs import Collector, analyse_into

    beyond = Collector(windows=True)
    analyse_into("dir", beyond, depth=17)
    assert beyond.problems == ["is nested too deeply"]
    within = Collector(windows=True)
    analyse_into("dir", within, depth=16)
    assert (within.programs, within.problems) == (["dir"], [])
