"""Settings and first-run dialogs over :class:`SettingsStore` (thin: validation and storage live there).

``SettingsDialog``: on its General page the LLM gateway (preset, endpoint, dialect, model, token), the
backend (URL, empty for the local one, and its token), and task defaults (approval mode, max steps);
Save validates and stores — tokens to the OS keychain only — or shows what to fix and keeps everything
typed. Its MCP servers page lists the servers of the conversation shown (nothing there is saved).
``FirstRunDialog``: shown when nothing is configured; the presets side by side, the offline demo
model among them and labelled as what it is. Both emit ``saved(AppSettings)`` after a save.

A saved token is never read back into a field: the field says whether one is saved for the endpoint
shown, typing replaces it, and "Remove the saved token" deletes it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QStyle,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.mcp.servers import McpServersSource
from desktop.mcp.servers_view import McpServersPage
from desktop.settings.presets import CUSTOM, DEMO, PRESETS, Preset, preset_named
from desktop.settings.rules import ProjectRules
from desktop.settings.rules_view import PermissionRulesBox
from desktop.settings.store import (
    APPROVAL_MODES,
    DEFAULT_MAX_STEPS,
    AppSettings,
    SettingsError,
    SettingsStore,
    parse_max_steps,
    validate,
)

__all__ = ["APPROVAL_MODE_LABELS", "FirstRunDialog", "GatewayForm", "SettingsDialog"]

APPROVAL_MODE_LABELS = {
    "on_risky_actions": "Ask before risky actions (recommended)",
    "always": "Ask before every action",
    "never": "Never ask (the policy still blocks what it forbids)",
}
DIALECT_LABELS = {"anthropic": "Anthropic Messages API", "openai": "OpenAI Chat Completions"}
_FIELD_ORDER = (
    "file", "preset", "endpoint", "api", "model", "token", "backend_url", "backend_token", "approval_mode",
    "max_steps",
)  # fmt: skip
_GATEWAY_VARIABLES = (
    "LLM_GATEWAY_ENDPOINT",
    "LLM_GATEWAY_API",
    "LLM_GATEWAY_MODEL",
    "LLM_GATEWAY_AUTH_TOKEN",
)


class GatewayForm(QWidget):
    """Endpoint, dialect, model and token of the LLM gateway; a preset fills them in."""

    def __init__(self, store: SettingsStore, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._store = store
        self._preset = CUSTOM
        self.endpoint_edit = QLineEdit()
        self.endpoint_edit.setPlaceholderText("https://api.anthropic.com")
        self.endpoint_edit.editingFinished.connect(lambda: self._update_token_state(clear=False))
        self.api_combo = QComboBox()
        for api, label in DIALECT_LABELS.items():
            self.api_combo.addItem(label, api)
        self.model_edit = QLineEdit()
        self.token_edit = QLineEdit()
        self.token_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.token_edit.setAccessibleName("Token")
        self.remove_token_box = QCheckBox("Remove the saved token")
        self.remove_token_box.toggled.connect(lambda on: self.token_edit.setEnabled(not on))
        self.token_state_label = _note_label()
        self.demo_note = _note_label()
        self.demo_note.setText(
            "Nothing to set up: Cowork starts the offline demo model itself when a conversation needs it."
        )

        self._fields = QWidget()
        form = QFormLayout(self._fields)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("&Endpoint:", self.endpoint_edit)
        form.addRow("&Dialect:", self.api_combo)
        form.addRow("&Model:", self.model_edit)
        form.addRow("&Token:", self.token_edit)
        form.addRow("", self.token_state_label)
        form.addRow("", self.remove_token_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.demo_note)
        layout.addWidget(self._fields)

    @property
    def preset(self) -> str:
        return self._preset

    def load(self, settings: AppSettings) -> None:
        self._preset = settings.preset or CUSTOM
        self.endpoint_edit.setText(settings.endpoint)
        self._set_api(settings.api)
        self.model_edit.setText(settings.model)
        self._after_change()

    def apply_preset(self, preset_id: str) -> None:
        """Fill the fields from a preset (``custom`` keeps them as they are)."""
        self._preset = preset_id
        preset = preset_named(preset_id)
        if preset is not None and preset is not DEMO:
            self.endpoint_edit.setText(preset.endpoint)
            self._set_api(preset.api)
            self.model_edit.setText(preset.model)
        self._after_change()

    def gateway_of(self, base: AppSettings) -> AppSettings:
        """``base`` with the gateway as the form shows it."""
        if self._preset == DEMO.id:
            return AppSettings(
                preset=DEMO.id,
                endpoint="",
                api=DEMO.api,
                model=DEMO.model,
                backend_url=base.backend_url,
                approval_mode=base.approval_mode,
                max_steps=base.max_steps,
            )
        return AppSettings(
            preset=self._preset,
            endpoint=self.endpoint_edit.text().strip(),
            api=str(self.api_combo.currentData()),
            model=self.model_edit.text().strip(),
            backend_url=base.backend_url,
            approval_mode=base.approval_mode,
            max_steps=base.max_steps,
        )

    def token_value(self) -> str | None:
        """For :meth:`SettingsStore.save`: ``""`` removes, ``None`` keeps, else the new token."""
        if self._preset == DEMO.id:
            return None
        if self.remove_token_box.isChecked():
            return ""
        return self.token_edit.text().strip() or None

    def _set_api(self, api: str) -> None:
        index = self.api_combo.findData(api)
        self.api_combo.setCurrentIndex(max(index, 0))

    def _after_change(self) -> None:
        demo = self._preset == DEMO.id
        self.demo_note.setVisible(demo)
        self._fields.setVisible(not demo)
        self._update_token_state(clear=True)

    def _update_token_state(self, *, clear: bool) -> None:
        preset = preset_named(self._preset)
        need = preset.token if preset is not None else "optional"
        endpoint = self.endpoint_edit.text().strip()
        saved = bool(endpoint) and self._preset != DEMO.id and self._store.token_for(endpoint) is not None
        if clear or not saved:
            self.remove_token_box.setChecked(False)
        self.remove_token_box.setVisible(saved)
        if clear:
            self.token_edit.clear()
        if saved:
            self.token_edit.setPlaceholderText("Saved in the OS keychain; type to replace it")
            self.token_state_label.setText("A token for this endpoint is saved in the OS keychain.")
        elif need == "none":
            self.token_edit.setPlaceholderText("Not needed")
            self.token_state_label.setText("")
        else:
            self.token_edit.setPlaceholderText(
                "Paste the API key" if need == "required" else "If it asks for one"
            )
            self.token_state_label.setText("The token is kept in the OS keychain, never in a file.")
        self.token_state_label.setVisible(bool(self.token_state_label.text()))


class _SavingDialog(QDialog):
    """What both dialogs share: an error area, and saving through the store on accept."""

    saved = Signal(object)

    def __init__(self, store: SettingsStore, parent: QWidget | None) -> None:
        super().__init__(parent)
        self._store = store
        self.gateway = GatewayForm(store)
        self.error_icon = QLabel()
        size = self.style().pixelMetric(QStyle.PixelMetric.PM_SmallIconSize)
        self.error_icon.setPixmap(
            self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(size)
        )
        self.error_label = QLabel()
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setWordWrap(True)
        self.error_label.setAccessibleName("Problems")
        self._error_row = QWidget()
        row = QHBoxLayout(self._error_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.error_icon, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.error_label, 1)
        self._error_row.hide()

    def show_problems(self, problems: Mapping[str, str]) -> None:
        self.error_label.setText("\n".join(problems.values()))
        self._error_row.show()
        for field in problems:
            widget = self._field_widget(field)
            if widget is not None and widget.isVisibleTo(self):
                widget.setFocus(Qt.FocusReason.OtherFocusReason)
                break

    def _field_widget(self, field: str) -> QWidget | None:
        return {
            "endpoint": self.gateway.endpoint_edit,
            "api": self.gateway.api_combo,
            "model": self.gateway.model_edit,
            "token": self.gateway.token_edit,
        }.get(field)

    def _save(self, settings: AppSettings, token: str | None, backend_token: str | None = None) -> bool:
        try:
            self._store.save(settings, token, backend_token=backend_token)
        except SettingsError as exc:
            self.show_problems(exc.problems)
            return False
        self._error_row.hide()
        self.saved.emit(settings)
        return True


class SettingsDialog(_SavingDialog):
    """All the settings; Save (Enter) stores them, Cancel (Esc) leaves everything as it was."""

    def __init__(
        self,
        store: SettingsStore,
        parent: QWidget | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        mcp: McpServersSource | None = None,
    ) -> None:
        """``mcp``: the MCP servers of the conversation shown (None: no conversation is)."""
        super().__init__(store, parent)
        self.setWindowTitle("Settings — Cowork")
        self.setMinimumWidth(560)
        environ = os.environ if environ is None else environ
        self.notice_label = _note_label()
        try:
            current = store.load()
        except SettingsError as exc:
            current = AppSettings()
            self.notice_label.setText(
                f"{' '.join(exc.problems.values())} Saving replaces it; the old file is kept beside it."
            )

        self.preset_combo = QComboBox()
        for preset in PRESETS:
            self.preset_combo.addItem(preset.name, preset.id)
        self.preset_combo.addItem("Custom", CUSTOM)
        self.preset_description = _note_label()
        self.gateway.load(current)
        self._select_preset(current.preset or CUSTOM)
        self.preset_combo.activated.connect(lambda _: self._on_preset_chosen())
        overridden = [name for name in _GATEWAY_VARIABLES if environ.get(name)]
        self.environment_note = _note_label()
        if overridden:
            self.environment_note.setText(
                f"Set in the environment, and used instead of these settings: {', '.join(overridden)}."
            )
        self.environment_note.setVisible(bool(overridden))

        gateway_box = QGroupBox("LLM gateway")
        gateway_layout = QVBoxLayout(gateway_box)
        preset_row = QFormLayout()
        preset_row.addRow("&Preset:", self.preset_combo)
        gateway_layout.addLayout(preset_row)
        gateway_layout.addWidget(self.preset_description)
        gateway_layout.addWidget(self.gateway)
        gateway_layout.addWidget(self.environment_note)

        self.backend_url_edit = QLineEdit(current.backend_url)
        self.backend_url_edit.setPlaceholderText("Empty: the local backend on this computer")
        self.backend_url_edit.textChanged.connect(lambda _: self._update_backend_token())
        self.backend_token_edit = QLineEdit()
        self.backend_token_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.backend_token_edit.setAccessibleName("Backend token")
        backend_box = QGroupBox("Backend")
        backend_form = QFormLayout(backend_box)
        backend_form.addRow("Backend &URL:", self.backend_url_edit)
        backend_form.addRow("Backend t&oken:", self.backend_token_edit)
        self._update_backend_token()

        self.approval_mode_combo = QComboBox()
        for mode in APPROVAL_MODES:
            self.approval_mode_combo.addItem(APPROVAL_MODE_LABELS[mode], mode)
        self.approval_mode_combo.setCurrentIndex(
            max(self.approval_mode_combo.findData(current.approval_mode), 0)
        )
        self.max_steps_edit = QLineEdit("" if current.max_steps is None else str(current.max_steps))
        self.max_steps_edit.setPlaceholderText(f"{DEFAULT_MAX_STEPS} (the default)")
        tasks_box = QGroupBox("Tasks")
        tasks_form = QFormLayout(tasks_box)
        tasks_form.addRow("&Approvals:", self.approval_mode_combo)
        tasks_form.addRow("Max &steps per task:", self.max_steps_edit)
        self.permission_rules = PermissionRulesBox(ProjectRules(store))

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        general = QWidget()
        general_layout = QVBoxLayout(general)
        general_layout.addWidget(self.notice_label)
        general_layout.addWidget(gateway_box)
        general_layout.addWidget(backend_box)
        general_layout.addWidget(tasks_box)
        general_layout.addWidget(self.permission_rules)
        general_layout.addStretch(1)
        self.mcp_servers = McpServersPage(mcp)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Settings pages")
        self.tabs.addTab(general, "&General")
        self.tabs.addTab(self.mcp_servers, "&MCP servers")
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self._error_row)
        layout.addWidget(self.buttons)
        self.notice_label.setVisible(bool(self.notice_label.text()))
        self.preset_combo.setFocus(Qt.FocusReason.OtherFocusReason)

    def show_problems(self, problems: Mapping[str, str]) -> None:
        self.tabs.setCurrentIndex(0)  # every field that can be wrong is on the General page
        super().show_problems(problems)

    def _select_preset(self, preset_id: str) -> None:
        index = self.preset_combo.findData(preset_id)
        self.preset_combo.setCurrentIndex(index if index >= 0 else self.preset_combo.findData(CUSTOM))
        preset = preset_named(preset_id)
        self.preset_description.setText(preset.description if preset is not None else "")
        self.preset_description.setVisible(preset is not None)

    def choose_preset(self, preset_id: str) -> None:
        """What choosing a preset in the list does: select it and fill the fields from it."""
        self._select_preset(preset_id)
        self.gateway.apply_preset(preset_id)

    def _on_preset_chosen(self) -> None:
        self.choose_preset(str(self.preset_combo.currentData()))

    def _update_backend_token(self) -> None:
        url = self.backend_url_edit.text().strip()
        self.backend_token_edit.setEnabled(bool(url))
        if not url:
            self.backend_token_edit.setPlaceholderText("Not needed for the local backend")
        elif self._store.backend_token_for(url) is not None:
            self.backend_token_edit.setPlaceholderText("Saved in the OS keychain; type to replace it")
        else:
            self.backend_token_edit.setPlaceholderText("The token your administrator gave you")

    def _field_widget(self, field: str) -> QWidget | None:
        return {
            "backend_url": self.backend_url_edit,
            "backend_token": self.backend_token_edit,
            "approval_mode": self.approval_mode_combo,
            "max_steps": self.max_steps_edit,
            "preset": self.preset_combo,
        }.get(field) or super()._field_widget(field)

    def accept(self) -> None:
        problems: dict[str, str] = {}
        try:
            max_steps = parse_max_steps(self.max_steps_edit.text())
        except SettingsError as exc:
            problems.update(exc.problems)
            max_steps = None
        base = AppSettings(
            backend_url=self.backend_url_edit.text().strip(),
            approval_mode=str(self.approval_mode_combo.currentData()),
            max_steps=max_steps,
        )
        settings = self.gateway.gateway_of(base)
        token = self.gateway.token_value()
        backend_token = self.backend_token_edit.text().strip() or None
        try:
            validate(settings, token=token, backend_token=backend_token)
        except SettingsError as exc:
            problems.update(exc.problems)
        if problems:  # every problem at once, in the order of the fields
            order = list(_FIELD_ORDER)
            self.show_problems(dict(sorted(problems.items(), key=lambda item: order.index(item[0]))))
            return
        if self._save(settings, token, backend_token):
            super().accept()


class FirstRunDialog(_SavingDialog):
    """Nothing is configured yet: choose a model to work with (the demo needs nothing)."""

    def __init__(self, store: SettingsStore, parent: QWidget | None = None) -> None:
        super().__init__(store, parent)
        self.setWindowTitle("Welcome to Cowork")
        self.setMinimumWidth(560)
        try:
            self._base = store.load()
        except SettingsError:
            self._base = AppSettings()
        heading = QLabel("Choose the model Cowork works with")
        font = heading.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.3)
        heading.setFont(font)
        intro = _note_label()
        intro.setText("You can change this, and more, in Settings at any time.")

        self.preset_group = QButtonGroup(self)
        self.preset_buttons: dict[str, QRadioButton] = {}
        choices = QVBoxLayout()
        for preset in PRESETS:
            button = QRadioButton(preset.name)
            button.setAccessibleDescription(preset.description)
            self.preset_group.addButton(button)
            self.preset_buttons[preset.id] = button
            choices.addWidget(button)
            choices.addWidget(_indented(_description(preset)))
            button.toggled.connect(self._on_toggled)

        self.buttons = QDialogButtonBox()
        self.start_button = self.buttons.addButton("&Start", QDialogButtonBox.ButtonRole.AcceptRole)
        self.later_button = self.buttons.addButton("&Not now", QDialogButtonBox.ButtonRole.RejectRole)
        self.start_button.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(intro)
        layout.addLayout(choices)
        layout.addWidget(self.gateway)
        layout.addWidget(self._error_row)
        layout.addStretch(1)
        layout.addWidget(self.buttons)
        self.choose_preset(PRESETS[0].id)
        self.preset_buttons[PRESETS[0].id].setFocus(Qt.FocusReason.OtherFocusReason)
        self.adjustSize()

    def choose_preset(self, preset_id: str) -> None:
        """What choosing a preset does: check it and fill the fields from it."""
        self.preset_buttons[preset_id].setChecked(True)
        if self.gateway.preset != preset_id:
            self.gateway.apply_preset(preset_id)

    def _on_toggled(self, checked: bool) -> None:
        if not checked:
            return
        for preset_id, button in self.preset_buttons.items():
            if button.isChecked() and self.gateway.preset != preset_id:
                self.gateway.apply_preset(preset_id)

    def accept(self) -> None:
        if self._save(self.gateway.gateway_of(self._base), self.gateway.token_value()):
            super().accept()


def _note_label() -> QLabel:
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label


def _description(preset: Preset) -> QLabel:
    label = _note_label()
    label.setText(preset.description)
    if preset is DEMO:
        font = label.font()
        font.setItalic(True)
        label.setFont(font)
    return label


def _indented(widget: QWidget) -> QWidget:
    holder = QWidget()
    row = QHBoxLayout(holder)
    row.setContentsMargins(24, 0, 0, 6)
    row.addWidget(widget)
    return holder
