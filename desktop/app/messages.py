"""The widgets of one conversation item each: the user's prompt, the assistant's Markdown, a compact
tool-call row that expands to its output, and a notice line. They only draw what
:mod:`desktop.conversation.items` holds; ``refresh()`` draws it again after a change.

The assistant's answer is cut into prose and fenced code blocks (:class:`AnswerSplitter`): prose is
Markdown in a ``QTextDocument``, each code block a :class:`CodeBlockView` of its own with a Copy
button, highlighted once when it closes. While the answer streams, nothing settled is redrawn: the
parts before the growing one are final, and in the growing prose each block that can no longer change
(:class:`SettledScanner`) is appended to the document once, only the unsettled tail being replaced on
each frame. When the stream ends each prose part is drawn once more from its whole text (up to
:data:`FULL_REDRAW_CHARS`), so the final result is exactly what a single Markdown pass gives.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import (
    QAccessible,
    QFontDatabase,
    QGuiApplication,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.app.attachments_view import ThumbnailRow
from desktop.app.code_blocks import CodeBlockView
from desktop.app.rich_text import AutoHeightBrowser, code_background, mark_inline_code
from desktop.conversation.items import (
    AssistantMessage,
    Denial,
    Item,
    Notice,
    SignInNotice,
    Tone,
    ToolCallRow,
    ToolState,
    UserMessage,
)
from desktop.conversation.streaming import AnswerSplitter, Code, Part, Prose, SettledScanner, split_answer
from desktop.i18n import translate

try:  # Qt 6.8+: a screen reader reads the text out without moving the focus.
    from PySide6.QtGui import QAccessibleAnnouncementEvent
except ImportError:  # pragma: no cover - older Qt: the accessible description carries it
    QAccessibleAnnouncementEvent = None  # type: ignore[assignment,misc]

__all__ = [
    "ANNOUNCED_CHARS",
    "FULL_REDRAW_CHARS",
    "AssistantView",
    "ItemWidget",
    "NoticeView",
    "ProseView",
    "ToolRowView",
    "UserView",
    "widget_for",
]

FULL_REDRAW_CHARS = 64 * 1024
"""Prose parts up to this size are drawn once more from their whole text when the stream ends."""
OUTPUT_LINES = 14
"""The most lines a tool's output shows before it scrolls."""
GROUP_PARTS = 16
"""An answer's parts are laid out in groups of this many."""
ANNOUNCED_CHARS = 600
"""How much of a finished answer is read out to a screen reader (the rest is a keypress away)."""

TONE_COLOURS = {Tone.INFO: None, Tone.WARNING: "#b26a00", Tone.ERROR: "#c62828"}
_STATE_MARKS = {
    ToolState.RUNNING: "⋯",
    ToolState.AWAITING_APPROVAL: "⏸",
    ToolState.SUCCEEDED: "✓",
    ToolState.FAILED: "✗",
    ToolState.DENIED: "⊘",
}


