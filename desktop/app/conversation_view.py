"""The conversation pane: one widget per item for the newest items only, redrawn at most once a frame.

* **Bounded:** at most :data:`WINDOW` item widgets exist, however long the conversation; older items
  stay in the Qt-free state and come back with "Show earlier messages". Memory then grows with the
  text of a conversation, not with its widgets.
* **Coalesced:** a change only marks its item; a frame timer (:data:`FRAME_MS`) redraws each marked
  item once, whatever number of ``text_chunk`` events arrived in between. Nothing else is redrawn.
* **Follows the end** while the user is at the bottom; scrolled up, the view stays where they read.
"""

from __future__ import annotations

import time
from collections import OrderedDict

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from desktop.app.messages import ItemWidget, NoticeView, widget_for
from desktop.conversation.items import Item
from desktop.conversation.state import ConversationState

__all__ = ["FIRST_SHOWN", "FRAME_MS", "WINDOW", "ConversationView"]

WINDOW = 120
"""The most item widgets alive at once."""
FIRST_SHOWN = 60
"""Items shown when a conversation is opened; "Show earlier messages" adds this many more."""
FRAME_MS = 16
_FOLLOW_SLACK_PX = 32
_FIRST_ITEM_INDEX = 2  # in the layout, after the "earlier" button and the placeholder


class ConversationView(QScrollArea):
    """Observes one :class:`ConversationState` at a time (:meth:`show_state`)."""

    action_triggered = Signal(str)
    """A notice's action (``review_changes``)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conversation")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        body.setObjectName("conversationBody")
        self._layout = QVBoxLayout(body)
        self._layout.setContentsMargins(12, 12, 12, 12)
        self._layout.setSpacing(6)
        self.earlier = QPushButton()
        self.earlier.setFlat(True)
        self.earlier.clicked.connect(self.show_earlier)
        self.empty = QLabel("Ask for something to get started. Ctrl+Enter sends.")
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
        self.frames = 0
        self.drawing_s = 0.0
        """Frames drawn and the time spent drawing them (for the benchmark)."""
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._range_changed)
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
        widget = widget_for(item, self._folder)
        if isinstance(widget, NoticeView):
            widget.action_triggered.connect(self.action_triggered.emit)
        self._widgets[item.key] = widget
        self._layout.insertWidget(self._layout.count() - 1, widget)

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
        state = self._state
        if state is None or self._first == 0:
            return
        start = max(0, self._first - FIRST_SHOWN)
        earlier = state.items[start : self._first]
        widgets = [widget_for(item, self._folder) for item in earlier]
        for offset, (item, widget) in enumerate(zip(earlier, widgets, strict=True)):
            if isinstance(widget, NoticeView):
                widget.action_triggered.connect(self.action_triggered.emit)
            self._layout.insertWidget(_FIRST_ITEM_INDEX + offset, widget)
            self._widgets[item.key] = widget
        # Keep the widgets in item order: rebuild the ordered map from the state's order.
        self._widgets = OrderedDict((item.key, self._widgets[item.key]) for item in state.items[start:])
        self._first = start
        self._follow = False
        self._update_placeholders()

    def _update_placeholders(self) -> None:
        earlier = self._first
        self.earlier.setVisible(earlier > 0)
        self.earlier.setText(f"Show earlier messages ({earlier} more)")
        self.empty.setVisible(self._state is not None and not self._widgets)

    # ------------------------------------------------------------------ following the end

    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._follow = value >= bar.maximum() - _FOLLOW_SLACK_PX

    def _range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(maximum)

    def scroll_to_end(self) -> None:
        self._follow = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
