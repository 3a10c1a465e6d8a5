"""What a screen reader says of a window's controls: the interactive widgets a user can see, and the
name each is announced by. Shared by every test that checks a window or dialog names its controls."""

from __future__ import annotations

from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTabBar,
    QTextEdit,
    QWidget,
)

__all__ = ["INTERACTIVE", "accessible_name", "controls", "describe", "nameless"]

INTERACTIVE = (
    QAbstractButton,
    QLineEdit,
    QTextEdit,
    QPlainTextEdit,
    QComboBox,
    QAbstractSpinBox,
    QAbstractItemView,
    QTabBar,
)
"""What a user operates: buttons (push, tool, check, radio), text fields, combo and spin boxes,
list/tree views and tab bars."""


def _part_of_another_control(widget: QWidget) -> bool:
    """The editor inside a spin or combo box, a view's viewport, header and scroll bars, a tab
    bar's scroll arrows: named as the control they belong to."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractSpinBox | QComboBox | QAbstractItemView | QTabBar):
            return True
        parent = parent.parentWidget()
    return False


def controls(root: QWidget) -> list[QWidget]:
    """The interactive widgets a user can see under ``root`` (``root`` included)."""
    found = [root, *root.findChildren(QWidget)]
    return [
        widget
        for widget in found
        if isinstance(widget, INTERACTIVE)
        and widget.isVisibleTo(root)
        and not _part_of_another_control(widget)
    ]


def accessible_name(widget: QWidget) -> str:
    """What a screen reader announces the control as: its accessible name, else a button's text, else
    the label it is the buddy of (a form's row label). Not a combo box's current value, which Qt on
    Linux reports as its name when it has none: that is the answer, not the question."""
    name = widget.accessibleName()
    if not name and isinstance(widget, QAbstractButton):
        name = widget.text()
    if not name and isinstance(widget, QTabBar):
        texts = [widget.tabText(index) for index in range(widget.count())]
        name = " ".join(texts) if all(text.strip() for text in texts) else ""
    if not name:
        window = widget.window()
        name = next((label.text() for label in window.findChildren(QLabel) if label.buddy() is widget), "")
    if not name and not isinstance(widget, QComboBox):
        interface = QAccessible.queryAccessibleInterface(widget)
        name = interface.text(QAccessible.Text.Name) if interface is not None else ""
    return name.replace("&", "").strip()


def describe(widget: QWidget) -> str:
    owner = widget.parentWidget()
    return f"{type(widget).__name__} {widget.objectName()!r} in {type(owner).__name__ if owner else '-'}"


def nameless(root: QWidget) -> list[str]:
    """The visible controls under ``root`` a screen reader would announce without a name."""
    return [describe(widget) for widget in controls(root) if not accessible_name(widget)]
