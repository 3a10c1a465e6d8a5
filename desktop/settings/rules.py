"""Saved permission rules per project ("Always allow in this project"), in the settings file. Qt-free.

They live in the same ``settings.json`` as the other settings (so ``cowork exec`` reads them too), in
a section keyed by the resolved project folder::

    "projects": {"/home/me/proj": {"permissionRules": [{"kind": "command", "pattern": "pytest *"}]}}

Each rule is checked with the wire model (``contracts.permissions.PermissionRule``) when read; one
that does not validate (a hand edit gone wrong) is left out and logged, never sent. Changes are
written atomically with the store's helper, keeping every other key of the file.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from contracts.permissions import MAX_PERMISSION_RULES, PermissionRule
from contracts.validation import invalid_request, validate_json_value
from desktop.settings.store import SettingsError, SettingsStore, _write_atomically

__all__ = ["ProjectRules", "project_key"]

logger = logging.getLogger(__name__)

_SECTION = "projects"
_RULES = "permissionRules"


def project_key(folder: str | Path) -> str:
    """The key of a project folder: its resolved absolute path (symlinks followed), as a string."""
    return str(Path(folder).expanduser().resolve())


class ProjectRules:
    """The saved rules of every project, read from and written to the store's settings file."""

    def __init__(self, store: SettingsStore) -> None:
        self._store = store

    def for_project(self, folder: str | Path) -> list[PermissionRule]:
        """The project's valid rules, in the order they were saved; none when the file is unreadable."""
        return self.all().get(project_key(folder), [])

    def wire_for_project(self, folder: str | Path) -> list[dict[str, Any]]:
        """The project's rules as ``StartTask`` sends them (``taskOptions.permissionRules``)."""
        return [rule.to_wire() for rule in self.for_project(folder)]

    def all(self) -> dict[str, list[PermissionRule]]:
        """Every project that has rules, by project key."""
        try:
            data = self._store._read() or {}
        except SettingsError as exc:
            # Whoever reads the settings themselves reports an unreadable file (once); here it only
            # means there are no rules to send.
            logger.info("no saved permission rules: %s", exc)
            return {}
        projects = data.get(_SECTION)
        found: dict[str, list[PermissionRule]] = {}
        if not isinstance(projects, dict):
            return found
        for key, section in projects.items():
            entries = section.get(_RULES) if isinstance(section, dict) else None
            if not isinstance(entries, list):
                continue
            rules = [rule for entry in entries if (rule := _rule(key, entry)) is not None]
            if rules:
                found[key] = rules[:MAX_PERMISSION_RULES]
        return found

    def add(self, folder: str | Path, rules: list[PermissionRule]) -> None:
        """Save ``rules`` for the project (ones it already has are not added twice)."""
        key = project_key(folder)
        current = self.for_project(key)
        merged = current + [rule for rule in rules if rule not in current]
        self._write(key, merged[:MAX_PERMISSION_RULES])

    def add_wire(self, folder: str | Path, entries: Any) -> list[PermissionRule]:
        """Save rules as an approval request suggests them (``suggestedRules``); the rules saved.
        ``SettingsError`` when they are not valid rules or the file cannot be read."""
        if not isinstance(entries, list) or not entries:
            raise SettingsError({"rules": "The request suggests no rule to save."})
        try:
            rules = [validate_json_value(PermissionRule, entry) for entry in entries]
        except ValidationError as exc:
            raise SettingsError(
                {"rules": f"The suggested rule is not valid: {invalid_request(exc).message}"}
            ) from None
        self.add(folder, rules)
        return rules

    def remove(self, folder: str | Path, rule: PermissionRule) -> None:
        key = project_key(folder)
        self._write(key, [kept for kept in self.for_project(key) if kept != rule])

    def _write(self, key: str, rules: list[PermissionRule]) -> None:
        try:
            data = self._store._read() or {}
        except SettingsError as exc:
            # Rewriting a file that cannot be read would lose the user's other settings.
            raise SettingsError({"file": f"{exc} The rule was not saved."}) from None
        projects = data.get(_SECTION)
        projects = dict(projects) if isinstance(projects, dict) else {}
        section = projects.get(key)
        section = dict(section) if isinstance(section, dict) else {}
        if rules:
            section[_RULES] = [rule.to_wire() for rule in rules]
            projects[key] = section
        else:
            section.pop(_RULES, None)
            if section:
                projects[key] = section
            else:
                projects.pop(key, None)
        data[_SECTION] = projects
        _write_atomically(self._store.path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _rule(project: str, entry: Any) -> PermissionRule | None:
    try:
        return validate_json_value(PermissionRule, entry)
    except ValidationError as exc:
        logger.warning("a saved rule of %s is left out: %s", project, invalid_request(exc).message)
        return None
