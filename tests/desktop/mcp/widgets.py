"""Checks every MCP widget test shares: each control a user can reach has a name a screen reader says."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from tests.desktop.accessibility import nameless


def assert_every_control_is_named(root: QWidget) -> None:
    """Every visible interactive widget under ``root`` has an accessible name (a button's text, or the
    label it is the buddy of, counts)."""
    assert nameless(root) == []
