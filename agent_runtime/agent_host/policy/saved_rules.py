"""Saved permission rules (``StartTask.taskOptions.permissionRules``): which approval prompts the
user's "Always allow in this project" answers, and what that button would save.

A rule answers only a prompt raised by the task's approval mode alone — every reason of the
:class:`ApprovalRequired` is ``risky_action`` or ``always_mode``. A prompt the bundle requires
(``requiresApproval``, ``approvalCommands``) or one for a command line the policy cannot verify is
never answered, and a denial never reaches this module: the enforcer decided it before.

Commands are matched on the policy's own parse of the line (:func:`analyse_command`): every program
the line would start — through ``;``, ``&&``, pipes, ``$(…)``, backticks, ``sh -c``, wrappers — must
match a rule, except the shell builtins an allowlist need not name either (``cd``, ``echo`` …). A line
that redirects output (``>``) writes a file no rule names, so no rule answers it, and neither does a
program run with ``NAME=value`` assignments before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from pydantic import ValidationError

from agent_runtime.agent_host.policy.commands import ProgramCall, analyse_command
from agent_runtime.agent_host.policy.domains import DomainRules, UrlRejected, parse_url_host
from agent_runtime.agent_host.policy.enforcer import IMPLICIT_COMMANDS
from agent_runtime.agent_host.policy.outcomes import ApprovalReason, ApprovalRequired
from agent_runtime.agent_host.policy.paths import PathError, path_key
from contracts.enums import Capability, OsFamily
from contracts.permissions import PermissionRule, PermissionRuleKind, command_rule_words

__all__ = ["MODE_REASONS", "SavedRules"]

MODE_REASONS = frozenset({ApprovalReason.RISKY_ACTION, ApprovalReason.ALWAYS_MODE})
"""The reasons a saved rule may answer: the user's own approval mode, nothing the bundle requires."""

_KIND_OF = {
    Capability.SHELL_EXEC: PermissionRuleKind.COMMAND,
    Capability.FILE_WRITE: PermissionRuleKind.PATH,
    Capability.FILE_DELETE: PermissionRuleKind.PATH,
    Capability.NETWORK_HTTP: PermissionRuleKind.DOMAIN,
}


@dataclass(frozen=True, slots=True)
class _CommandRule:
    rule: PermissionRule
    words: tuple[str, ...]
    prefix: bool


