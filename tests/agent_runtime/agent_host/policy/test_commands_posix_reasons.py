"""The reasons a POSIX command line is refused for ``Shell.Exec`` (seed 000 §8.4) read as plain English
after "The command …": the user sees them in the denial or the approval card."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.policy import analyse_command
from contracts.enums import OsFamily


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("echo $(ls", "expects ')' but has an unexpected end"),
        ("diff <(ls a", "expects ')' but has an unexpected end"),
        ("(ls", "expects ')' but has an unexpected end"),
        ("ls )", "has unexpected ')'"),
        ("ls ;;", "has unexpected ';;'"),
        ("ls &&", "has an unexpected end where a command should be"),
        ("ls |", "has an unexpected end where a command should be"),
        ("| ls", "has '|' where a command should be"),
        ("ls >", "has a redirection > without a target"),
    ],
)
def test_a_refused_posix_line_says_why_in_plain_words(command: str, problem: str) -> None:
    for os_family in (OsFamily.LINUX, OsFamily.MACOS):
        assert analyse_command(command, os_family).problems[0] == problem
