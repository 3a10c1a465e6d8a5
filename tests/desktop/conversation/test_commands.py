"""Prompt commands: which files define commands, how ``/name args`` expands, and what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.conversation.commands import CommandError, expand, expand_prompt, load_commands


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    (project / ".cowork" / "commands").mkdir(parents=True)
    user = tmp_path / "user-commands"
    user.mkdir()
    return project, user


def test_project_commands_override_the_users_and_odd_files_are_not_commands(
    folders: tuple[Path, Path],
) -> None:
    project, user = folders
    mine = project / ".cowork" / "commands"
    (user / "fix.md").write_text("user fix\n")
    (user / "deploy-check.md").write_text("user check\n")
    (mine / "fix.md").write_text("---\ndescription: 'Fix the failing test'\nmodel: x\n---\n\nproject fix\n")
    (mine / "has space.md").write_text("no\n")
    (mine / "notes.txt").write_text("no\n")
    (mine / "dir.md").mkdir()
    commands = load_commands(project, user)
    assert list(commands) == ["deploy-check", "fix"]
    assert (commands["fix"].scope, commands["fix"].template) == ("project", "project fix")
    assert commands["fix"].description == "Fix the failing test"
    assert commands["deploy-check"].description == ""
    # A general chat has only the user's.
    assert load_commands(None, user)["fix"].template == "user fix"


@pytest.mark.parametrize(
    ("template", "typed", "sent"),
    [
        ("Review $ARGUMENTS now; $ARGUMENTS again", "/r a.py  ", "Review a.py now; a.py again"),
        ("Review $ARGUMENTS", "/r", "Review "),
        ("Summarise the diff", "/r", "Summarise the diff"),
        ("Summarise the diff", "/r only tests\nand docs", "Summarise the diff\n\nonly tests\nand docs"),
        ("---\nno closing line", "/r", "---\nno closing line"),
    ],
)
def test_arguments_are_substituted_or_added(template: str, typed: str, sent: str, tmp_path: Path) -> None:
    (tmp_path / "r.md").write_text(template)
    assert expand(typed, load_commands(None, tmp_path)) == sent


@pytest.mark.parametrize(
    "typed", ["hello /r", "/etc/hosts is odd", "  plain", "/home/me/file.txt please", "no slash"]
)
def test_text_that_is_no_command_is_sent_as_typed(typed: str, tmp_path: Path) -> None:
    assert expand_prompt(typed, None, tmp_path) == typed


def test_a_double_slash_sends_one_slash(tmp_path: Path) -> None:
    assert expand_prompt("//r is a command?", None, tmp_path) == "/r is a command?"


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("/nope x", "There is no command /nope. Known commands: /a, /b."),
        ("/ x", "A command name must follow the /. Known commands: /a, /b."),
        ("/bad.name", "/bad.name is not a command name (letters, digits, _ and - only)."),
    ],
)
def test_an_unknown_command_is_refused_with_the_known_ones(typed: str, says: str, tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("b")
    (tmp_path / "a.md").write_text("a")
    with pytest.raises(CommandError) as refused:
        expand_prompt(typed, None, tmp_path)
    assert says in str(refused.value)
    assert "begin it with //" in str(refused.value)


def test_with_no_commands_the_error_says_where_to_put_them(tmp_path: Path) -> None:
    with pytest.raises(
        CommandError, match=r"No commands are defined\. Add NAME\.md files to \.cowork/commands/"
    ):
        expand_prompt("/x", tmp_path, tmp_path / "none")
