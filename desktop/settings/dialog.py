"""Settings and first-run dialogs over :class:`SettingsStore` (thin: validation and storage live there).

``SettingsDialog``: on its General page the LLM gateway (preset, endpoint, dialect, model, token), the
backend (URL, empty for the local one, and its token), task defaults (approval mode, max steps), and
the language (System, English or Deutsch, shown from the next start);
Save validates and stores — tokens to the OS keychain only — or shows what to fix and keeps everything
typed. Its MCP servers page lists the servers of the conversation shown (nothing there is saved).
``FirstRunDialog``: shown when nothing is configured; the presets side by side, the offline demo
model among them and labelled as what it is. Both emit ``saved(AppSettings)`` after a save.

A saved token is never read back into a field: the field says whether one is saved for the endpoint
shown, typing replaces it, and "Remove the saved token" deletes it.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping

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
    QPushButton,
    QRadioButton,
    QScrollArea,
    QStyle,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.conversation.pricing import PriceTable, PricingError
from desktop.dialog_size import keep_laid_out
from desktop.i18n import QT_TRANSLATE_NOOP, SYSTEM_LANGUAGE, translate
from desktop.mcp.servers import McpServersSource
from desktop.mcp.servers_view import McpServersPage
from desktop.settings.connection_test import ConnectionResult, Outcome, check_connection
from desktop.settings.keychain import TOKEN_VARIABLE, keychain_status
from desktop.settings.presets import CUSTOM, DEMO, PRESETS, Preset, preset_named
from desktop.settings.prices_view import PricesPage
from desktop.settings.rules import ProjectRules
from desktop.settings.rules_view import PermissionRulesBox
from desktop.settings.send_key import SendKeyBox
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

APPROVAL_MODE_LABELS = {  # translated where shown
    "on_risky_actions": QT_TRANSLATE_NOOP("Settings", "Ask before risky actions (recommended)"),
    "always": QT_TRANSLATE_NOOP("Settings", "Ask before every action"),
    "never": QT_TRANSLATE_NOOP("Settings", "Never ask (the policy still blocks what it forbids)"),
}
DIALECT_LABELS = {"anthropic": "Anthropic Messages API", "openai": "OpenAI Chat Completions"}
LANGUAGE_NAMES = {"en": "English", "de": "Deutsch"}
"""Each language in its own words, as language pickers show them."""
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
        self.keychain = keychain_status()
        self.endpoint_edit = QLineEdit()
        self.endpoint_edit.setPlaceholderText("https://api.anthropic.com")
        self.endpoint_edit.editingFinished.connect(lambda: self._update_token_state(clear=False))
        self.api_combo = QComboBox()
        for api, label in DIALECT_LABELS.items():
            self.api_combo.addItem(label, api)
        self.model_edit = QLineEdit()
        self.token_edit = QLineEdit()
        self.token_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.token_edit.setAccessibleName(translate("Settings", "Token"))
        self.remove_token_box = QCheckBox(translate("Settings", "Remove the saved token"))
        self.remove_token_box.toggled.connect(
            lambda on: self.token_edit.setEnabled(not on and self.keychain.usable)
        )
        self.token_state_label = _note_label()
        self.keychain_note = _note_label()
        self.keychain_note.setObjectName("keychainWarning")
        self.keychain_note.setAccessibleName(translate("Settings", "No OS keychain"))
        self.keychain_note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if not self.keychain.usable:
            # Said before a token is typed: one typed here could not be saved anywhere.
            self.keychain_note.setText(
                translate(
                    "Settings",
                    "No usable OS keychain was found ({backend}), so Cowork cannot save a token: it"
                    " never writes tokens to a file. Set {variable} (with LLM_GATEWAY_ENDPOINT and"
                    " LLM_GATEWAY_MODEL) in the environment Cowork is started from, or choose a model"
                    " that needs no token.",
                ).format(backend=self.keychain.backend, variable=TOKEN_VARIABLE)
            )
            self.token_edit.setEnabled(False)
            self.token_edit.setToolTip(
                translate("Settings", "No OS keychain: set {variable} in the environment instead.").format(
                    variable=TOKEN_VARIABLE
                )
            )
        self.demo_note = _note_label()
        self.demo_note.setText(
            translate(
                "Settings",
                "Nothing to set up: Cowork starts the offline demo model itself when a conversation"
                " needs it.",
            )
        )

        self._fields = QWidget()
        form = QFormLayout(self._fields)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow(translate("Settings", "&Endpoint:"), self.endpoint_edit)
        form.addRow(translate("Settings", "&Dialect:"), self.api_combo)
        form.addRow(translate("Settings", "&Model:"), self.model_edit)
        form.addRow(translate("Settings", "&Token:"), self.token_edit)
        form.addRow("", self.keychain_note)
        form.addRow("", self.token_state_label)
        form.addRow("", self.remove_token_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.demo_note)
        layout.addWidget(self._fields)

        self.test_button = QPushButton(translate("Settings", "Test &Connection"))
        self.test_button.setAccessibleName(translate("Settings", "Test the connection to the gateway"))
        self.test_button.setAutoDefault(False)  # Enter saves the dialog; it never starts a test
        self.test_button.clicked.connect(lambda _checked=False: self.start_test())
        self.test_result = _note_label()
        self.test_result.setAccessibleName(translate("Settings", "Connection test result"))
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.test_result.hide()
        self._test: asyncio.Future[ConnectionResult] | None = None
        self.environment_token: str | None = os.environ.get(TOKEN_VARIABLE) or None
        """The token a runtime takes from the environment, before the saved one (``resolve_gateway``)."""
        test_row = QHBoxLayout()
        test_row.setContentsMargins(0, 0, 0, 0)
        test_row.addWidget(self.test_button, 0, Qt.AlignmentFlag.AlignTop)
        test_row.addWidget(self.test_result, 1)
        form.addRow("", test_row)

    def start_test(self) -> None:
        """Test connection: one small request with the endpoint, dialect, model and token shown (a
        typed token, else the one saved for the endpoint); the answer shows beside the button."""
        self.cancel_test()
        endpoint = self.endpoint_edit.text().strip()
        model = self.model_edit.text().strip()
        if not endpoint.startswith(("http://", "https://")):
            self._show_result(translate("Settings", "Enter the endpoint, an http:// or https:// URL, first."))
            return
        if not model:
            self._show_result(translate("Settings", "Enter the model to test first."))
            return
        typed = "" if self.remove_token_box.isChecked() else self.token_edit.text().strip()
        token = typed or self.environment_token or self._store.token_for(endpoint)
        try:
            test = asyncio.ensure_future(
                check_connection(endpoint, str(self.api_combo.currentData()), model, token)
            )
        except RuntimeError:  # no event loop runs the app (cannot happen in the app itself)
            self._show_result(translate("Settings", "The connection cannot be tested right now."))
            return
        self._test = test
        self.test_button.setEnabled(False)
        self._show_result(translate("Settings", "Testing the connection…"))
        test.add_done_callback(lambda done: self._tested(done, endpoint, model))

    def cancel_test(self) -> None:
        """Stop a test in flight (the dialog closes, or a new test starts)."""
        test, self._test = self._test, None
        if test is not None and not test.done():
            test.cancel()
        self.test_button.setEnabled(True)

    @property
    def testing(self) -> bool:
        return self._test is not None and not self._test.done()

    def _tested(self, done: asyncio.Future[ConnectionResult], endpoint: str, model: str) -> None:
        if done is not self._test or done.cancelled():
            if not done.cancelled():
                done.exception()  # a test given up on: however it ended is of no interest
            return
        self._test = None
        self.test_button.setEnabled(True)
        try:
            result = done.result()
        except Exception as exc:  # a bug in the test must not end the dialog; it says what happened
            self._show_result(translate("Settings", "The test failed: {error}").format(error=exc))
            return
        self._show_result(describe_result(result, endpoint, model))

    def _show_result(self, text: str) -> None:
        self.test_result.setText(text)
        self.test_result.setVisible(bool(text))

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
        self.cancel_test()
        self._show_result("")
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
        if not self.keychain.usable:
            self.token_edit.setPlaceholderText(
                translate("Settings", "Not saved here: set {variable}").format(variable=TOKEN_VARIABLE)
            )
            self.token_state_label.setText("")
        elif saved:
            self.token_edit.setPlaceholderText(
                translate("Settings", "Saved in the OS keychain; type to replace it")
            )
            self.token_state_label.setText(
                translate("Settings", "A token for this endpoint is saved in the OS keychain.")
            )
        elif need == "none":
            self.token_edit.setPlaceholderText(translate("Settings", "Not needed"))
            self.token_state_label.setText("")
        else:
            self.token_edit.setPlaceholderText(
                translate("Settings", "Paste the API key")
                if need == "required"
                else translate("Settings", "If it asks for one")
            )
            self.token_state_label.setText(
                translate("Settings", "The token is kept in the OS keychain, never in a file.")
            )
        self.token_state_label.setVisible(bool(self.token_state_label.text()))
        self.keychain_note.setVisible(not self.keychain.usable and need != "none")


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
        self.error_label.setAccessibleName(translate("Settings", "Problems"))
        self._error_row = QWidget()
        row = QHBoxLayout(self._error_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.error_icon, 0, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.error_label, 1)
        self._error_row.hide()
        keep_laid_out(self)  # an error or a note that wraps grows the dialog instead of squeezing it

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

    def done(self, result: int) -> None:
        self.gateway.cancel_test()  # closing ends a connection test in flight
        super().done(result)

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
        apply_theme: Callable[[str], object] | None = None,
    ) -> None:
        """``mcp``: the MCP servers of the conversation shown (None: no conversation is);
        ``apply_theme``: shows a theme at once (the app's; None: the choice shows at the next start)."""
        super().__init__(store, parent)
        self.setWindowTitle(translate("Settings", "Settings — Cowork"))
        self.setMinimumWidth(560)
        environ = os.environ if environ is None else environ
        self.gateway.environment_token = environ.get(TOKEN_VARIABLE) or None
        self.notice_label = _note_label()
        try:
            current = store.load()
        except SettingsError as exc:
            current = AppSettings()
            self.notice_label.setText(
                translate(
                    "Settings", "{problems} Saving replaces it; the old file is kept beside it."
                ).format(problems=" ".join(exc.problems.values()))
            )

        self.preset_combo = QComboBox()
        for preset in PRESETS:
            self.preset_combo.addItem(translate("Presets", preset.name), preset.id)
        self.preset_combo.addItem(translate("Settings", "Custom"), CUSTOM)
        self.preset_description = _note_label()
        self.gateway.load(current)
        self._select_preset(current.preset or CUSTOM)
        self.preset_combo.activated.connect(lambda _: self._on_preset_chosen())
        overridden = [name for name in _GATEWAY_VARIABLES if environ.get(name)]
        self.environment_note = _note_label()
        if overridden:
            self.environment_note.setText(
                translate(
                    "Settings", "Set in the environment, and used instead of these settings: {names}."
                ).format(names=", ".join(overridden))
            )
        self.environment_note.setVisible(bool(overridden))

        gateway_box = QGroupBox(translate("Settings", "LLM gateway"))
        gateway_layout = QVBoxLayout(gateway_box)
        preset_row = QFormLayout()
        preset_row.addRow(translate("Settings", "&Preset:"), self.preset_combo)
        gateway_layout.addLayout(preset_row)
        gateway_layout.addWidget(self.preset_description)
        gateway_layout.addWidget(self.gateway)
        gateway_layout.addWidget(self.environment_note)

        self.backend_url_edit = QLineEdit(current.backend_url)
        self.backend_url_edit.setPlaceholderText(
            translate("Settings", "Empty: the local backend on this computer")
        )
        self.backend_url_edit.textChanged.connect(lambda _: self._update_backend_token())
        self.backend_token_edit = QLineEdit()
        self.backend_token_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.backend_token_edit.setAccessibleName(translate("Settings", "Backend token"))
        backend_box = QGroupBox(translate("Settings", "Backend"))
        backend_form = QFormLayout(backend_box)
        backend_form.addRow(translate("Settings", "Backend &URL:"), self.backend_url_edit)
        backend_form.addRow(translate("Settings", "Backend t&oken:"), self.backend_token_edit)
        self._update_backend_token()

        self.approval_mode_combo = QComboBox()
        for mode in APPROVAL_MODES:
            self.approval_mode_combo.addItem(translate("Settings", APPROVAL_MODE_LABELS[mode]), mode)
        self.approval_mode_combo.setCurrentIndex(
            max(self.approval_mode_combo.findData(current.approval_mode), 0)
        )
        self.max_steps_edit = QLineEdit("" if current.max_steps is None else str(current.max_steps))
        self.max_steps_edit.setPlaceholderText(
            translate("Settings", "{count} (the default)").format(count=DEFAULT_MAX_STEPS)
        )
        tasks_box = QGroupBox(translate("Settings", "Tasks"))
        tasks_form = QFormLayout(tasks_box)
        tasks_form.addRow(translate("Settings", "&Approvals:"), self.approval_mode_combo)
        tasks_form.addRow(translate("Settings", "Max &steps per task:"), self.max_steps_edit)
        self.permission_rules = PermissionRulesBox(ProjectRules(store))

        self._apply_theme = apply_theme
        self._theme_before = store.theme()
        self.theme_combo = QComboBox()
        for theme, label in (
            ("system", translate("Settings", "System")),
            ("light", translate("Settings", "Light")),
            ("dark", translate("Settings", "Dark")),
        ):
            self.theme_combo.addItem(label, theme)
        self.theme_combo.setCurrentIndex(max(self.theme_combo.findData(self._theme_before), 0))
        self.theme_combo.setAccessibleName(translate("Settings", "Theme"))
        # Shown at once, so the choice can be judged; kept on Save, undone on Cancel.
        self.theme_combo.currentIndexChanged.connect(lambda _index: self._show_theme(self.chosen_theme))
        appearance_box = QGroupBox(translate("Settings", "Appearance"))
        appearance_form = QFormLayout(appearance_box)
        appearance_form.addRow(translate("Settings", "T&heme:"), self.theme_combo)
        self.language_combo = QComboBox()
        self.language_combo.setAccessibleName(translate("Settings", "Language"))
        self.language_combo.addItem(translate("Settings", "System language"), SYSTEM_LANGUAGE)
        for code, name in LANGUAGE_NAMES.items():
            self.language_combo.addItem(name, code)
        self.language_combo.setCurrentIndex(max(self.language_combo.findData(store.language()), 0))
        language_box = QGroupBox(translate("Settings", "Language"))
        language_form = QFormLayout(language_box)
        language_form.addRow(translate("Settings", "&Language:"), self.language_combo)
        language_note = _note_label()
        language_note.setText(translate("Settings", "Cowork shows the chosen language when it starts again."))
        language_form.addRow("", language_note)

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
        general_layout.addWidget(language_box)
        general_layout.addWidget(appearance_box)
        self.send_key_box = SendKeyBox(store)
        general_layout.addWidget(self.send_key_box)
        general_layout.addStretch(1)
        # A small screen or window scrolls the page rather than squeezing its fields.
        general_page = QScrollArea()
        general_page.setWidgetResizable(True)
        general_page.setFrameShape(QScrollArea.Shape.NoFrame)
        general_page.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        general_page.setWidget(general)
        self.general_page = general_page
        self.mcp_servers = McpServersPage(mcp)
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName(translate("Settings", "Settings pages"))
        self.tabs.addTab(general_page, translate("Settings", "&General"))
        self.tabs.addTab(self.mcp_servers, translate("Settings", "&MCP servers"))
        self.prices_page = PricesPage(store.prices())
        self.tabs.addTab(self.prices_page, translate("Settings", "&Prices"))
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
        self.preset_description.setText(
            translate("Presets", preset.description) if preset is not None else ""
        )
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
            self.backend_token_edit.setPlaceholderText(
                translate("Settings", "Not needed for the local backend")
            )
        elif self._store.backend_token_for(url) is not None:
            self.backend_token_edit.setPlaceholderText(
                translate("Settings", "Saved in the OS keychain; type to replace it")
            )
        else:
            self.backend_token_edit.setPlaceholderText(
                translate("Settings", "The token your administrator gave you")
            )

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
        try:
            prices = self.prices_page.prices()
        except PricingError:  # the page says which cell is wrong
            self.tabs.setCurrentWidget(self.prices_page)
            return
        if (
            self._save(settings, token, backend_token)
            and self._save_language()
            and self._save_theme()
            and self._save_prices(prices)
            and self.send_key_box.save(self._store, self.show_problems)
        ):
            super().accept()

    def _save_prices(self, prices: PriceTable) -> bool:
        try:
            self._store.save_prices(prices)
        except (OSError, SettingsError) as exc:
            detail = exc.problems if isinstance(exc, SettingsError) else {"file": str(exc)}
            self.show_problems(detail)
            return False
        return True

    def _save_language(self) -> bool:
        try:
            self._store.save_language(str(self.language_combo.currentData()))
        except SettingsError as exc:
            self.show_problems(exc.problems)
            return False
        return True

    def _save_theme(self) -> bool:
        try:
            self._store.save_theme(self.chosen_theme)
        except SettingsError as exc:
            self.show_problems(exc.problems)
            return False
        return True

    @property
    def chosen_theme(self) -> str:
        return str(self.theme_combo.currentData())

    def reject(self) -> None:
        if self.chosen_theme != self._theme_before:
            self._show_theme(self._theme_before)
        super().reject()

    def _show_theme(self, theme: str) -> None:
        if self._apply_theme is not None:
            self._apply_theme(theme)


class FirstRunDialog(_SavingDialog):
    """Nothing is configured yet: choose a model to work with (the demo needs nothing)."""

    def __init__(self, store: SettingsStore, parent: QWidget | None = None) -> None:
        super().__init__(store, parent)
        self.setWindowTitle(translate("Settings", "Welcome to Cowork"))
        self.setMinimumWidth(560)
        try:
            self._base = store.load()
        except SettingsError:
            self._base = AppSettings()
        heading = QLabel(translate("Settings", "Choose the model Cowork works with"))
        font = heading.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.3)
        heading.setFont(font)
        intro = _note_label()
        intro.setText(translate("Settings", "You can change this, and more, in Settings at any time."))

        self.preset_group = QButtonGroup(self)
        self.preset_buttons: dict[str, QRadioButton] = {}
        choices = QVBoxLayout()
        for preset in PRESETS:
            button = QRadioButton(translate("Presets", preset.name))
            button.setAccessibleDescription(translate("Presets", preset.description))
            self.preset_group.addButton(button)
            self.preset_buttons[preset.id] = button
            choices.addWidget(button)
            choices.addWidget(_indented(_description(preset)))
            button.toggled.connect(self._on_toggled)

        self.buttons = QDialogButtonBox()
        self.start_button = self.buttons.addButton(
            translate("Settings", "&Start"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.later_button = self.buttons.addButton(
            translate("Settings", "&Not now"), QDialogButtonBox.ButtonRole.RejectRole
        )
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


def describe_result(result: ConnectionResult, endpoint: str, model: str) -> str:
    """The test's answer for the user: what works, or what to fix."""
    status = "" if result.status is None else str(result.status)
    if result.outcome is Outcome.OK:
        return translate("Settings", "Connected: {endpoint} answered, and the model {model} works.").format(
            endpoint=endpoint, model=model
        )
    if result.outcome is Outcome.UNREACHABLE:
        return translate("Settings", "Cannot reach the gateway: {reason}.").format(reason=result.detail)
    if result.outcome is Outcome.UNAUTHORIZED:
        return translate(
            "Settings",
            "The gateway is reachable but did not accept the token (HTTP {status}). Check the token. The"
            " gateway said: {message}",
        ).format(status=status, message=result.detail or "-")
    if result.outcome is Outcome.UNKNOWN_MODEL:
        return translate(
            "Settings",
            "The gateway is reachable but does not know the model {model} (HTTP {status}). Check the model"
            " name and the endpoint. The gateway said: {message}",
        ).format(model=model, status=status, message=result.detail or "-")
    return translate("Settings", "The gateway answered with an error (HTTP {status}): {message}").format(
        status=status, message=result.detail or "-"
    )


def _note_label() -> QLabel:
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label


def _description(preset: Preset) -> QLabel:
    label = _note_label()
    label.setText(translate("Presets", preset.description))
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
