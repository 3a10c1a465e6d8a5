"""The session's message thread (seed 000 §5.1, §5.3, §5.5; seed 004 Message, session_history).

One ordered list of ``ConversationMessage`` across every task of the session: user prompts, assistant
replies with the tool calls they make, tool results and system notes. Each message gets an id, its
task and step, a timestamp and a token count computed once, when it is added — with an on-demand
tokenizer (:mod:`.tokens`) an estimate at first, counted again exactly once a decision about the
context window or the budget could depend on it (:meth:`ConversationThread.select_context`).

The order is checked on every addition and on every restore, so the thread can always be turned into
an LLM request: an assistant message with tool calls is followed by one result per call (in any
order) before anything else; a result answers exactly one open call, by id and tool name.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime

from pydantic import ValidationError

from agent_runtime.agent_host.thread.budget import TokenBudget
from agent_runtime.agent_host.thread.context import (
    DEFAULT_RECENCY_WINDOW,
    ContextSelection,
    Units,
    select,
    truncation_marker_text,
)
from agent_runtime.agent_host.thread.errors import ThreadError, ThreadOrderError, TokenizerUnavailable
from agent_runtime.agent_host.thread.tokens import (
    ESTIMATE_BOUND,
    Tokenizer,
    count_message,
    estimate_without_tokenizer,
)
from contracts.checkpoint import Checkpoint
from contracts.enums import Role, ToolStatus
from contracts.errors import ErrorCode
from contracts.images import ImageContent
from contracts.messages import ConversationMessage, SessionHistory
from contracts.tools import ToolCall, ToolResult
from contracts.validation import invalid_request

__all__ = ["Clock", "ConversationThread", "IdFactory", "new_message_id", "render_tool_result", "utc_now"]

Clock = Callable[[], datetime]
IdFactory = Callable[[], str]


def utc_now() -> datetime:
    return datetime.now(UTC)


def new_message_id() -> str:
    return f"msg_{uuid.uuid4().hex}"


def render_tool_result(result: ToolResult) -> str:
    """What the model reads for a tool result: the output, or the error it can correct course by
    (seed 000 §4.6), and where the full output went when it was too long to keep inline."""
    output = result.output_text or ""
    if result.status is ToolStatus.SUCCEEDED:
        text = output or "(no output)"
    elif result.status is ToolStatus.DENIED:
        reason = result.error.message if result.error else "the action is not allowed"
        text = f"Denied: {reason}"
    else:
        assert result.error is not None  # a failed ToolResult always says why (its validator)
        text = f"Failed ({result.error.code.value}): {result.error.message}"
        if output:
            text += f"\n{output}"
    if result.artifact_uris:
        text += "\n[Full output saved as: " + ", ".join(result.artifact_uris) + "]"
    return text


class _Order:
    """The ordering rules, applied the same way to live additions and to restored messages."""

    __slots__ = ("call_ids", "message_ids", "pending")

    def __init__(self) -> None:
        self.message_ids: set[str] = set()
        self.call_ids: set[str] = set()
        self.pending: dict[str, str] = {}  # open tool call id → tool name, in call order

    def check(self, message: ConversationMessage, index: int) -> None:
        where = {"index": index, "messageId": message.message_id}
        if message.message_id in self.message_ids:
            raise ThreadOrderError(f"Message id {message.message_id} appears twice in the thread.", **where)
        if message.role is Role.TOOL:
            call_id = message.tool_call_id
            assert call_id is not None  # ConversationMessage's validator
            if call_id not in self.pending:
                raise ThreadOrderError(
                    f"Tool result {message.message_id} answers call {call_id}, which is not an open tool"
                    " call of the assistant message before it.",
                    toolCallId=call_id,
                    **where,
                )
            if message.tool_name is not None and message.tool_name != self.pending[call_id]:
                raise ThreadOrderError(
                    f"Tool result {message.message_id} is for {message.tool_name}, but call {call_id}"
                    f" was to {self.pending[call_id]}.",
                    toolCallId=call_id,
                    **where,
                )
            return
        if self.pending:
            raise ThreadOrderError(
                f"Message {message.message_id} comes before the results of tool calls"
                f" {', '.join(self.pending)}: every call is answered before the conversation goes on.",
                pendingToolCallIds=list(self.pending),
                **where,
            )
        for call in message.tool_calls or ():
            if call.tool_call_id in self.call_ids:
                raise ThreadOrderError(
                    f"Tool call id {call.tool_call_id} is used twice in the thread.",
                    toolCallId=call.tool_call_id,
                    **where,
                )

    def accept(self, message: ConversationMessage) -> None:
        self.message_ids.add(message.message_id)
        if message.role is Role.TOOL:
            assert message.tool_call_id is not None
            del self.pending[message.tool_call_id]
            return
        for call in message.tool_calls or ():
            self.call_ids.add(call.tool_call_id)
            self.pending[call.tool_call_id] = call.tool_name


class ConversationThread:
    """The ordered thread of one session, its token counts and its budget."""

    def __init__(
        self,
        session_id: str,
        tokenizer: Tokenizer,
        clock: Clock = utc_now,
        id_factory: IdFactory = new_message_id,
        *,
        budget: TokenBudget,
    ) -> None:
        if not session_id:
            raise ValueError("session_id must not be empty")
        self.session_id = session_id
        self.budget = budget
        self._tokenizer = tokenizer
        self._clock = clock
        self._id_factory = id_factory
        self._messages: list[ConversationMessage] = []
        self._units = Units()
        self._order = _Order()
        self._tokenizer_failure: TokenizerUnavailable | None = None
        self._marker_tokens: dict[int, int] = {}
        self._estimated: set[int] = set()
        """Indexes of the messages whose ``tokenCount`` is an estimate awaiting the tokenizer."""
        self.on_exact_counts: Callable[[], None] | None = None
        """Called once the thread counts exactly after estimating: counts cached elsewhere (the
        system prompt's, the tool definitions') may be refreshed."""

    # ------------------------------------------------------------------ reading

    @property
    def messages(self) -> tuple[ConversationMessage, ...]:
        """The thread, oldest first. The messages are shared, not copied: treat them as read-only."""
        return tuple(self._messages)

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[ConversationMessage]:
        return iter(tuple(self._messages))

    @property
    def thread_token_count(self) -> int:
        """``threadTokenCount``: the sum of the token counts of every message in the thread."""
        return self._units.total

    @property
    def session_tokens_used(self) -> int:
        """``sessionTokensUsed``: actual input + output tokens of every LLM call of the session."""
        return self.budget.used

    @property
    def pending_tool_calls(self) -> dict[str, str]:
        """Tool calls of the last assistant message still waiting for a result: id → tool name."""
        return dict(self._order.pending)

    @property
    def tokenizer_failure(self) -> TokenizerUnavailable | None:
        """Why token counts are estimates, if the tokenizer failed; messages were kept regardless."""
        return self._tokenizer_failure

    @property
    def counted_with(self) -> str | None:
        """The encoding every message's ``tokenCount`` was counted with; None when some are estimates
        (the tokenizer failed) or the tokenizer does not name its encoding."""
        if self._tokenizer_failure is not None or self._estimated:
            return None
        encoding = getattr(self._tokenizer, "encoding", None)
        return encoding if isinstance(encoding, str) else None

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` — e.g. the system prompt or the tool definitions — with the thread's
        tokenizer, or a high estimate if it is unavailable or not needed yet (on demand)."""
        if self._estimating():
            return estimate_without_tokenizer(text)
        try:
            return self._tokenizer.count(text)
        except TokenizerUnavailable as exc:
            if self._tokenizer_failure is None:
                self._tokenizer_failure = exc
            return estimate_without_tokenizer(text)

    def _estimating(self) -> bool:
        tokenizer = self._tokenizer
        return bool(getattr(tokenizer, "on_demand", False)) and not getattr(tokenizer, "settled", True)

    # ------------------------------------------------------------------ adding

    def add_user_message(
        self,
        content: str,
        *,
        task_id: str,
        step_id: str | None = None,
        images: Sequence[ImageContent] = (),
    ) -> ConversationMessage:
        """The user's prompt that starts a task (seed 000 §4.1), with the images attached to it."""
        return self._add(Role.USER, content, task_id=task_id, step_id=step_id, images=list(images))

    def add_assistant_message(
        self,
        content: str,
        *,
        task_id: str,
        step_id: str,
        tool_calls: Sequence[ToolCall] = (),
    ) -> ConversationMessage:
        """The model's complete response: its text and the tool calls to run (seed 000 §6.3)."""
        return self._add(
            Role.ASSISTANT, content, task_id=task_id, step_id=step_id, tool_calls=list(tool_calls)
        )

    def add_tool_result(self, result: ToolResult, *, tool_call_id: str | None = None) -> ConversationMessage:
        """The result of one open tool call; ``tool_call_id`` defaults to the result's own."""
        call_id = tool_call_id or result.tool_call_id
        if call_id is None:
            raise ThreadOrderError(
                f"The result of {result.tool_name} names no toolCallId, so it answers no call.",
                toolName=result.tool_name,
            )
        return self._add(
            Role.TOOL,
            render_tool_result(result),
            task_id=result.task_id,
            step_id=result.step_id,
            tool_call_id=call_id,
            tool_name=result.tool_name,
            tool_status=result.status,
        )

    def add_system_note(
        self, content: str, *, task_id: str | None = None, step_id: str | None = None
    ) -> ConversationMessage:
        """A note for the model at this point of the conversation, e.g. that the gateway blocked the
        last request (seed 000 §6.4)."""
        return self._add(Role.SYSTEM, content, task_id=task_id, step_id=step_id)

    def fail_pending_tool_calls(
        self, reason: str, *, task_id: str, step_id: str
    ) -> list[ConversationMessage]:
        """Answer every open tool call with a failed result saying ``reason`` — for a step that ended
        before its tools reported (a crash, a shutdown), so the conversation can go on."""
        return [
            self._add(
                Role.TOOL,
                f"Failed: {reason}",
                task_id=task_id,
                step_id=step_id,
                tool_call_id=call_id,
                tool_name=tool_name,
                tool_status=ToolStatus.FAILED,
            )
            for call_id, tool_name in list(self._order.pending.items())
        ]

    def _add(
        self,
        role: Role,
        content: str,
        *,
        task_id: str | None,
        step_id: str | None,
        tool_calls: list[ToolCall] | None = None,
        tool_call_id: str | None = None,
        tool_name: str | None = None,
        tool_status: ToolStatus | None = None,
        images: list[ImageContent] | None = None,
    ) -> ConversationMessage:
        if not isinstance(content, str):
            raise ThreadError(
                ErrorCode.INVALID_REQUEST,
                f"Message content must be text, not {type(content).__name__}.",
                details={"field": "content"},
            )
        for field, value in (("taskId", task_id), ("stepId", step_id)):
            if value is not None and (not isinstance(value, str) or not value):
                raise ThreadError(
                    ErrorCode.INVALID_REQUEST,
                    f"{field} must be a non-empty string.",
                    details={"field": field},
                )
        estimated = self._estimating()
        tokens = count_message(
            self.count_tokens, content, tool_calls=tool_calls, tool_name=tool_name, images=len(images or ())
        )
        try:
            message = ConversationMessage(
                message_id=self._id_factory(),
                session_id=self.session_id,
                task_id=task_id,
                step_id=step_id,
                role=role,
                content=content,
                token_count=tokens,
                timestamp=self._clock(),
                tool_calls=tool_calls or None,
                tool_call_id=tool_call_id,
                tool_name=tool_name,
                tool_status=tool_status,
                images=images or None,
            )
        except ValidationError as exc:
            shape = invalid_request(exc)
            raise ThreadError(shape.code, shape.message, details=shape.details) from exc
        self._order.check(message, len(self._messages))
        self._append(message, tokens, estimated=estimated)
        return message

    def _append(self, message: ConversationMessage, tokens: int, *, estimated: bool = False) -> None:
        extends = message.role is Role.TOOL and message.tool_call_id in self._order.pending
        self._order.accept(message)
        if estimated:
            self._estimated.add(len(self._messages))
        self._messages.append(message)
        self._units.add(message, tokens, extends=extends)

    def withdraw_images(self) -> int:
        """Stop sending the thread's images — the model refused them — keeping each as the name of
        its artifact (the model reads a note in its place). How many were withdrawn. Token counts
        keep the images' share: they only lean high, as counts here do."""
        withdrawn = 0
        for index, message in enumerate(self._messages):
            if not message.images or all(image.data is None for image in message.images):
                continue
            withdrawn += sum(1 for image in message.images if image.data is not None)
            self._messages[index] = message.model_copy(
                update={"images": [image.stored() for image in message.images]}
            )
        return withdrawn

    # ------------------------------------------------------------------ budget and context

    def precheck(self, estimate: int) -> None:
        """Raise ``LLM_BUDGET_EXCEEDED`` unless a call estimated at ``estimate`` tokens may start."""
        self.budget.precheck(estimate)

    def record_usage(self, input_tokens: int, output_tokens: int) -> None:
        """Add one call's actual usage, as the gateway reported it."""
        self.budget.record_usage(input_tokens, output_tokens)

    def select_context(
        self,
        max_input_tokens: int,
        *,
        system_tokens: int,
        tools_tokens: int,
        recency_window: int = DEFAULT_RECENCY_WINDOW,
        view: Sequence[ConversationMessage] | None = None,
    ) -> ContextSelection:
        """The messages to send so that the request fits ``max_input_tokens`` (seed 000 §5.4; the rules
        are in :mod:`agent_runtime.agent_host.thread.context`). Raises ``ContextWindowExceeded``.

        ``view`` replaces the thread with a compacted view of it (a summary followed by the messages
        after the ones it covers: :mod:`.compaction`); it starts at a unit's first message."""
        if self._settle_counts(max_input_tokens, system_tokens + tools_tokens, view) and view is not None:
            counted = {message.message_id: message for message in self._messages}
            view = [counted.get(message.message_id, message) for message in view]
        messages: Sequence[ConversationMessage] = self._messages
        units = self._units
        if view is not None:
            messages, units = view, Units()
            for message in view:
                tokens = message.token_count
                if tokens is None:
                    tokens = count_message(
                        self.count_tokens, message.content, images=len(message.images or ())
                    )
                units.add(message, tokens, extends=message.role is Role.TOOL)
        return select(
            messages,
            units,
            max_input_tokens=max_input_tokens,
            system_tokens=system_tokens,
            tools_tokens=tools_tokens,
            recency_window=recency_window,
            make_marker=self._marker,
        )

    def _settle_counts(
        self, max_input_tokens: int, fixed_tokens: int, view: Sequence[ConversationMessage] | None
    ) -> bool:
        """Make the counts exact (loading the tokenizer) once estimates could change a decision: when
        :data:`ESTIMATE_BOUND` times the estimated request reaches the window or the budget left.
        Half way there the tokenizer starts loading in the background. True if counted afresh now."""
        if not self._estimated and not self._estimating():
            return False
        history = self._units.total if view is None else sum(m.token_count or 0 for m in view)
        limit = min(max_input_tokens, self.budget.remaining)
        tokenizer = self._tokenizer
        reach = (history + fixed_tokens) * ESTIMATE_BOUND
        if reach < limit and not getattr(tokenizer, "settled", True):
            start_loading = getattr(tokenizer, "start_loading", None)
            if reach * 2 >= limit and start_loading is not None:
                start_loading()
            return False
        self._count_exactly()
        return True

    def _count_exactly(self) -> None:
        load = getattr(self._tokenizer, "load", None)
        try:
            if load is not None:
                load()
        except TokenizerUnavailable as exc:
            # Every count is an estimate from now on, as when counting fails.
            if self._tokenizer_failure is None:
                self._tokenizer_failure = exc
            self._estimated.clear()
            return
        for index in sorted(self._estimated):
            message = self._messages[index]
            tokens = count_message(
                self.count_tokens,
                message.content,
                tool_calls=message.tool_calls,
                tool_name=message.tool_name,
                images=len(message.images or ()),
            )
            self._messages[index] = message.model_copy(update={"token_count": tokens})
        self._estimated.clear()
        self._marker_tokens.clear()
        units = Units()
        for message in self._messages:
            # A tool result always answers the open call before it (the order rules): it extends
            # that call's unit, as when it was appended.
            units.add(message, message.token_count or 0, extends=message.role is Role.TOOL)
        self._units = units
        if self.on_exact_counts is not None:
            self.on_exact_counts()

    def _marker(self, removed: int, last_removed: ConversationMessage) -> tuple[ConversationMessage, int]:
        text = truncation_marker_text(removed)
        tokens = self._marker_tokens.get(removed)
        if tokens is None:
            tokens = self._marker_tokens[removed] = count_message(self.count_tokens, text)
        marker = ConversationMessage(
            message_id=f"{last_removed.message_id}.truncated",
            session_id=self.session_id,
            role=Role.SYSTEM,
            content=text,
            token_count=tokens,
            timestamp=last_removed.timestamp,
        )
        return marker, tokens

    # ------------------------------------------------------------------ serialisation (§5.5)

    def to_checkpoint_thread(self) -> list[ConversationMessage]:
        """The ``thread`` list of the Local State Store's checkpoint (seed 000 §9.2)."""
        return list(self._messages)

    def to_session_history(
        self, *, workspace_id: str, snapshot_after_task_id: str, snapshot_at: datetime | None = None
    ) -> SessionHistory:
        """The ``session_history`` artifact uploaded after each task (seed 004)."""
        try:
            return SessionHistory(
                workspace_id=workspace_id,
                session_id=self.session_id,
                snapshot_after_task_id=snapshot_after_task_id,
                snapshot_at=snapshot_at or self._clock(),
                # Images are stored as their own artifacts (uploads/attachments.py): named, not inline.
                messages=[
                    message.model_copy(update={"images": [image.stored() for image in message.images]})
                    if message.images
                    else message
                    for message in self._messages
                ],
            )
        except ValidationError as exc:
            shape = invalid_request(exc)
            raise ThreadError(shape.code, shape.message, details=shape.details) from exc

    @classmethod
    def restore(
        cls,
        messages: Sequence[ConversationMessage],
        *,
        session_id: str,
        tokenizer: Tokenizer,
        budget: TokenBudget,
        clock: Clock = utc_now,
        id_factory: IdFactory = new_message_id,
        messages_session_id: str | frozenset[str] | None = None,
        counted_with: str | None = None,
    ) -> ConversationThread:
        """A thread holding ``messages``, checked message by message; nothing is half-restored.

        ``counted_with``: the encoding the saved ``tokenCount``s were counted with (a session runtime
        snapshot says so). When it is this tokenizer's, they are taken as they are — counting a
        1,000-message thread again costs more than the rest of a resume — else counted afresh.

        Every message must belong to ``messages_session_id`` (default: ``session_id``; a set admits
        any of its sessions). Token counts
        are computed afresh rather than trusted from the file. Tool calls left open by the last
        message stay open (:attr:`pending_tool_calls`); answer them, e.g. with
        :meth:`fail_pending_tool_calls`, before the conversation goes on.
        """
        thread = cls(session_id, tokenizer, clock, id_factory, budget=budget)
        owner = messages_session_id or session_id
        owners = {owner} if isinstance(owner, str) else owner
        trusted = counted_with is not None and counted_with == getattr(tokenizer, "encoding", None)
        for index, message in enumerate(messages):
            if message.session_id not in owners:
                raise ThreadOrderError(
                    f"Message {message.message_id} belongs to session {message.session_id},"
                    f" not {' or '.join(sorted(owners))}.",
                    index=index,
                    messageId=message.message_id,
                )
            thread._order.check(message, index)
            if trusted and message.token_count is not None:
                thread._append(message, message.token_count)
                continue
            estimated = thread._estimating()
            tokens = count_message(
                thread.count_tokens,
                message.content,
                tool_calls=message.tool_calls,
                tool_name=message.tool_name,
                images=len(message.images or ()),
            )
            thread._append(message.model_copy(update={"token_count": tokens}), tokens, estimated=estimated)
        return thread

    @classmethod
    def from_checkpoint(
        cls,
        checkpoint: Checkpoint,
        *,
        tokenizer: Tokenizer,
        max_session_tokens: int,
        clock: Clock = utc_now,
        id_factory: IdFactory = new_message_id,
    ) -> ConversationThread:
        """Crash recovery (seed 004 scenario A): the thread and the tokens used, from the checkpoint;
        the budget's limit from the (refreshed) policy bundle. A session that continues an earlier
        conversation (seed 004 scenario B) holds that conversation's messages under their own
        ``sessionId``: those sessions are admitted too."""
        return cls.restore(
            checkpoint.thread,
            session_id=checkpoint.session_id,
            tokenizer=tokenizer,
            budget=TokenBudget(max_session_tokens, used=checkpoint.session_tokens_used),
            clock=clock,
            id_factory=id_factory,
            messages_session_id=frozenset(
                {checkpoint.session_id, *(m.session_id for m in checkpoint.thread)}
            ),
        )

    @classmethod
    def from_session_history(
        cls,
        history: SessionHistory,
        *,
        session_id: str,
        tokenizer: Tokenizer,
        budget: TokenBudget,
        clock: Clock = utc_now,
        id_factory: IdFactory = new_message_id,
    ) -> ConversationThread:
        """Continuing a past conversation in a new session (seed 004 scenario B).

        The earlier messages keep their own ``sessionId``, ``taskId`` and ``stepId``: they record
        where each message was produced. New messages carry ``session_id``. A history may itself hold
        a conversation continued before — the messages of earlier sessions first, each session's
        together — but it ends with its own session's messages and holds none of ``session_id``.
        """
        runs: list[str] = []
        for index, message in enumerate(history.messages):
            if runs and runs[-1] == message.session_id:
                continue
            if message.session_id in runs or message.session_id == session_id:
                raise ThreadOrderError(
                    f"Message {message.message_id} of session {message.session_id} is out of place in"
                    f" the history of session {history.session_id}.",
                    index=index,
                    messageId=message.message_id,
                )
            runs.append(message.session_id)
        if runs and runs[-1] != history.session_id:
            index = len(history.messages) - 1
            raise ThreadOrderError(
                f"The history of session {history.session_id} ends with a message of session {runs[-1]}.",
                index=index,
                messageId=history.messages[index].message_id,
            )
        return cls.restore(
            history.messages,
            session_id=session_id,
            tokenizer=tokenizer,
            budget=budget,
            clock=clock,
            id_factory=id_factory,
            messages_session_id=frozenset(runs) or history.session_id,
        )
