"""Saved permission rules: "Always allow in this project" answers (sent with ``StartTask``).

A rule answers only an approval prompt raised by the task's approval mode (``always`` or
``on_risky_actions``); it never allows what the policy bundle denies and never skips an approval the
bundle itself requires. Three kinds:

* ``command``: a command line, as program words: ``git status`` (exactly that) or ``pytest *`` (that
  program with those first words, then any arguments). Matched on the parsed command: every program
  the line would start must match a rule, so ``pytest -q; rm -rf /`` never matches ``pytest *``.
* ``path``: a glob relative to the project folder, matched by whole components on the resolved path
  of a ``File.Write`` or ``File.Delete``: ``*`` and ``?`` stay inside one component, ``**`` is any
  number of them (``src/**``, ``docs/*.md``).
* ``domain``: a host for ``Network.Http``, as in the policy's ``allowedDomains`` (``api.example.com``,
  ``*.example.com`` for its subdomains).
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import Field, ValidationInfo, field_validator

from contracts._base import WireModel
from contracts.urls import UrlRejected, canonical_domain, ip_text

__all__ = ["MAX_PERMISSION_RULES", "PermissionRule", "PermissionRuleKind", "command_rule_words"]

MAX_PERMISSION_RULES = 500

_COMMAND_WORD = re.compile(r"[^\s'\"\\$`;&|<>()*?\[\]{}#~]+")
"""A word the shell passes on as written: no quotes, expansions, globs, operators or comments."""
_PATH_COMPONENT = re.compile(r"[^/\\\x00-\x1f\[\]{}]+")


class PermissionRuleKind(StrEnum):
    COMMAND = "command"
    PATH = "path"
    DOMAIN = "domain"


def command_rule_words(pattern: str) -> tuple[tuple[str, ...], bool]:
    """A command rule as (words, is_prefix); ``pytest *`` → (("pytest",), True). Raises ValueError."""
    words = pattern.split(" ")
    prefix = words[-1] == "*"
    if prefix:
        words = words[:-1]
    if not words or words[0] == "":
        raise ValueError("a command rule starts with a program name")
    for word in words:
        if not _COMMAND_WORD.fullmatch(word):
            raise ValueError(
                f"{word!r} is not a plain command word (words are separated by one space; no quotes,"
                " $, globs, operators or redirections; a prefix rule ends in ' *')"
            )
    if "=" in words[0]:
        raise ValueError("a command rule starts with a program name, not an assignment")
    return tuple(words), prefix


def _check_path(pattern: str) -> None:
    if pattern.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", pattern):
        raise ValueError("a path rule is relative to the project folder, not absolute")
    for component in pattern.split("/"):
        if component in ("", ".", ".."):
            raise ValueError("a path rule has no empty, '.' or '..' components (it stays inside the project)")
        if "**" in component and component != "**":
            raise ValueError("'**' is a whole component of a path rule")
        if not _PATH_COMPONENT.fullmatch(component):
            raise ValueError(f"{component!r} is not a usable path component (no \\, [ ] or {{ }})")


def _check_domain(pattern: str) -> None:
    text = pattern[2:] if pattern.startswith("*.") else pattern
    address = ip_text(text)
    if address is not None:
        if text is not pattern:
            raise ValueError("a wildcard cannot apply to an IP address")
        return
    if not text or any(ch in text for ch in "*/:@ ?#[]"):
        raise ValueError("a domain rule is a domain name, *.domain or an IP address")
    try:
        canonical_domain(text)
    except UrlRejected as exc:
        raise ValueError(str(exc)) from None


class PermissionRule(WireModel):
    """One saved "Always allow in this project" rule."""

    kind: PermissionRuleKind
    pattern: str = Field(min_length=1, max_length=500)

    @field_validator("pattern")
    @classmethod
    def _valid_pattern(cls, pattern: str, info: ValidationInfo) -> str:
        # Checked on the field, so an error names ``pattern`` itself; ``kind`` comes first and is
        # absent here only when it was invalid (that error is reported already).
        kind = info.data.get("kind")
        if kind is PermissionRuleKind.COMMAND:
            command_rule_words(pattern)
        elif kind is PermissionRuleKind.PATH:
            _check_path(pattern)
        elif kind is PermissionRuleKind.DOMAIN:
            _check_domain(pattern)
        return pattern

    def describe(self) -> str:
        """How the rule reads in a dialog, a log line or Settings."""
        label = {"command": "Run", "path": "Write", "domain": "Connect to"}[self.kind.value]
        return f"{label}: {self.pattern}"
