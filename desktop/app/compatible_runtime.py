"""The dialog that offers a compatible agent runtime when the backend refused this one (seed 001 §11).

Thin: what to install is :mod:`desktop.updater.compatible`'s decision and the work is the window's
:class:`~desktop.updater.qt.RuntimeUpdater`'s (a round on its worker thread:
``UpdateService.install_compatible``). The dialog says what the backend accepts, asks, shows the
progress, and calls ``on_installed`` once the runtime is in use — the window then starts the session
again with it.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.i18n import QT_TRANSLATE_NOOP, translate
from desktop.updater.compatible import Incompatibility
from desktop.updater.outcome import UpdateProgress, UpdateResult, UpdateStage, UpdateStatus
from desktop.updater.qt import RuntimeUpdater

__all__ = ["CompatibleRuntimeDialog"]

_STAGES = {  # translated where shown, in the language installed then
    UpdateStage.CHECKING: QT_TRANSLATE_NOOP("CompatibleRuntime", "Reading the release manifest…"),
    UpdateStage.DOWNLOADING: QT_TRANSLATE_NOOP("CompatibleRuntime", "Downloading runtime {version}…"),
    UpdateStage.INSTALLING: QT_TRANSLATE_NOOP(
        "CompatibleRuntime", "Unpacking and checking runtime {version}…"
    ),
    UpdateStage.HEALTH_CHECK: QT_TRANSLATE_NOOP(
        "CompatibleRuntime", "Starting runtime {version} to check it…"
    ),
    UpdateStage.ACTIVATING: QT_TRANSLATE_NOOP(
        "CompatibleRuntime", "Making runtime {version} the one new sessions use…"
    ),
}


class CompatibleRuntimeDialog(QDialog):
    def __init__(
        self,
        incompatibility: Incompatibility,
        updater: RuntimeUpdater,
        on_installed: Callable[[UpdateResult], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(translate("CompatibleRuntime", "Compatible agent runtime"))
        self.setModal(True)
        self._incompatibility = incompatibility
        self._updater = updater
        self._on_installed = on_installed
        self._running = False
        self.result_of_round: UpdateResult | None = None

        self.message = QLabel(incompatibility.message, self)
        self.message.setWordWrap(True)
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        self.progress = QProgressBar(self)
        self.progress.hide()
        self.buttons = QDialogButtonBox(self)
        self.download_button: QPushButton = self.buttons.addButton(
            translate("CompatibleRuntime", "Download and install"), QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.close_button: QPushButton = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.download_button.clicked.connect(self.download)
        self.close_button.clicked.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addWidget(self.status)
        layout.addWidget(self.progress)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(460)

    def download(self) -> None:
        if self._running:
            return
        if not self._updater.install_compatible(self._incompatibility.supported):
            self.status.setText(
                translate("CompatibleRuntime", "A runtime update is running; try again when it has finished.")
            )
            return
        self._running = True
        self.download_button.setEnabled(False)
        self.close_button.setText(translate("CompatibleRuntime", "Hide"))
        self.progress.setRange(0, 0)
        self.progress.show()
        self._updater.progressed.connect(self._progressed)
        self._updater.finished.connect(self._finished)

    def _progressed(self, progress: UpdateProgress) -> None:
        stage = translate("CompatibleRuntime", _STAGES[progress.stage])
        self.status.setText(stage.format(version=progress.version or ""))
        if progress.total:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * progress.done / progress.total))

    def _finished(self, result: UpdateResult) -> None:
        self._updater.progressed.disconnect(self._progressed)
        self._updater.finished.disconnect(self._finished)
        self._running = False
        self.result_of_round = result
        self.progress.hide()
        if result.status in (UpdateStatus.INSTALLED, UpdateStatus.UP_TO_DATE):
            self.status.setText(
                translate(
                    "CompatibleRuntime", "Runtime {version} is installed; starting the session again."
                ).format(version=result.version)
            )
            self._on_installed(result)
            self.accept()
            return
        self.status.setText(
            translate("CompatibleRuntime", "No compatible runtime was installed: {message}.").format(
                message=result.message
            )
        )
        self.download_button.setText(translate("CompatibleRuntime", "Try again"))
        self.download_button.setEnabled(True)
        self.close_button.setText(translate("CompatibleRuntime", "Close"))
