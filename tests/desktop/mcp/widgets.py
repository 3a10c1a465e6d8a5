"""Checks every MCP widget test shares: each control a user can reach has a name a screen reader says."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QSpinBox,
    QTabWidget,
    QWidget,
)

_INTERACTIVE = (
    QAbstractButton,
    QLineEdit,
    QComboBox,
    QSpinBox,
    QDoubleSpinBox,
    QAbstractItemView,
    QTabWidget,
)


def assert_every_control_is_named(root: QWidget) -> None:
    """Every visible interactive widget under ``root`` has an accessible name (a button's text counts)."""
    for widget in root.findChildren(QWidget):
        # The line edit inside a spin box or combo box is part of that (named) control, as are a tab
        # bar's scroll buttons of their tab widget and a list's header of its list.
        inner = isinstance(
            widget.parent(), QAbstractSpinBox | QComboBox | QTabWidget | QAbstractItemView
        ) or (widget.parent() is not None and type(widget.parent()).__name__ == "QTabBar")
        if isinstance(widget, _INTERACTIVE) and widget.isVisibleTo(root) and not inner:
            name = widget.accessibleName() or (widget.text() if isinstance(widget, QAbstractButton) else "")
            assert name.replace("&", "").strip(), (
                f"{type(widget).__name__} {widget.objectName()!r} has no name"
            )
