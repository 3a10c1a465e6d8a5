"""Prompt commands: ``/name args`` typed as a message expands to a Markdown file's text. Qt-free: the
window's input box and ``cowork exec`` both use it.

A command is a file ``NAME.md`` in the project's ``.cowork/commands/`` folder or in the user's
``<user config dir>/Cowork/commands/`` (the folder that holds the desktop's ``settings.json``); the
project's wins when both have one of the same name. ``NAME`` is letters, digits, ``_`` and ``-``.
The file's text is the prompt, with ``$ARGUMENTS`` replaced by what follows the name (when the text
has no ``$ARGUMENTS``, the arguments are added after it, on their own paragraph). An optional front
matter block (``---`` lines) may give a ``description:``, shown in completion; it is not sent.

A message that starts with ``/`` and a name is a command; an unknown name is an error that lists the
known commands, and nothing is sent. ``//`` at the start sends the message with one ``/``, as typed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from desktop.i18n import translate
from desktop.launch.gateway import settings_path

__all__ = [
    "ARGUMENTS",
    "CommandError",
    "PromptCommand",
    "expand",
    "expand_prompt",
    "load_commands",
    "project_commands_dir",
    "user_commands_dir",
]

logger = logging.getLogger(__name__)

ARGUMENTS = "$ARGUMENTS"
MAX_COMMAND_BYTES = 256 * 1024
"""A command file larger than this is not a prompt anyone meant to send: it is skipped."""

_NAME = re.compile(r"[A-Za-z0-9_-]+")
_INVOCATION = re.compile(r"/([^\s/]*)(?:\s+(.*))?", re.DOTALL)


class CommandError(ValueError):
    """A message that names a command that does not exist; ``str()`` says which ones do."""


@dataclass(frozen=True)
class PromptCommand:
    name: str
    template: str
    """The prompt, front matter and surrounding blank space removed."""
    description: str
    path: Path
    scope: str
    """``project`` or ``user``."""

    def expand(self, arguments: str) -> str:
        arguments = arguments.strip()
        if ARGUMENTS in self.template:
            return self.template.replace(ARGUMENTS, arguments)
        if not arguments:
            return self.template
        return f"{self.template}\n\n{arguments}"


def project_commands_dir(project: Path) -> Path:
    return project / ".cowork" / "commands"


def user_commands_dir() -> Path:
    return settings_path().parent / "commands"


def _front_matter(text: str) -> tuple[str, str]:
    """The description of the front matter (if any) and the text after it."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return "", text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            description = ""
            for line in lines[1:index]:
                key, _, value = line.partition(":")
                if key.strip().lower() == "description":
                    description = value.strip().strip("\"'")
            return description, "".join(lines[index + 1 :]).lstrip("\r\n")
    return "", text  # no closing line: not front matter, just text


def _read_dir(folder: Path, scope: str) -> dict[str, PromptCommand]:
    found: dict[str, PromptCommand] = {}
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return found  # no such folder (the usual case), or not readable
    for path in entries:
        if path.suffix.lower() != ".md" or not _NAME.fullmatch(path.stem):
            continue
        try:
            if not path.is_file() or path.stat().st_size > MAX_COMMAND_BYTES:
                continue
            text = path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")
        except OSError as exc:
            logger.warning("Could not read the prompt command %s: %s", path, exc)
            continue
        description, template = _front_matter(text)
        found[path.stem] = PromptCommand(path.stem, template.strip(), description, path, scope)
    return found


def load_commands(project: Path | None, user_dir: Path | None = None) -> dict[str, PromptCommand]:
    """The commands a conversation in ``project`` (``None``: a general chat) can use, by name, sorted;
    the project's override the user's (``user_dir``: the user's commands folder, by default
    :func:`user_commands_dir`)."""
    merged = _read_dir(user_dir if user_dir is not None else user_commands_dir(), "user")
    if project is not None:
        merged.update(_read_dir(project_commands_dir(project), "project"))
    return dict(sorted(merged.items()))


def expand(text: str, commands: Mapping[str, PromptCommand]) -> str:
    """The prompt to send for ``text``: the expansion of a ``/name args`` command, ``text`` with one
    ``/`` less for ``//…``, otherwise ``text`` itself. ``CommandError`` for an unknown name."""
    stripped = text.lstrip()
    if stripped.startswith("//"):
        return stripped[1:]
    match = _INVOCATION.fullmatch(stripped)
    if not stripped.startswith("/") or match is None:
        return text
    name, arguments = match.group(1), match.group(2) or ""
    command = commands.get(name)
    if command is not None:
        return command.expand(arguments)
    if not name:
        problem = translate("Composer", "A command name must follow the /.")
    elif not _NAME.fullmatch(name):
        problem = translate(
            "Composer", "/{name} is not a command name (letters, digits, _ and - only)."
        ).format(name=name[:60])
    else:
        problem = translate("Composer", "There is no command /{name}.").format(name=name)
    known = ", ".join(f"/{known}" for known in commands)
    listing = (
        translate("Composer", " Known commands: {commands}.").format(commands=known)
        if known
        else translate(
            "Composer",
            " No commands are defined. Add NAME.md files to .cowork/commands/ in the project or to {folder}.",
        ).format(folder=user_commands_dir())
    )
    slash = translate("Composer", " To send a message starting with /, begin it with //.")
    raise CommandError(f"{problem}{listing}{slash}")


def expand_prompt(text: str, project: Path | None, user_dir: Path | None = None) -> str:
    """:func:`expand` with the commands of ``project`` and the user (read now, so an edited file
    applies to the next message)."""
    if not text.lstrip().startswith("/"):
        return text
    return expand(text, load_commands(project, user_dir))