class ItemWidget(QFrame):
    """Base of the item widgets: ``item`` is what it draws."""

    def __init__(self, item: Item, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item

    def refresh(self) -> None:
        """Draw the item again after it changed."""


class UserView(ItemWidget):
    def __init__(self, item: UserMessage, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self.setObjectName("userMessage")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        who = QLabel(translate("Conversation", "You"))
        who.setObjectName("speaker")
        self.text = AutoHeightBrowser()
        self.text.setAccessibleName(translate("Conversation", "Your message"))
        self.images = ThumbnailRow()
        layout.addWidget(who)
        layout.addWidget(self.text)
        layout.addWidget(self.images)
        self.refresh()

    def refresh(self) -> None:
        assert isinstance(self.item, UserMessage)
        document = self.text.document()
        document.setMarkdown(self.item.text)
        mark_inline_code(document, 0, code_background())
        self.images.show_images(self.item.images)


class ProseView(AutoHeightBrowser):
    """Markdown between code blocks, drawn incrementally while it streams."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName(translate("Conversation", "Answer text"))
        self._scanner = SettledScanner()
        self._settled = 0  # characters of the text drawn as settled blocks
        self._tail_at = 0  # document position where the tail's drawing starts
        self._drawn = ""  # the text the document shows
        self.final = False
        """Drawn from its whole text: it will not change any more."""

    def show_text(self, text: str, *, final: bool) -> None:
        if final:
            if not self.final or text != self._drawn:
                self._draw_whole(text)
            return
        self.final = False
        if len(text) < self._settled or not text.startswith(self._drawn[: self._settled]):
            self._restart()
        document = self.document()
        settled = self._scanner.feed(text)
        cursor = QTextCursor(document)
        cursor.setPosition(self._tail_at)
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        background = code_background()
        if settled > self._settled:
            start = _append_markdown(document, text[self._settled : settled])
            mark_inline_code(document, start, background)
            self._settled = settled
            self._tail_at = _end(document)
        tail = text[settled:]
        if tail.strip():
            mark_inline_code(document, _append_markdown(document, tail), background)
        self._drawn = text

    def _draw_whole(self, text: str) -> None:
        document = self.document()
        if len(text) <= FULL_REDRAW_CHARS or not self._drawn:
            document.setMarkdown(text)
            mark_inline_code(document, 0, code_background())
        else:
            # Too long to lay out again in one frame: what streamed stays, the last tail is settled.
            cursor = QTextCursor(document)
            cursor.setPosition(self._tail_at)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            start = _append_markdown(document, text[self._settled :])
            mark_inline_code(document, start, code_background())
        self._drawn = text
        self.final = True
        self._scanner.reset()
        self._settled = 0
        self._tail_at = 0

    def _restart(self) -> None:
        self._scanner.reset()
        self._settled = 0
        self._tail_at = 0
        self.document().clear()
        self._drawn = ""


class AssistantView(ItemWidget):
    """The assistant's answer: prose and code blocks; "Cancelled" when a cancel cut it off."""

    announced = Signal(str)
    """The text given to screen readers when the streamed answer finished."""

    def __init__(self, item: AssistantMessage, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self.setObjectName("assistantMessage")
        self.setAccessibleName(translate("Conversation", "Cowork's answer"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        header = QHBoxLayout()
        who = QLabel("Cowork")  # the name, in every language
        who.setObjectName("speaker")
        self.cancelled_label = QLabel(translate("Conversation", "Cancelled"))
        self.cancelled_label.setObjectName("cancelledMark")
        self.cancelled_label.setStyleSheet("color: #b26a00; font-style: italic;")
        self.cancelled_label.setToolTip(
            translate("Conversation", "The task was cancelled while this answer was being written.")
        )
        self.cancelled_label.hide()
        self.copy_button = QToolButton()
        self.copy_button.setText(translate("Conversation", "Copy"))
        self.copy_button.setToolTip(translate("Conversation", "Copy this answer as Markdown"))
        self.copy_button.setAccessibleName(translate("Conversation", "Copy the answer"))
        self.copy_button.setAutoRaise(True)
        self.copy_button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.copy_button.clicked.connect(self._copy)
        header.addWidget(who)
        header.addWidget(self.cancelled_label)
        header.addStretch(1)
        header.addWidget(self.copy_button)
        layout.addLayout(header)
        self._body = QVBoxLayout()
        self._body.setContentsMargins(0, 0, 0, 0)
        self._body.setSpacing(4)
        layout.addLayout(self._body)
        self.parts: list[ProseView | CodeBlockView] = []
        """The widgets of the answer's parts, in order."""
        self._splitter = AnswerSplitter()
        self._fixed = 0  # parts drawn final while streaming: never visited again
        self._groups: list[QVBoxLayout] = []
        """The layouts of the groups of parts, in order (see :meth:`_add_part`)."""
        self._drawn = ""
        self._streamed = False
        self._finished = False
        self.refresh()

    @property
    def message(self) -> AssistantMessage:
        assert isinstance(self.item, AssistantMessage)
        return self.item

    @property
    def browser(self) -> AutoHeightBrowser:
        """The first text view of the answer (made at once, so its first paint can be watched)."""
        for part in self.parts:
            return part.text if isinstance(part, CodeBlockView) else part
        self._add_part(ProseView)
        return self.browser

    def plain_text(self) -> str:
        """The answer as shown, without formatting: its parts one after the other."""
        texts = []
        for part in self.parts:
            texts.append(part.code if isinstance(part, CodeBlockView) else part.document().toPlainText())
        return "\n".join(texts)

    def code_blocks(self) -> list[CodeBlockView]:
        return [part for part in self.parts if isinstance(part, CodeBlockView)]

    def refresh(self) -> None:
        message = self.message
        text = message.text
        self.cancelled_label.setVisible(message.cancelled)
        if message.streaming:
            self._streamed = True
            self._finished = False
            if not text.startswith(self._drawn):
                # The runtime discarded the partial answer and asked again.
                self._splitter.reset()
                self._fixed = 0
                self._truncate(0)
            parts = self._splitter.feed(text)
            self._show(parts, done=len(self._splitter.done), final=False)
        else:
            if text != self._drawn or not self._finished:
                self._splitter.reset()
                self._show(split_answer(text), done=0, final=True)
                self._fixed = 0
            if self._streamed and not self._finished:
                self._announce()
            self._finished = True
        self._drawn = text

    def _show(self, parts: list[Part], *, done: int, final: bool) -> None:
        for index, part in enumerate(parts):
            if not final and index < self._fixed:
                continue
            kind = CodeBlockView if isinstance(part, Code) else ProseView
            if index >= len(self.parts) or not isinstance(self.parts[index], kind):
                self._truncate(index)
                self._add_part(kind)
            widget = self.parts[index]
            part_final = final or index < done
            if isinstance(part, Code) and isinstance(widget, CodeBlockView):
                widget.show_code(part.code, part.language, final=part_final)
            elif isinstance(part, Prose) and isinstance(widget, ProseView):
                widget.show_text(part.text, final=part_final)
        self._truncate(len(parts))
        if not final:
            self._fixed = done

    def _add_part(self, kind: type[ProseView] | type[CodeBlockView]) -> None:
        """A new part, in the last group of :data:`GROUP_PARTS` (a new group when that one is full).
        The answer's layout holds the groups: a frame that grows the last part lays out its group
        and the list of groups, not every part (an answer may hold hundreds of code blocks)."""
        if not self._groups or self._groups[-1].count() >= GROUP_PARTS:
            box = QWidget()
            group = QVBoxLayout(box)
            group.setContentsMargins(0, 0, 0, 0)
            group.setSpacing(self._body.spacing())
            self._body.addWidget(box)
            self._groups.append(group)
        widget = kind()
        self.parts.append(widget)
        self._groups[-1].addWidget(widget)

    def _truncate(self, count: int) -> None:
        while len(self.parts) > count:
            widget = self.parts.pop()
            holder = widget.parentWidget()
            layout = holder.layout() if holder is not None else None
            if layout is not None:
                layout.removeWidget(widget)
            widget.deleteLater()
        while self._groups and self._groups[-1].count() == 0:
            box = self._groups.pop().parentWidget()
            if box is not None:
                self._body.removeWidget(box)
                box.deleteLater()

    def _announce(self) -> None:
        """Tell screen readers the answer is complete: an announcement where Qt has them, and the
        answer's start as this item's accessible description either way."""
        message = self.message
        start = " ".join(self.plain_text().split())[:ANNOUNCED_CHARS]
        if message.cancelled:
            text = translate("Conversation", "Answer cancelled: {text}").format(text=start)
        else:
            text = translate("Conversation", "Cowork answered: {text}").format(text=start)
        self.setAccessibleDescription(text)
        if QAccessibleAnnouncementEvent is not None:
            QAccessible.updateAccessibility(QAccessibleAnnouncementEvent(self, text))
        self.announced.emit(text)

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.message.text)


def _end(document: QTextDocument) -> int:
    cursor = QTextCursor(document)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    return cursor.position()


def _append_markdown(document: QTextDocument, markdown: str) -> int:
    """Append ``markdown`` as blocks of their own at the end of ``document``; where they start.

    ``insertMarkdown`` merges the fragment's first block into the block at the cursor, taking that
    block's format: a new, plain block is made first and given the first block's own format after.
    """
    cursor = QTextCursor(document)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    if not document.isEmpty():
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        listed = cursor.block().textList()
        if listed is not None:
            listed.remove(cursor.block())
        cursor.setBlockFormat(QTextBlockFormat())
    start = cursor.position()
    fragment = QTextDocument()
    fragment.setMarkdown(markdown)
    first = fragment.begin()
    cursor.insertMarkdown(markdown)
    if first.textList() is None:
        QTextCursor(document.findBlock(start)).setBlockFormat(first.blockFormat())
    return start


class ToolRowView(ItemWidget):
    """``✓ WriteFile  notes.md · 12 ms``; a click shows what the tool said."""

    def __init__(self, item: ToolCallRow, root: str | None = None, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self._root = root.rstrip("/\\") if root else None
        self.setObjectName("toolRow")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 1, 10, 1)
        layout.setSpacing(2)
        self.header = QToolButton()
        self.header.setObjectName("toolHeader")
        self.header.setCheckable(True)
        self.header.setAutoRaise(True)
        self.header.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header.setArrowType(Qt.ArrowType.RightArrow)
        # Ignored: a long target is cut by the row's width (the tooltip has it whole), never widening it.
        self.header.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.header.toggled.connect(self._toggle)
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setAccessibleName(translate("Conversation", "Tool output"))
        self.output.setTabChangesFocus(True)
        self.output.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.output.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.output.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.output.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.output.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.output.hide()
        layout.addWidget(self.header)
        layout.addWidget(self.output)
        self.refresh()

    @property
    def row(self) -> ToolCallRow:
        assert isinstance(self.item, ToolCallRow)
        return self.item

    def refresh(self) -> None:
        row = self.row
        # An MCP tool's call names no file or command: its target, when the runtime sends one, is the
        # tool itself, which the row already shows.
        target = "" if row.target == row.tool_name else _relative(row.target or "", self._root)
        if len(target) > 90:
            target = target[:60] + "…" + target[-29:]
        text = f"{_STATE_MARKS[row.state]}  {row.tool_name}  {target}{tool_timing(row)}{tool_outcome(row)}"
        self.header.setText(text)
        self.header.setAccessibleName(text)
        self.header.setToolTip(row.target or row.tool_name)
        self.header.setProperty("state", row.state.value)
        self.header.style().unpolish(self.header)
        self.header.style().polish(self.header)
        self.header.setEnabled(True)
        if self.output.isVisible():
            self._fill()

    def _toggle(self, shown: bool) -> None:
        self.header.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        if shown:
            self._fill()
        self.output.setVisible(shown)

    def _fill(self) -> None:
        if self.row.output:
            text = self.row.output
        elif self.row.finished:
            text = translate("Conversation", "(no output)")
        else:
            text = translate("Conversation", "(running…)")
        if self.output.toPlainText() != text:
            self.output.setPlainText(text)
        self._fit()

    def _fit(self) -> None:
        # The plain-text layout measures in lines, wrapped ones included.
        lines = max(1, min(OUTPUT_LINES, round(self.output.document().size().height())))
        frame = 2 * self.output.frameWidth() + 8
        # One line more than the text: the document's margins would otherwise bring a scroll bar.
        height = (lines + 1) * self.output.fontMetrics().lineSpacing() + frame
        if self.output.height() != height:
            self.output.setFixedHeight(height)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.output.isVisible():
            self._fit()


def tool_timing(row: ToolCallRow) -> str:
    """`` · 0.4 s · waited 12 s for approval``: the tool's own time, then the wait for the user."""
    if row.state is ToolState.DENIED or row.duration_ms is None:
        return ""
    text = f" · {_duration(row.duration_ms)}"
    if row.approval_wait_ms:
        waited = translate("Conversation", "waited {time} for approval")
        text += " · " + waited.format(time=_duration(row.approval_wait_ms))
    return text


def tool_outcome(row: ToolCallRow) -> str:
    """`` — failed``, `` — You denied this``, `` — Blocked by policy: <reason>``; nothing on success."""
    state = row.state
    if state is ToolState.SUCCEEDED:
        return ""
    if state is ToolState.RUNNING:
        words = translate("Conversation", "running")
        if row.progress:
            words += f" · {row.progress}"  # what a running MCP tool last reported
    elif state is ToolState.AWAITING_APPROVAL:
        words = translate("Conversation", "waiting for your approval")
    elif state is ToolState.FAILED:
        words = translate("Conversation", "failed")
    elif row.denial is Denial.USER:
        words = translate("Conversation", "You denied this")
    elif row.denial is Denial.TIMEOUT:
        words = translate("Conversation", "Not approved in time")
    elif row.denial is Denial.CANCELLED:
        words = translate("Conversation", "Not run: the task was cancelled")
    else:
        reason = " ".join((row.output or "").split()).rstrip(".")
        if len(reason) > 160:
            reason = reason[:159] + "…"
        if reason:
            words = translate("Conversation", "Blocked by policy: {reason}").format(reason=reason)
        else:
            words = translate("Conversation", "Blocked by policy")
    return f" — {words}"


def _relative(target: str, root: str | None) -> str:
    """A path inside the project folder, as the user thinks of it: relative to the folder."""
    if root and len(target) > len(root) + 1 and target.startswith(root) and target[len(root)] in "/\\":
        return target[len(root) + 1 :]
    return target


def _duration(ms: int) -> str:
    if ms < 1000:
        return translate("Conversation", "{ms} ms").format(ms=ms)
    if ms < 60_000:
        return translate("Conversation", "{s} s").format(s=f"{ms / 1000:.1f}")
    return translate("Conversation", "{m} min {s} s").format(m=ms // 60_000, s=ms % 60_000 // 1000)


class NoticeView(ItemWidget):
    """A short line about the conversation; one with an action has a link that triggers it."""

    action_triggered = Signal(str)

    def __init__(self, item: Notice, parent: QWidget | None = None) -> None:
        super().__init__(item, parent)
        self.setObjectName("notice")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 2, 10, 2)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.text.linkActivated.connect(self.action_triggered.emit)
        layout.addWidget(self.text)
        self.refresh()

    def refresh(self) -> None:
        assert isinstance(self.item, Notice)
        notice = self.item
        text = _escape(notice.text)
        if notice.action == "review_changes":
            text += f' <a href="{notice.action}">{translate("Conversation", "Review changes")}</a>'
        colour = TONE_COLOURS[notice.tone]
        style = f"color: {colour};" if colour else ""
        self.text.setText(f'<i style="{style}">{text}</i>')
        self.text.setAccessibleName(notice.text)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def widget_for(item: Item, root: str | None = None) -> ItemWidget:
    """The widget for ``item``; ``root`` is the conversation's project folder, if any."""
    if isinstance(item, AssistantMessage):
        return AssistantView(item)
    if isinstance(item, ToolCallRow):
        return ToolRowView(item, root)
    if isinstance(item, UserMessage):
        return UserView(item)
    if isinstance(item, SignInNotice):
        # Imported here: the MCP sign-in view builds on this module's ItemWidget.
        from desktop.mcp.sign_in_view import SignInView

        return SignInView(item)
    return NoticeView(item)