class SavedRules:
    """A task's saved rules, compiled for one session's OS and project folders. Pure."""

    __slots__ = ("_commands", "_domains", "_os", "_paths", "_roots", "_rules", "_windows")

    def __init__(
        self, rules: Sequence[PermissionRule], *, os_family: OsFamily, workspace_roots: Sequence[str]
    ) -> None:
        """Raises ValueError for a domain rule the policy's domain matching cannot use."""
        self._rules = tuple(rules)
        self._os = os_family
        self._windows = os_family is OsFamily.WINDOWS
        self._roots: list[str] = []
        for root in workspace_roots:
            try:
                self._roots.append(path_key(root, os_family, fold=False))
            except PathError:
                continue  # a root the policy cannot read as a path contains nothing a rule could name
        self._commands: list[_CommandRule] = []
        self._paths: list[tuple[PermissionRule, tuple[str, ...]]] = []
        domains: dict[str, PermissionRule] = {}
        for rule in self._rules:
            if rule.kind is PermissionRuleKind.COMMAND:
                words, prefix = command_rule_words(rule.pattern)
                if self._windows:
                    words = tuple(word.casefold() for word in words)
                self._commands.append(_CommandRule(rule, words, prefix))
            elif rule.kind is PermissionRuleKind.PATH:
                pattern = rule.pattern.casefold() if self._windows else rule.pattern
                self._paths.append((rule, tuple(pattern.split("/"))))
            else:
                domains[rule.pattern] = rule
        try:
            self._domains = (DomainRules(list(domains)), domains)
        except UrlRejected as exc:
            raise ValueError(str(exc)) from None

    @property
    def rules(self) -> tuple[PermissionRule, ...]:
        return self._rules

    # ------------------------------------------------------------------ answering

    def answering(self, outcome: ApprovalRequired, capability: Capability) -> PermissionRule | None:
        """The saved rule that answers this prompt, or None when the user must be asked."""
        if not outcome.reasons or not set(outcome.reasons) <= MODE_REASONS:
            return None
        kind = _KIND_OF.get(capability)
        details = outcome.details
        if kind is PermissionRuleKind.COMMAND and details.command:
            return self._command(details.command)
        if kind is PermissionRuleKind.PATH and details.path:
            return self._path(details.path)
        if kind is PermissionRuleKind.DOMAIN and details.url:
            return self._domain(details.url)
        return None

    def _command(self, command: str) -> PermissionRule | None:
        calls = self._calls(command)
        if calls is None:
            return None
        answered: PermissionRule | None = None
        for call in calls:
            rule = next((entry.rule for entry in self._commands if self._matches(entry, call)), None)
            if rule is None:
                return None
            answered = answered or rule
        return answered

    def _calls(self, command: str) -> list[ProgramCall] | None:
        """The programs of the line a rule has to cover; None when no rule may answer the line."""
        if ">" in command:
            return None
        analysis = analyse_command(command, self._os)
        if analysis.problems:
            return None
        implicit = IMPLICIT_COMMANDS[self._windows]
        calls = [
            call
            for call in analysis.calls
            # A builtin named as itself needs no rule (as in an allowlist); ./echo is a program.
            if not (call.name in implicit and self._head(call) == call.name and not call.assigned)
        ]
        # A line of builtins alone ("echo done") is answered by a rule naming them.
        return calls or list(analysis.calls) or None

    def _head(self, call: ProgramCall) -> str | None:
        head = call.words[0] if call.words else None
        if head is None or not head.literal:
            return None
        return head.text.casefold() if self._windows else head.text

    def _matches(self, entry: _CommandRule, call: ProgramCall) -> bool:
        if call.assigned or self._head(call) != entry.words[0]:
            return False
        arguments = call.words[1:]
        wanted = entry.words[1:]
        if entry.prefix:
            if len(arguments) < len(wanted):
                return False
        elif call.extended or len(arguments) != len(wanted):
            return False
        else:
            # An exact rule names every argument, so all of them must be known now.
            if not all(word.literal for word in arguments):
                return False
        for word, expected in zip(arguments, wanted, strict=False):
            text = word.text.casefold() if self._windows else word.text
            if not word.literal or text != expected:
                return False
        return True

    def _relative(self, path: str) -> list[str] | None:
        try:
            key = path_key(path, self._os, fold=False)
        except PathError:
            return None
        for root in self._roots:
            if key.startswith(root) and len(key) > len(root):
                return key[len(root) :].rstrip("/").split("/")
        return None

    def _path(self, path: str) -> PermissionRule | None:
        parts = self._relative(path)
        if parts is None:
            return None  # outside every project folder: path rules are for the project only
        return next((rule for rule, pattern in self._paths if _glob(pattern, parts)), None)

    def _domain(self, url: str) -> PermissionRule | None:
        try:
            host = parse_url_host(url)
        except UrlRejected:
            return None
        rules, by_entry = self._domains
        entry = rules.match(host)
        return by_entry[entry] if entry is not None else None

    # ------------------------------------------------------------------ suggesting

    def suggest(self, outcome: ApprovalRequired, capability: Capability) -> list[PermissionRule] | None:
        """What "Always allow in this project" would save for this prompt; None when no rule could
        answer it (the bundle requires it, or the action cannot be described by a rule)."""
        if not outcome.reasons or not set(outcome.reasons) <= MODE_REASONS:
            return None
        kind = _KIND_OF.get(capability)
        details = outcome.details
        patterns: list[str] = []
        if kind is PermissionRuleKind.COMMAND and details.command:
            calls = self._calls(details.command)
            if calls is None:
                return None
            for call in calls:
                head = call.words[0] if call.words else None
                if call.assigned or head is None or not head.literal:
                    return None
                words = [head.text]
                first = call.words[1] if len(call.words) > 1 else None
                if first is not None and first.literal and _subcommand(first.text):
                    words.append(first.text)
                patterns.append(" ".join([*words, "*"]))
        elif kind is PermissionRuleKind.PATH and details.path:
            parts = self._relative(details.path)
            if parts is None:
                return None
            patterns.append("/".join([*parts[:-1], "**"]) if len(parts) > 1 else parts[0])
        elif kind is PermissionRuleKind.DOMAIN and details.url:
            try:
                patterns.append(parse_url_host(details.url).name)
            except UrlRejected:
                return None
        else:
            return None
        try:
            return [PermissionRule(kind=kind, pattern=pattern) for pattern in dict.fromkeys(patterns)]
        except ValidationError:
            return None  # a name a rule cannot spell (quotes, globs …): the user is asked each time


def _subcommand(word: str) -> bool:
    # "git status", "npm run", "cargo test": a lower-case word, not an option, a path or a file.
    return word[:1].isascii() and word[:1].islower() and all(ch.islower() or ch in "-_:" for ch in word)


def _glob(pattern: Sequence[str], parts: Sequence[str]) -> bool:
    """Whole-component glob: ``*``/``?`` within one component, ``**`` any number of components.
    Memoised on positions, so several ``**`` stay polynomial in the path's depth."""
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        found = memo.get((i, j))
        if found is None:
            if i == len(pattern):
                found = j == len(parts)
            elif pattern[i] == "**":
                found = match(i + 1, j) or (j < len(parts) and match(i, j + 1))
            else:
                found = j < len(parts) and fnmatchcase(parts[j], pattern[i]) and match(i + 1, j + 1)
            memo[i, j] = found
        return found

    return match(0, 0)
