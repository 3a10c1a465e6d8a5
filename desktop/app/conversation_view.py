"""The conversation pane: one widget per item for the newest items only, redrawn at most once a frame.

* **Bounded:** at most :data:`WINDOW` item widgets exist, however long the conversation; older items
  stay in the Qt-free state and come back with "Show earlier messages". Memory then grows with the
  text of a conversation, not with its widgets.
* **Coalesced:** a change only marks its item; a frame timer (:data:`FRAME_MS`) redraws each marked
  item once, whatever number of ``text_chunk`` events arrived in between. Nothing else is redrawn.
* **Follows the end** while the user is at the bottom; scrolled up, the view stays where they read.
* **Scrolls like a chat:** the oldest messages at the top, the newest at the bottom. Reaching the top
  (or "Show earlier messages") brings the previous :data:`FIRST_SHOWN` items in *above* what is
  shown, keeping the message being read where it was on screen: the thumb moves down as the
  conversation above it grows, instead of the view jumping to the oldest message.
* **Announces** each streamed answer to screen readers when it is complete (:attr:`announced`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from desktop.app.messages import AssistantView, ItemWidget, NoticeView, widget_for
from desktop.conversation.items import Item
from desktop.conversation.state import ConversationState
from desktop.i18n import translate

__all__ = ["FIRST_SHOWN", "FRAME_MS", "WINDOW", "ConversationView"]

WINDOW = 120
"""The most item widgets alive at once."""
FIRST_SHOWN = 60
"""Items shown when a conversation is opened; "Show earlier messages" adds this many more."""
FRAME_MS = 16
PIN_MS = 1000
"""How long the message being read is held in place while earlier messages are laid out above it."""
_FOLLOW_SLACK_PX = 32
_FIRST_ITEM_INDEX = 2  # in the layout, after the "earlier" button and the placeholder


class ConversationView(QScrollArea):
    """Observes one :class:`ConversationState` at a time (:meth:`show_state`)."""

    action_triggered = Signal(str)
    """A notice's action (``review_changes``)."""
    announced = Signal(str)
    """What was announced to screen readers: a streamed answer is complete."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conversation")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setAccessibleName(translate("Conversation", "Conversation"))
        body = QWidget()
        body.setObjectName("conversationBody")
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(12, 12, 12, 12)
        self._layout.setSpacing(6)
        self.earlier = QPushButton()
        self.earlier.setFlat(True)
        self.earlier.setAccessibleName(translate("Conversation", "Show earlier messages"))
        self.earlier.clicked.connect(self.show_earlier)
        self.empty = QLabel(translate("Conversation", "Ask for something to get started. Ctrl+Enter sends."))
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setObjectName("placeholder")
        self._layout.addWidget(self.earlier)
        self._layout.addWidget(self.empty)
        self._layout.addStretch(1)
        self.setWidget(body)
        self._state: ConversationState | None = None
        self._folder: str | None = None
        self._widgets: OrderedDict[int, ItemWidget] = OrderedDict()
        self._first = 0  # index in state.items of the first item with a widget
        self._dirty: dict[int, ItemWidget] = {}
        self._frame = QTimer(self)
        self._frame.setSingleShot(True)
        self._frame.setInterval(FRAME_MS)
        self._frame.timeout.connect(self._draw)
        self._follow = True
        self._loading_earlier = False
        self._pin: tuple[QWidget, int] | None = None
        """The widget kept in place while earlier ones come in above it, and its offset on screen."""
        self._unpin = QTimer(self)
        self._unpin.setSingleShot(True)
        self._unpin.setInterval(PIN_MS)
        self._unpin.timeout.connect(self._release_pin)
        self._moves = _MoveWatcher(self._repin, self)
        self.frames = 0
        self.drawing_s = 0.0
        """Frames drawn and the time spent drawing them (for the benchmark)."""
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._range_changed)
        bar.actionTriggered.connect(self._release_pin)  # the user scrolls: they decide now
        self._style_scroll_bar()
        self._update_placeholders()

    # ------------------------------------------------------------------ which state

    @property
    def state(self) -> ConversationState | None:
        return self._state

    @property
    def widget_count(self) -> int:
        return len(self._widgets)

    def widgets(self) -> list[ItemWidget]:
        return list(self._widgets.values())

    def show_state(self, state: ConversationState | None, folder: str | None = None) -> None:
        """Show ``state``; ``folder`` (the project's) makes the paths in tool rows relative to it."""
        if self._state is state:
            return
        self._folder = folder
        if self._state is not None:
            self._state.unsubscribe(self)
        self._state = state
        if state is not None:
            state.subscribe(self)
        self._follow = True
        self._rebuild()

    # ------------------------------------------------------------------ StateObserver

    def item_added(self, item: Item) -> None:
        state = self._state
        if state is None:
            return
        self._append(item)
        if len(self._widgets) > WINDOW and (self._follow or len(self._widgets) > 2 * WINDOW):
            self._trim(len(self._widgets) - WINDOW)
        self._update_placeholders()

    def item_changed(self, item: Item) -> None:
        widget = self._widgets.get(item.key)
        if widget is not None:
            self._dirty[item.key] = widget
            if not self._frame.isActive():
                self._frame.start()

    def items_reset(self) -> None:
        self._rebuild()

    def status_changed(self) -> None:
        pass

    def banner_changed(self) -> None:
        pass

    # ------------------------------------------------------------------ drawing

    def _draw(self) -> None:
        started = time.perf_counter()
        dirty, self._dirty = self._dirty, {}
        for widget in dirty.values():
            widget.refresh()
        self.frames += 1
        self.drawing_s += time.perf_counter() - started

    def flush(self) -> None:
        """Draw what is marked now (tests, screenshots)."""
        self._frame.stop()
        self._draw()

    def _append(self, item: Item) -> None:
        widget = self._make(item)
        self._widgets[item.key] = widget
        self._layout.insertWidget(self._layout.count() - 1, widget)

    def _make(self, item: Item) -> ItemWidget:
        widget = widget_for(item, self._folder)
        if isinstance(widget, NoticeView):
            widget.action_triggered.connect(self.action_triggered.emit)
        elif isinstance(widget, AssistantView):
            widget.announced.connect(self.announced.emit)
        return widget

    def _trim(self, count: int) -> None:
        bar = self.verticalScrollBar()
        for _ in range(count):
            key, widget = self._widgets.popitem(last=False)
            self._dirty.pop(key, None)
            removed = widget.height() + self._layout.spacing()
            self._layout.removeWidget(widget)
            widget.deleteLater()
            self._first += 1
            if not self._follow:
                bar.setValue(max(0, bar.value() - removed))

    def _rebuild(self) -> None:
        self._release_pin()
        for widget in self._widgets.values():
            self._layout.removeWidget(widget)
            widget.deleteLater()
        self._widgets.clear()
        self._dirty.clear()
        items = self._state.items if self._state is not None else []
        self._first = max(0, len(items) - FIRST_SHOWN)
        for item in items[self._first :]:
            self._append(item)
        self._update_placeholders()

    def show_earlier(self) -> None:
        """Bring the previous items in above the shown ones, the message being read staying put."""
        state = self._state
        if state is None or self._first == 0:
            return
        bar = self.verticalScrollBar()
        anchor = next(iter(self._widgets.values()), None)
        before = anchor.y() - bar.value() if anchor is not None else 0
        start = max(0, self._first - FIRST_SHOWN)
        earlier = state.items[start : self._first]
        for offset, item in enumerate(earlier):
            widget = self._make(item)
            self._layout.insertWidget(_FIRST_ITEM_INDEX + offset, widget)
            self._widgets[item.key] = widget
        # Keep the widgets in item order: rebuild the ordered map from the state's order.
        self._widgets = OrderedDict((item.key, self._widgets[item.key]) for item in state.items[start:])
        self._first = start
        self._follow = False
        self._update_placeholders()
        if anchor is not None:
            self._keep_in_place(anchor, before)

    def _keep_in_place(self, anchor: QWidget, offset: int) -> None:
        """Keep ``anchor`` ``offset`` pixels below the top of the viewport, as it was before widgets
        were inserted above it, while those widgets are shown and find their heights (over the next
        few layout passes). The user's next scroll, or :data:`PIN_MS`, ends it."""
        if self._pin is not None:
            self._pin[0].removeEventFilter(self._moves)
        self._pin = (anchor, offset)
        anchor.installEventFilter(self._moves)
        self._unpin.start()
        self._repin()

    def _repin(self) -> None:
        if self._pin is None:
            return
        anchor, offset = self._pin
        self._loading_earlier = True
        try:
            self.verticalScrollBar().setValue(anchor.y() - offset)
        finally:
            self._loading_earlier = False

    def _release_pin(self, *_: object) -> None:
        if self._pin is not None:
            self._pin[0].removeEventFilter(self._moves)
            self._pin = None
        self._unpin.stop()

    def _update_placeholders(self) -> None:
        earlier = self._first
        self.earlier.setVisible(earlier > 0)
        self.earlier.setText(
            translate("Conversation", "Show earlier messages ({count} more)").format(count=earlier)
        )
        self.empty.setVisible(self._state is not None and not self._widgets)

    # ------------------------------------------------------------------ following the end

    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._follow = value >= bar.maximum() - _FOLLOW_SLACK_PX
        if value == bar.minimum() < bar.maximum() and self._first > 0 and not self._loading_earlier:
            # The user reached the top of what is shown: the earlier messages come in above it.
            QTimer.singleShot(0, self.show_earlier)

    def _range_changed(self, _minimum: int, maximum: int) -> None:
        if self._pin is not None:
            self._repin()
        elif self._follow:
            self.verticalScrollBar().setValue(maximum)

    def scroll_to_end(self) -> None:
        self._follow = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _style_scroll_bar(self) -> None:
        """A thumb darker than its track. Fusion draws a light handle on a darker groove, which reads
        upside down in a chat — at the newest messages the dark part sits at the top, where the oldest
        are — so the conversation's bar is drawn as chat apps draw theirs."""
        palette = self.palette()
        text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
        thumb = QColor(text)
        thumb.setAlpha(110)
        hover = QColor(text)
        hover.setAlpha(170)
        self.verticalScrollBar().setStyleSheet(
            f"QScrollBar:vertical {{ background: {base.name()}; width: 12px; margin: 0; border: none; }}"
            f" QScrollBar::handle:vertical {{ background: {_rgba(thumb)}; min-height: 32px;"
            " border-radius: 4px; margin: 2px 2px 2px 2px; }"
            f" QScrollBar::handle:vertical:hover {{ background: {_rgba(hover)}; }}"
            " QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical { height: 0; border: none; }"
            " QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical { background: none; }"
        )

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._style_scroll_bar()  # the theme switched between light and dark


def _rgba(colour: QColor) -> str:
    return f"rgba({colour.red()}, {colour.green()}, {colour.blue()}, {colour.alpha()})"


class _MoveWatcher(QObject):
    """Calls ``moved`` whenever a watched widget moves."""

    def __init__(self, moved: Callable[[], None], parent: QObject) -> None:
        super().__init__(parent)
        self._moved = moved

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Move:
            self._moved()
        return False
