"""What a conversation shows, item by item: the user's prompts, the assistant's words, compact
tool-call rows, short notices, and the notice that an MCP server needs the user to sign in. Plain
data, no Qt: :mod:`desktop.conversation.state` builds them from the runtime's events or a stored
history, and the window draws them.

Every item has a ``key`` unique within its conversation (the order it was added in); the view keeps
one widget per key for the items it shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from desktop.conversation.attachments import ShownImage

__all__ = [
    "AssistantMessage",
    "Denial",
    "Item",
    "Notice",
    "SignInNotice",
    "Tone",
    "ToolCallRow",
    "ToolState",
    "UserMessage",
]


class Tone(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class ToolState(StrEnum):
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DENIED = "denied"


class Denial(StrEnum):
    """Who or what refused a tool call: the user's answer reads differently from the policy's rule."""

    USER = "user"
    POLICY = "policy"
    TIMEOUT = "timeout"
    """Nobody answered the approval request in time."""
    CANCELLED = "cancelled"
    """The task was cancelled while the call waited for approval."""


@dataclass(eq=False, slots=True)
class UserMessage:
    key: int
    text: str
    task_id: str | None = None
    images: list[ShownImage] = field(default_factory=list)
    """The images attached to the message (``desktop.conversation.attachments``)."""


@dataclass(eq=False, slots=True)
class AssistantMessage:
    """The assistant's words in one step; ``streaming`` while ``text_chunk`` events still arrive."""

    key: int
    step_id: str | None = None
    task_id: str | None = None
    streaming: bool = False
    cancelled: bool = False
    """The task was cancelled while this answer streamed: what arrived is kept, marked cancelled."""
    _chunks: list[str] = field(default_factory=list)

    def append(self, text: str) -> None:
        # O(1) per chunk: thousands arrive a second, and the text is only joined when it is drawn.
        self._chunks.append(text)

    def clear(self) -> None:
        self._chunks.clear()

    @property
    def text(self) -> str:
        chunks = self._chunks
        if len(chunks) > 1:
            chunks[:] = ["".join(chunks)]
        return chunks[0] if chunks else ""


@dataclass(eq=False, slots=True)
class ToolCallRow:
    """One tool call: what it acts on, how it is going, how long it took, what it said."""

    key: int
    tool_name: str
    tool_call_id: str | None = None
    target: str | None = None
    state: ToolState = ToolState.RUNNING
    step_id: str | None = None
    duration_ms: int | None = None
    """How long the tool itself took: the time spent waiting for approval is not in it."""
    approval_wait_ms: int | None = None
    """How long the call waited for the user's approval (``None``: nobody was asked)."""
    denial: Denial | None = None
    """Who refused the call, when it was refused."""
    output: str | None = None
    """The output's beginning (the runtime sends a preview), or the error's message."""
    approval_id: str | None = None
    progress: str | None = None
    """What a running MCP tool last said of its progress (``mcp_progress``), or that its server waits
    for the user's answer; not shown once the call has ended."""

    @property
    def finished(self) -> bool:
        return self.state in (ToolState.SUCCEEDED, ToolState.FAILED, ToolState.DENIED)


@dataclass(eq=False, slots=True)
class Notice:
    """A line about the conversation itself: a cancelled task, a warning, a change to review."""

    key: int
    text: str
    tone: Tone = Tone.INFO
    action: str | None = None
    """What the notice offers to do (``review_changes``), or ``None``."""


@dataclass(eq=False, slots=True)
class SignInNotice:
    """An MCP server needs the user to sign in (``mcp_authorization_required``): the page's address,
    whether the browser was opened on it, and why not when it was not."""

    key: int
    server_name: str
    url: str
    opened: bool = False
    problem: str = ""
    """Why the browser was not opened (``""`` when it was, or when nothing tried yet)."""


Item = UserMessage | AssistantMessage | ToolCallRow | Notice | SignInNotice
