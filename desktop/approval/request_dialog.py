"""What the dialogs that answer a runtime's waiting requests share: the approval dialog
(:mod:`desktop.approval.dialog`) and the MCP elicitation dialog (:mod:`desktop.mcp.elicitation_dialog`).

A :class:`RequestDialog` follows a :class:`~desktop.approval.queue.RequestQueue`: it shows the oldest
request, says how many more wait and how long the runtime keeps waiting, moves on when the request
leaves the queue and hides itself when the queue is empty. It is not modal, so the rest of the app
stays usable. A newly shown request ignores its answering buttons for :data:`ARM_DELAY_MS`, so a key
already on its way (or a double-click) meant for something else cannot answer it. Closing the window
does what Esc does — each dialog's safe dismissal (deny, cancel) — because a hidden request would
leave the agent waiting unseen; to put the dialog away without answering (the app quitting),
``hide()`` it. What a request shows and how it is answered is each dialog's own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QApplication, QDialog, QLabel, QSizePolicy, QWidget

from desktop.approval.present import countdown_text, waiting_text
from desktop.approval.queue import P, RequestQueue
from desktop.i18n import QT_TRANSLATE_NOOP, translate

__all__ = ["ARM_DELAY_MS", "RequestDialog", "plain_label"]

ARM_DELAY_MS = 500
"""How long a newly shown request ignores its buttons (Firefox guards its security prompts alike)."""

_TICK_MS = 250


class RequestDialog(QDialog, Generic[P]):
    """See the module docstring. ``clock`` is ``time.monotonic`` (the queue's clock); ``session_label``
    names a conversation for the user when several may ask at once.

    A subclass builds its widgets (placing :attr:`countdown_label` and :attr:`waiting_label`), then
    calls :meth:`_follow_queue`; it implements :meth:`_show_request`, :meth:`_arm_buttons` and
    ``reject()`` (Esc and closing the window: its safe dismissal)."""

    no_others_waiting = QT_TRANSLATE_NOOP("Approval", "No other requests waiting")
    """What a screen reader hears of the waiting count when nothing else waits."""

    def __init__(
        self,
        queue: RequestQueue[P],
        parent: QWidget | None,
        *,
        clock: Callable[[], float] = time.monotonic,
        arm_delay_ms: int = ARM_DELAY_MS,
        session_label: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(parent)
        self._queue = queue
        self._clock = clock
        self._arm_delay_ms = arm_delay_ms
        self._session_label = session_label
        self._shown: P | None = None
        self._armed = False
        self.on_shown: Callable[[P], None] | None = None
        """Told of each request as it is put in front of the user (the audit producer)."""
        self.on_expired: Callable[[P], None] | None = None
        """Told of each request whose time ran out here, unanswered."""

        self.setModal(False)
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.setSizeGripEnabled(True)
        self.countdown_label = QLabel()
        self.countdown_label.setAccessibleName(translate("Approval", "Time left"))
        self.waiting_label = QLabel()

        self._tick = QTimer(self)
        self._tick.setInterval(_TICK_MS)
        self._tick.timeout.connect(self._on_tick)
        self._arm_timer = QTimer(self)
        self._arm_timer.setSingleShot(True)
        self._arm_timer.timeout.connect(self._arm)

    def _follow_queue(self) -> None:
        queue = self._queue
        refresh = self._refresh
        queue.subscribe(refresh)
        self.destroyed.connect(lambda *_: queue.unsubscribe(refresh))
        self._refresh()

    # ------------------------------------------------------------------ what tests and D1 read

    @property
    def shown(self) -> P | None:
        """The request on screen, or ``None`` while the queue is empty."""
        return self._shown

    @property
    def armed(self) -> bool:
        """Whether the buttons take input (see :data:`ARM_DELAY_MS`)."""
        return self._armed

    # ------------------------------------------------------------------ what each dialog adds

    # Declared, not defined here: every subclass must write both (QDialog's metaclass rules out abc).
    _show_request: Callable[[P], None]
    """Put a request (already :attr:`shown`) on screen; the buttons are disarmed right after."""
    _arm_buttons: Callable[[bool], None]
    """Enable (or grey) the buttons that answer only once armed."""

    def _cleared(self) -> None:
        """The queue is empty: drop what belonged to the last request shown."""

    # ------------------------------------------------------------------ following the queue

    def _refresh(self) -> None:
        head = self._queue.head()
        if head is None:
            self._shown = None
            self._tick.stop()
            self._arm_timer.stop()
            self._armed = False
            self._cleared()
            self.hide()
            return
        if self._shown is None or head.key != self._shown.key:
            self._shown = head
            self._show_request(head)
            self._disarm()
            if self.on_shown is not None:
                self.on_shown(head)
        others = len(self._queue) - 1
        self.waiting_label.setText(waiting_text(others))
        nothing_waiting = translate("Approval", self.no_others_waiting)
        self.waiting_label.setAccessibleName(waiting_text(others) or nothing_waiting)
        self._update_countdown(head)
        if not self._tick.isActive():
            self._tick.start()
        if not self.isVisible():
            self.show()
            self.raise_()
            self.activateWindow()
            QApplication.alert(self)

    def _update_countdown(self, pending: P) -> float:
        """Show the seconds left, and return them."""
        left = pending.seconds_left(self._clock())
        self.countdown_label.setText(countdown_text(left))
        return left

    def _on_tick(self) -> None:
        # Requests whose time ran out are gone on the runtime's side; they leave the queue, which
        # refreshes the dialog through its subscription.
        expired = self._queue.expire(self._clock())
        if self.on_expired is not None:
            for pending in expired:
                self.on_expired(pending)
        head = self._queue.head()
        if head is not None:
            self._update_countdown(head)

    # ------------------------------------------------------------------ arming

    def _disarm(self) -> None:
        self._armed = False
        self._arm_buttons(False)
        if self._arm_delay_ms <= 0:
            self._arm()
        else:
            self._arm_timer.start(self._arm_delay_ms)

    def _arm(self) -> None:
        if self._shown is None:
            return
        self._armed = True
        self._arm_buttons(True)

    # ------------------------------------------------------------------ closing

    def accept(self) -> None:
        """Nothing answers implicitly (Enter on a default button): only a deliberate act does."""

    def closeEvent(self, event: QCloseEvent) -> None:
        """Closing the window (its close button, Alt+F4, ⌘W) dismisses what it shows, as Esc does; the
        next request, if any, takes its place."""
        if self._shown is None:
            event.accept()
            return
        self.reject()
        event.ignore()  # the queue decides: the next request, or hidden when none is left


def plain_label(text: str = "", selectable: bool = False) -> QLabel:
    """A label for wire text: never read as markup, wrapped."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)  # wire text is never markup
    label.setWordWrap(True)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    if selectable:
        label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
    return label
