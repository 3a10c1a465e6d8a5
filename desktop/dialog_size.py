"""Dialogs that keep their layout: a minimum height that counts word-wrapped text.

Qt gives a window the minimum size of its layout, and that leaves out what word-wrapped labels need
at the window's width (height-for-width); a dialog whose message or error grows then squeezes its
buttons and fields below their own minimum, or clips them. :func:`keep_laid_out` watches the dialog's
layout and raises its minimum height to what the content needs at its current width (never more than
the screen offers: beyond that a scroll area must take the content).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

__all__ = ["keep_laid_out"]


class _MinimumHeight(QObject):
    def __init__(self, dialog: QWidget) -> None:
        super().__init__(dialog)
        self._dialog = dialog
        self._width = -1

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if watched is self._dialog and (
            kind in (QEvent.Type.LayoutRequest, QEvent.Type.Show)
            or (kind == QEvent.Type.Resize and self._dialog.width() != self._width)
        ):
            self.update()
        return False

    def update(self) -> None:
        dialog = self._dialog
        layout = dialog.layout()
        if layout is None:
            return
        self._width = dialog.width()
        width = max(dialog.width(), layout.minimumSize().width())
        if layout.hasHeightForWidth():
            needed = max(layout.totalHeightForWidth(width), layout.totalMinimumSize().height())
        else:
            needed = layout.totalMinimumSize().height()
        screen = dialog.screen()
        if screen is not None:
            needed = min(needed, screen.availableGeometry().height())
        if dialog.minimumHeight() != needed:
            dialog.setMinimumHeight(needed)
        if dialog.height() < needed:
            dialog.resize(dialog.width(), needed)


def keep_laid_out(dialog: QWidget) -> None:
    """From now on ``dialog`` is never shorter than its content needs at its width."""
    watcher = _MinimumHeight(dialog)
    dialog.installEventFilter(watcher)
    watcher.update()
