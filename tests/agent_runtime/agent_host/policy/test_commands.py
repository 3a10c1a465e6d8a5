"""The command-line analysis behind ``Shell.Exec`` (seed 000 §8.4, extended to every command)."""

from __future__ import annotations

import time

import pytest

from agent_runtime.agent_host.policy import analyse_command
from contracts.enums import OsFamily

LINUX, WINDOWS = OsFamily.LINUX, OsFamily.WINDOWS


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("pytest tests/ --verbose", ("pytest",)),
        ("npm install && npm test | tee log", ("npm", "npm", "tee")),
        ("sudo -u root -- env FOO=1 nice -n 5 timeout 10 make", ("sudo", "env", "nice", "timeout", "make")),
        ("find . -name '*.py' -exec grep -l TODO {} +", ("find", "grep")),
        ("bash -e -c 'cd src && make'", ("bash", "cd", "make")),
        ("xargs -0 -P4 -n1 gzip", ("xargs", "gzip")),
        ("xargs", ("xargs", "echo")),
        ("if git diff --quiet; then echo clean; else git stash; fi", ("git", "echo", "git")),
        ('while read -r f; do wc -l "$f"; done < files.txt', ("read", "wc")),
        ("echo $((2 * 21))", ("echo",)),
        ("cat <<'EOF' > out.txt\n$(not a command)\nEOF\n", ("cat",)),
    ],
)
def test_every_program_of_a_posix_command_line_is_found_in_order(
    command: str, programs: tuple[str, ...]
) -> None:
    analysis = analyse_command(command, LINUX)
    assert analysis.parseable, analysis.problems
    assert analysis.programs == programs


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("git status & dir", ("git", "dir")),
        ('"C:\\Program Files\\Python\\PYTHON.EXE" -m pytest', ("python",)),
        ('cmd /s /c "npm install && npm test"', ("cmd", "npm", "npm")),
        ("build.BAT > log.txt 2>&1", ("build",)),
    ],
)
def test_every_program_of_a_cmd_line_is_found_by_folded_base_name(
    command: str, programs: tuple[str, ...]
) -> None:
    analysis = analyse_command(command, WINDOWS)
    assert analysis.parseable, analysis.problems
    assert analysis.programs == programs


@pytest.mark.parametrize(
    ("command", "os_family", "problem_word"),
    [
        ("", LINUX, "empty"),
        ("   ", LINUX, "empty"),
        ("ls \x00", LINUX, "NUL"),
        ("$CMD", LINUX, "command name"),
        ("eval ls", LINUX, "eval"),
        ("ls $((x + 1))", LINUX, "arithmetic"),
        ("sh", LINUX, "standard input"),
        ("ls 'x", LINUX, "single quote"),
        ("cat <<EOF\nnever ends", LINUX, "here-document"),
        ("echo %USERPROFILE%", WINDOWS, "%VARIABLE%"),
        ("git status\r\ndel x", WINDOWS, "several lines"),
        ("powershell", WINDOWS, "powershell"),
    ],
)
def test_what_cannot_be_analysed_is_reported_with_a_reason(
    command: str, os_family: OsFamily, problem_word: str
) -> None:
    analysis = analyse_command(command, os_family)
    assert not analysis.parseable
    assert any(problem_word in problem for problem in analysis.problems), analysis.problems


def test_commands_found_before_a_problem_are_still_reported() -> None:
    analysis = analyse_command("rm -rf / ; echo 'unbalanced", LINUX)
    assert "rm" in analysis.programs
    assert not analysis.parseable


@pytest.mark.parametrize(
    "command",
    [
        "$(" * 500 + ")" * 500,
        "(" * 500 + "ls" + ")" * 500,
        "sh -c " + '"sh -c ' * 30 + "ls" + '"' * 30,
        "{ " * 300 + "ls; " + "}; " * 300,
        "`" * 401,
    ],
)
def test_deep_nesting_is_refused_quickly_instead_of_crashing(command: str) -> None:
    started = time.perf_counter()
    analysis = analyse_command(command, LINUX)
    assert time.perf_counter() - started < 2.0
    assert not analysis.parseable


def test_a_long_command_line_is_analysed_in_linear_time() -> None:
    command = " && ".join(f"echo {i} | grep -q {i}" for i in range(20_000))
    started = time.perf_counter()
    analysis = analyse_command(command, LINUX)
    assert time.perf_counter() - started < 5.0
    assert len(analysis.programs) == 40_000


def test_the_fast_path_for_plain_lines_agrees_with_the_full_parser() -> None:
    import random

    from agent_runtime.agent_host.policy.commands.posix import _Parser, parse_posix
    from agent_runtime.agent_host.policy.commands.words import SimpleCommand

    alphabet = "abcrmz019_./:=@%+,^~-  \t"
    rng = random.Random(20260221)
    for _ in range(3_000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30)))
        fast: list[SimpleCommand] = []
        full: list[SimpleCommand] = []
        try:
            parse_posix(line, 0, fast)
        except Exception as exc:  # the same failure is expected from both
            fast_error: object = type(exc)
        else:
            fast_error = None
        try:
            _Parser(line, 0, 0, full).program(close=False)
        except Exception as exc:
            full_error: object = type(exc)
        else:
            full_error = None
        assert (fast, fast_error) == (full, full_error), repr(line)
