"""Settings' choice of the key that sends a message: Enter (Shift+Enter for a new line), or Ctrl+Enter
(⌘↩ on macOS; Enter for a new line) for those who write long prompts."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QComboBox, QFormLayout, QGroupBox, QWidget

from desktop.i18n import translate
from desktop.settings.store import SEND_KEYS, SettingsError, SettingsStore

__all__ = ["SendKeyBox"]


class SendKeyBox(QGroupBox):
    """A combo box of :data:`~desktop.settings.store.SEND_KEYS`, showing the saved choice."""

    def __init__(self, store: SettingsStore, parent: QWidget | None = None) -> None:
        super().__init__(translate("Settings", "Composer"), parent)
        ctrl_enter = QKeySequence("Ctrl+Return").toString(QKeySequence.SequenceFormat.NativeText)
        labels = {
            "enter": translate("Settings", "Enter sends, Shift+Enter starts a new line"),
            "ctrl_enter": translate("Settings", "{keys} sends, Enter starts a new line").format(
                keys=ctrl_enter
            ),
        }
        self.combo = QComboBox()
        self.combo.setAccessibleName(translate("Settings", "Key that sends a message"))
        for key in SEND_KEYS:
            self.combo.addItem(labels[key], key)
        self.combo.setCurrentIndex(max(self.combo.findData(store.send_key()), 0))
        form = QFormLayout(self)
        form.addRow(translate("Settings", "Send &with:"), self.combo)

    @property
    def send_key(self) -> str:
        return str(self.combo.currentData())

    def save(self, store: SettingsStore, show_problems: Callable[[Mapping[str, str]], None]) -> bool:
        """Keep the choice; on failure show why and return False."""
        try:
            store.save_send_key(self.send_key)
        except SettingsError as exc:
            show_problems(exc.problems)
            return False
        return True
