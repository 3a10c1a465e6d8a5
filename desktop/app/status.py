"""The strip above the composer — the two-level state in plain words (seed 000 §3.3), the step
counter with its 80 % warning, token use against the budget — and the banner above the conversation,
which says what went wrong and offers what to do about it (one action, sometimes a second)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QToolButton, QWidget

from desktop.conversation.banners import Banner, BannerAction
from desktop.conversation.items import Tone
from desktop.conversation.state import Status
from desktop.conversation.status_text import steps_text
from desktop.i18n import translate

__all__ = ["BannerView", "StatusStrip", "token_text"]

_TONE_BORDER = {Tone.INFO: "palette(highlight)", Tone.WARNING: "#f9a825", Tone.ERROR: "#c62828"}


def token_text(used: int | None, limit: int | None) -> str:
    if used is None and limit is None:
        return ""
    if limit:
        return translate("Status", "{used} of {limit} tokens").format(
            used=f"{used or 0:,}", limit=f"{limit:,}"
        )
    return translate("Status", "{used} tokens").format(used=f"{used or 0:,}")


class StatusStrip(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state_label = QLabel()
        self.state_label.setObjectName("taskState")
        self.steps_label = QLabel()
        self.tokens_label = QLabel()
        self.tokens_bar = QProgressBar()
        self.tokens_bar.setTextVisible(False)
        self.tokens_bar.setMaximumWidth(120)
        self.tokens_bar.setMaximumHeight(8)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 2, 12, 2)
        layout.addWidget(self.state_label, 1)
        layout.addWidget(self.steps_label)
        layout.addSpacing(16)
        layout.addWidget(self.tokens_label)
        layout.addWidget(self.tokens_bar)
        self.show_status(None)

    def show_status(self, status: Status | None) -> None:
        if status is None:
            self.state_label.setText("")
            self.steps_label.setText("")
            self.tokens_label.setText("")
            self.tokens_bar.hide()
            return
        self.state_label.setText(status.summary)
        text = steps_text(status.task, status.step_count, status.max_steps, near_limit=status.near_step_limit)
        self.steps_label.setText(text)
        self.steps_label.setStyleSheet("color: #b26a00; font-weight: bold;" if status.near_step_limit else "")
        self.tokens_label.setText(token_text(status.tokens_used, status.token_limit))
        if status.token_limit:
            share = min(1.0, (status.tokens_used or 0) / status.token_limit)
            self.tokens_bar.setRange(0, 1000)
            self.tokens_bar.setValue(round(share * 1000))
            self.tokens_bar.setToolTip(
                translate("Status", "{share} of the session's token budget").format(share=f"{share:.0%}")
            )
            self.tokens_bar.show()
        else:
            self.tokens_bar.hide()


class BannerView(QFrame):
    """One banner; ``acted(action)`` when its button is pressed, ``dismissed`` when closed."""

    acted = Signal(object)
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action_button = QPushButton()
        self.more_button = QPushButton()
        self.close_button = QToolButton()
        self.close_button.setText("✕")
        self.close_button.setToolTip(translate("Status", "Dismiss"))
        self.close_button.setAccessibleName(translate("Status", "Dismiss the message"))
        self.close_button.setAutoRaise(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 8)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.action_button)
        layout.addWidget(self.more_button)
        layout.addWidget(self.close_button)
        self._banner: Banner | None = None
        self.action_button.clicked.connect(self._act)
        self.more_button.clicked.connect(self._act_more)
        self.close_button.clicked.connect(self.dismissed.emit)
        self.show_banner(None)

    @property
    def banner(self) -> Banner | None:
        return self._banner

    def show_banner(self, banner: Banner | None) -> None:
        self._banner = banner
        if banner is None:
            self.hide()
            return
        self.text.setText(banner.text)
        self.action_button.setVisible(banner.action is not None)
        self.action_button.setText(banner.action_label)
        self.more_button.setVisible(banner.more is not None)
        self.more_button.setText(banner.more_label)
        border = _TONE_BORDER[banner.tone]
        self.setStyleSheet(
            f"QFrame#banner {{ border-left: 4px solid {border}; background: palette(alternate-base); }}"
        )
        self.show()

    def _act(self) -> None:
        if self._banner is not None and self._banner.action is not None:
            self.acted.emit(BannerAction(self._banner.action))

    def _act_more(self) -> None:
        if self._banner is not None and self._banner.more is not None:
            self.acted.emit(BannerAction(self._banner.more))
