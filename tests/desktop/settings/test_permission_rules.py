"""Saved permission rules in the desktop: "Always allow in this project" on the approval dialog saves the
suggested rule for the conversation's project, Settings lists every project's rules and removes them,
and the file keeps every other setting (it is the one cowork exec reads)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from desktop.approval.dialog import ApprovalDialog
from desktop.approval.queue import ApprovalQueue
from desktop.settings.dialog import SettingsDialog
from desktop.settings.rules import ProjectRules, project_key
from desktop.settings.store import AppSettings, SettingsStore
from tests.desktop.approval.requests import request

PYTEST_RULE = {"kind": "command", "pattern": "pytest *"}


def approval_dialog(
    qtbot: QtBot, queue: ApprovalQueue, rules: ProjectRules, folders: dict[str, str]
) -> tuple[ApprovalDialog, list[tuple[str, ...]]]:
    def save(session_id: str, suggested: list[Any]) -> str:
        if session_id not in folders:
            raise ValueError("This conversation has no project folder to save the rule for.")
        return ", ".join(rule.describe() for rule in rules.add_wire(folders[session_id], suggested))

    dialog = ApprovalDialog(queue, arm_delay_ms=0, save_rules=save)
    qtbot.addWidget(dialog)
    decisions: list[tuple[str, ...]] = []
    dialog.decided.connect(lambda *args: decisions.append(args))
    return dialog, decisions


def test_always_allow_in_this_project_saves_the_suggested_rule_and_approves(
    qtbot: QtBot, store: SettingsStore, settings_file: Path, tmp_path: Path
) -> None:
    store.save(AppSettings(preset="demo"), None)
    project = tmp_path / "proj"
    project.mkdir()
    queue = ApprovalQueue()
    dialog, decisions = approval_dialog(qtbot, queue, ProjectRules(store), {"sess_1": str(project)})
    queue.add("sess_1", request(suggestedRules=[PYTEST_RULE]), received_at=0.0)
    assert dialog.project_button.isVisible()
    assert "command pytest *" in dialog.project_button.toolTip()

    dialog.project_button.click()

    assert decisions == [
        ("sess_1", "appr_1", "approved", "session", "Always allowed in this project: Run: pytest *")
    ]
    saved = json.loads(settings_file.read_text())
    assert saved["projects"][project_key(project)]["permissionRules"] == [PYTEST_RULE]
    assert saved["gateway"]["preset"] == "demo"  # the other settings are kept
    assert ProjectRules(store).wire_for_project(project) == [PYTEST_RULE]
    assert dialog.shown is None


def test_no_button_when_the_runtime_suggests_no_rule(qtbot: QtBot, store: SettingsStore) -> None:
    queue = ApprovalQueue()
    dialog, _ = approval_dialog(qtbot, queue, ProjectRules(store), {"sess_1": "/p"})
    queue.add("sess_1", request(), received_at=0.0)
    assert dialog.shown is not None
    assert not dialog.project_button.isVisible()


def test_a_rule_that_cannot_be_saved_is_explained_and_the_request_stays(
    qtbot: QtBot, store: SettingsStore, settings_file: Path
) -> None:
    queue = ApprovalQueue()
    dialog, decisions = approval_dialog(qtbot, queue, ProjectRules(store), {})
    queue.add("sess_1", request(suggestedRules=[PYTEST_RULE]), received_at=0.0)
    dialog.project_button.click()
    assert decisions == []
    assert "no project folder" in dialog.project_problem.text()
    assert dialog.shown is not None
    assert not settings_file.exists()


def test_settings_lists_every_projects_rules_and_removes_one(
    qtbot: QtBot, store: SettingsStore, settings_file: Path, tmp_path: Path
) -> None:
    store.save(AppSettings(preset="demo"), None)
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    rules = ProjectRules(store)
    rules.add_wire(one, [PYTEST_RULE, {"kind": "path", "pattern": "src/**"}])
    rules.add_wire(two, [{"kind": "domain", "pattern": "example.com"}])
    dialog = SettingsDialog(store, environ={})
    qtbot.addWidget(dialog)
    dialog.show()
    box = dialog.permission_rules
    assert box.rows() == [
        f"{project_key(one)} — Run: pytest *",
        f"{project_key(one)} — Write: src/**",
        f"{project_key(two)} — Connect to: example.com",
    ]
    assert not box.remove_button.isEnabled()

    box.list.setCurrentRow(0)
    box.remove_button.click()

    assert box.rows() == [
        f"{project_key(one)} — Write: src/**",
        f"{project_key(two)} — Connect to: example.com",
    ]
    assert ProjectRules(store).wire_for_project(one) == [{"kind": "path", "pattern": "src/**"}]
    assert json.loads(settings_file.read_text())["gateway"]["preset"] == "demo"


def test_a_broken_rule_in_the_file_is_left_out_not_sent(
    store: SettingsStore, settings_file: Path, tmp_path: Path
) -> None:
    settings_file.parent.mkdir(parents=True)
    key = project_key(tmp_path)
    entries = [{"kind": "command", "pattern": "pytest; rm -rf /"}, PYTEST_RULE, "junk"]
    settings_file.write_text(json.dumps({"projects": {key: {"permissionRules": entries}}}))
    assert ProjectRules(store).wire_for_project(tmp_path) == [PYTEST_RULE]
