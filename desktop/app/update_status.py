"""The runtime updater's line in the window's status bar: one quiet note (what
:mod:`desktop.updater.indicator` says) and, while a bundle downloads, a thin progress bar."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QPalette, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QSizePolicy, QWidget

from desktop.updater.indicator import NoteKind, UpdateNote

__all__ = ["RuntimeUpdateStatus"]


class _ElidedLabel(QLabel):
    """A one-line label that shortens its text with "…" instead of widening the window."""

    def __init__(self) -> None:
        super().__init__()
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def set_full_text(self, text: str) -> None:
        self._full = text
        self._elide()

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, self.width()))


class RuntimeUpdateStatus(QWidget):
    """``noteChanged(note)``: the note now shown, None when there is none (the window shows its status
    bar only while there is one)."""

    noteChanged = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("runtimeUpdate")
        self.label = _ElidedLabel()
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(False)
        self.bar.setMaximumWidth(120)
        self.bar.setMaximumHeight(6)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.bar)
        self._linger = QTimer(self)
        self._linger.setSingleShot(True)
        self._linger.timeout.connect(lambda: self.show_note(None))
        self.note: UpdateNote | None = None
        self.show_note(None)

    def text(self) -> str:
        """The whole note, however much of it fits."""
        return self.label.full_text()

    def show_note(self, note: UpdateNote | None) -> None:
        self._linger.stop()
        self.note = note
        if note is None:
            self.label.set_full_text("")
            self.setToolTip("")
            self.bar.hide()
            self.hide()
        else:
            self.label.set_full_text(note.text)
            self.setToolTip(note.detail or note.text)
            # Quiet: only a new runtime in use is worth the normal text colour.
            role = (
                QPalette.ColorRole.WindowText
                if note.kind is NoteKind.DONE
                else QPalette.ColorRole.PlaceholderText
            )
            self.label.setForegroundRole(role)
            self.bar.setVisible(note.percent is not None)
            self.bar.setValue(note.percent or 0)
            if note.linger_seconds is not None:
                self._linger.start(round(note.linger_seconds * 1000))
            self.show()
        self.noteChanged.emit(note)
