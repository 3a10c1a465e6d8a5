"""Settings' list of saved permission rules: every project's "Always allow" rules, each removable."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from contracts.permissions import PermissionRule
from desktop.approval.present import reveal_hidden
from desktop.i18n import translate
from desktop.settings.rules import ProjectRules
from desktop.settings.store import SettingsError

__all__ = ["PermissionRulesBox"]

_ROLE = Qt.ItemDataRole.UserRole


class PermissionRulesBox(QGroupBox):
    """One row per rule ("project — Run: pytest *"); Remove takes the selected one out of the file at
    once (the next task of that project no longer sends it)."""

    def __init__(self, rules: ProjectRules, parent: QWidget | None = None) -> None:
        super().__init__(translate("Settings", "Always allowed in projects"), parent)
        self._rules = rules
        self.intro = QLabel(
            translate(
                "Settings",
                'Saved with "Always allow in this project" on an approval. A rule only answers what your '
                "approval mode would ask; what the policy itself asks about is always asked.",
            )
        )
        self.intro.setWordWrap(True)
        self.list = QListWidget()
        self.list.setAccessibleName(translate("Settings", "Saved permission rules"))
        self.empty_label = QLabel(translate("Settings", "No saved rules."))
        self.problem_label = QLabel()
        self.problem_label.setWordWrap(True)
        self.problem_label.hide()
        self.remove_button = QPushButton(translate("Settings", "&Remove"))
        self.remove_button.clicked.connect(self.remove_selected)
        self.list.currentItemChanged.connect(lambda *_: self._update_button())
        row = QHBoxLayout()
        row.addWidget(self.empty_label)
        row.addStretch(1)
        row.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.list)
        layout.addWidget(self.problem_label)
        layout.addLayout(row)
        self.reload()

    def rows(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def reload(self) -> None:
        self.list.clear()
        for project, rules in sorted(self._rules.all().items()):
            for rule in rules:
                item = QListWidgetItem(reveal_hidden(f"{project} — {rule.describe()}"))
                item.setData(_ROLE, (project, rule.to_wire()))
                self.list.addItem(item)
        self.list.setVisible(self.list.count() > 0)
        self.empty_label.setVisible(self.list.count() == 0)
        self._update_button()

    def remove_selected(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        project, wire = item.data(_ROLE)
        try:
            self._rules.remove(project, PermissionRule.model_validate_json(_json(wire)))
        except SettingsError as exc:
            self.problem_label.setText(str(exc))
            self.problem_label.show()
            return
        self.problem_label.hide()
        self.reload()

    def _update_button(self) -> None:
        self.remove_button.setEnabled(self.list.currentItem() is not None)


def _json(value: object) -> str:
    return json.dumps(value)
