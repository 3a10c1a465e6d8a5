"""One conversation as the window shows it, built from the runtime's ``SessionEvent`` notifications
(seed 000 §12) or from a stored ``session_history`` (seed 004). Qt-free.

* Items (:mod:`desktop.conversation.items`) in order. A ``text_chunk`` appends to the step's
  assistant message in O(1); observers hear ``item_changed`` and decide when to draw (the view
  coalesces to one redraw per frame). A repeated ``llm_request_started`` in the same step means the
  runtime discarded the partial answer and asked again (seed 000 §6.4): the step's text is dropped.
* The two-level state of seed 000 §3.3 — the session's and the task's — with plain words for both,
  the step counter and its 80 % warning, and token use against the session's budget.
* One banner (:mod:`desktop.conversation.banners`) for what went wrong and what to do about it.
* MCP servers (seed 003 §9): their state for Settings (:attr:`ConversationState.mcp_servers`), a
  notice when one becomes unavailable or a configuration is not used, a running tool's progress and
  its server's question on the tool's row, and the sign-in notice (:meth:`add_sign_in`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from desktop.conversation.attachments import ShownImage
from desktop.conversation.banners import (
    Banner,
    BannerAction,
    pause_banner,
    policy_restored_banner,
    policy_updated_text,
    stopped_banner,
    task_failed_banner,
)
from desktop.conversation.checklist import ChecklistState
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
from desktop.conversation.journal import CancelledReply
from desktop.conversation.pricing import Usage
from desktop.conversation.status_text import ACTIVE_TASK_STATES, state_text
from desktop.i18n import translate
from desktop.mcp.notices import (
    available_again_text,
    config_warning_text,
    progress_text,
    unavailable_text,
)
from desktop.mcp.servers import McpServers

__all__ = [
    "ACTIVE_TASK_STATES",
    "ConversationState",
    "StateObserver",
    "Status",
    "describe_session",
    "describe_task",
]

logger = logging.getLogger(__name__)

_SESSION_WORDS = {
    "SESSION_CREATED": "starting",
    "SESSION_RUNNING": "running",
    "SESSION_PAUSED": "paused",
    "SESSION_COMPLETED": "ended",
    "SESSION_FAILED": "failed",
    "SESSION_CANCELLED": "ended",
}
_TASK_WORDS = {
    "IDLE": "ready for your message",
    "TASK_RUNNING": "working",
    "WAITING_FOR_LLM": "waiting for the model",
    "PROCESSING_RESPONSE": "reading the model's answer",
    "CHECKING_POLICY": "checking the policy",
    "WAITING_FOR_APPROVAL": "waiting for your approval",
    "EXECUTING_TOOLS": "running tools",
    "TASK_COMPLETED": "completed",
    "TASK_FAILED": "failed",
    "TASK_CANCELLED": "cancelled",
}
_CHANGING_TOOLS = frozenset({"WriteFile", "EditFile", "DeleteFile"})
_TARGET_ARGUMENTS = ("path", "command", "url")


def describe_session(status: str | None) -> str:
    return _SESSION_WORDS.get(status or "", "not started")


def describe_task(status: str | None) -> str:
    return _TASK_WORDS.get(status or "", "no task yet")


@dataclass(frozen=True)
class Status:
    """What the status strip shows."""

    session: str | None
    task: str | None
    step_count: int
    max_steps: int | None
    near_step_limit: bool
    tokens_used: int | None
    token_limit: int | None

    @property
    def busy(self) -> bool:
        """A task is running: Send waits, Stop works."""
        return self.session == "SESSION_RUNNING" and self.task in ACTIVE_TASK_STATES

    @property
    def summary(self) -> str:
        return state_text(self.session, self.task)


class StateObserver(Protocol):
    def item_added(self, item: Item) -> None: ...

    def item_changed(self, item: Item) -> None: ...

    def items_reset(self) -> None:
        """Every item was replaced (a history was loaded): draw them all again."""

    def status_changed(self) -> None: ...

    def banner_changed(self) -> None: ...


class ConversationState:
    def __init__(self) -> None:
        self.items: list[Item] = []
        self.session_status: str | None = None
        self.task_status: str | None = None
        self.task_id: str | None = None
        self.step_count = 0
        self.max_steps: int | None = None
        self.near_step_limit = False
        self.tokens_used: int | None = None
        self.token_limit: int | None = None
        self.banner: Banner | None = None
        self.instruction_files: list[dict[str, Any]] = []
        """The project instruction files (``AGENTS.md``…) the session's prompt includes, as
        ``session_started`` listed them."""
        self.gateway_endpoint: str | None = None
        """The LLM gateway the conversation's runtime calls: banners about the gateway name it."""
        self.gateway_model: str | None = None
        """The model the runtime was started with (``LLM_GATEWAY_MODEL``), for the header."""
        self.model_used: str | None = None
        """The model the last call went to, as the runtime reported it (the policy may choose another)."""
        self.usage = Usage()
        """Tokens per model since the conversation was opened in this window, for the cost estimate."""
        self.events_seen = 0
        """Events applied so far: a call's answer older than the last event must not undo it."""
        self.checklist = ChecklistState()
        """The session checklist the agent keeps (seed 002), drawn read-only beside the conversation."""
        self.mcp_servers = McpServers()
        """The session's MCP servers and their state, as Settings lists them."""
        self._asking: dict[str, ToolCallRow] = {}
        """The tool rows whose MCP server waits for the user's answer, by elicitation ID."""
        self._next_key = 0
        self._observers: list[StateObserver] = []
        self._assistant: AssistantMessage | None = None
        self._tools_by_call: dict[str, ToolCallRow] = {}
        self._changed_paths: set[str] = set()
        self._handlers: Mapping[str, Callable[[Mapping[str, Any], dict[str, Any]], None]] = {
            "text_chunk": self._on_text_chunk,
            "llm_request_started": self._on_llm_started,
            "llm_request_completed": self._on_llm_completed,
            "task_started": self._on_task_started,
            "task_completed": self._on_task_ended,
            "task_failed": self._on_task_ended,
            "task_cancelled": self._on_task_ended,
            "step_started": self._on_step,
            "step_completed": self._on_step,
            "step_limit_approaching": self._on_step_limit,
            "tool_requested": self._on_tool_requested,
            "tool_completed": self._on_tool_completed,
            "approval_requested": self._on_approval_requested,
            "approval_resolved": self._on_approval_resolved,
            "approval_timeout": self._on_approval_timeout,
            "session_started": self._on_session_started,
            "session_resumed": self._on_session_running,
            "session_paused": self._on_session_paused,
            "session_completed": self._on_session_ended,
            "session_cancelled": self._on_session_ended,
            "session_failed": self._on_session_ended,
            "policy_expired": self._on_policy_expired,
            "policy_updated": self._on_policy_updated,
            "policy_revoked": self._on_policy_revoked,
            "session_stop_requested": self._on_stop_requested,
            "checkpoint_recovery_failed": self._on_recovery_failed,
            "artifact_upload_failed": self._on_upload_failed,
            "upload_skipped": self._on_upload_skipped,
            "redaction_applied": self._on_redaction,
            "context_compacted": self._on_compacted,
            "task_list_created": self._on_checklist,
            "task_list_updated": self._on_checklist,
            "task_list_verification_nudged": self._on_checklist,
            "mcp_server_state_changed": self._on_mcp_server_state,
            "mcp_progress": self._on_mcp_progress,
            "mcp_config_warning": self._on_mcp_config_warning,
            "elicitation_requested": self._on_elicitation_requested,
            "elicitation_resolved": self._on_elicitation_resolved,
        }

    # ------------------------------------------------------------------ observing

    def subscribe(self, observer: StateObserver) -> None:
        if observer not in self._observers:
            self._observers.append(observer)

    def unsubscribe(self, observer: StateObserver) -> None:
        if observer in self._observers:
            self._observers.remove(observer)

    @property
    def status(self) -> Status:
        return Status(
            session=self.session_status,
            task=self.task_status,
            step_count=self.step_count,
            max_steps=self.max_steps,
            near_step_limit=self.near_step_limit,
            tokens_used=self.tokens_used,
            token_limit=self.token_limit,
        )

    @property
    def busy(self) -> bool:
        return self.status.busy

    def _added(self, item: Item) -> None:
        self.items.append(item)
        for observer in self._observers:
            observer.item_added(item)

    def _changed(self, item: Item) -> None:
        for observer in self._observers:
            observer.item_changed(item)

    def _status_changed(self) -> None:
        for observer in self._observers:
            observer.status_changed()

    def _key(self) -> int:
        self._next_key += 1
        return self._next_key

    # ------------------------------------------------------------------ the desktop's own changes

    def add_user_message(
        self, text: str, task_id: str | None, *, images: Sequence[ShownImage] = ()
    ) -> UserMessage:
        message = UserMessage(self._key(), text, task_id, list(images))
        self._added(message)
        return message

    def missing_images(self) -> set[str]:
        """The artifact names of the shown images whose bytes are not here (a loaded history)."""
        return {
            image.artifact_name
            for item in self.items
            if isinstance(item, UserMessage)
            for image in item.images
            if image.data is None and image.artifact_name is not None
        }

    def fill_images(self, found: Mapping[str, bytes]) -> None:
        """Give the shown images their bytes, by artifact name, and redraw the messages holding them."""
        for item in self._fill(found):
            self._changed(item)

    def _fill(self, found: Mapping[str, bytes]) -> list[UserMessage]:
        filled: list[UserMessage] = []
        for item in self.items:
            if not isinstance(item, UserMessage) or not any(i.artifact_name in found for i in item.images):
                continue
            item.images = [
                replace(image, data=found[image.artifact_name])
                if image.data is None and image.artifact_name is not None and image.artifact_name in found
                else image
                for image in item.images
            ]
            filled.append(item)
        return filled

    def add_notice(self, text: str, tone: Tone = Tone.INFO, action: str | None = None) -> Notice:
        notice = Notice(self._key(), text, tone, action)
        self._added(notice)
        return notice

    def add_sign_in(self, server_name: str, url: str, *, opened: bool, problem: str = "") -> SignInNotice:
        """An MCP server needs the user to sign in at ``url``; ``opened``: the browser shows it."""
        notice = SignInNotice(self._key(), server_name, url, opened, problem)
        self._added(notice)
        return notice

    def set_banner(self, banner: Banner | None) -> None:
        if banner == self.banner:
            return
        self.banner = banner
        for observer in self._observers:
            observer.banner_changed()

    def set_session(
        self,
        session_status: str | None,
        task: Mapping[str, Any] | None = None,
        *,
        tokens_used: int | None = None,
        token_limit: int | None = None,
        asked_after: int | None = None,
    ) -> None:
        """What CreateSession, ResumeSession or GetSessionState said (both levels, seed 000 §3.3).

        ``asked_after``: :attr:`events_seen` when the call was made. An answer is read after the
        events the runtime sent behind it, so when events arrived meanwhile they are newer than the
        answer and the state they made stands."""
        if asked_after is not None and asked_after != self.events_seen:
            if token_limit is not None and self.token_limit is None:
                self.token_limit = token_limit
            self._status_changed()
            return
        if session_status is not None:
            self.session_status = session_status
        if task:
            self.task_id = str(task.get("taskId") or self.task_id or "") or None
            self.task_status = str(task.get("status") or self.task_status or "") or None
            self.step_count = _int(task.get("stepCount"), self.step_count)
            self.max_steps = _int(task.get("maxSteps"), self.max_steps or 0) or self.max_steps
        if tokens_used is not None:
            self.tokens_used = tokens_used
        if token_limit is not None:
            self.token_limit = token_limit
        if self.task_status not in ACTIVE_TASK_STATES:
            self._end_streaming()
        self._status_changed()

    def expect_task(self, task_id: str, max_steps: int | None) -> None:
        """StartTask was accepted: the task runs even before its ``task_started`` arrives."""
        self.task_id = task_id
        self.task_status = "TASK_RUNNING"
        self.step_count = 0
        self.max_steps = max_steps
        self.near_step_limit = False
        self._changed_paths.clear()
        self._status_changed()

    def load_history(
        self, messages: Iterable[Mapping[str, Any]], cancelled: Iterable[CancelledReply] = ()
    ) -> None:
        """Replace the items with a stored conversation (``session_history`` messages, wire dicts);
        ``cancelled``: answers a cancel cut off (the history has no trace of them), each drawn at the
        end of its task, marked cancelled."""
        messages = list(messages)  # read twice: the items, then the checklist
        # A history names its images; those this window already shows keep their bytes.
        known = {
            image.artifact_name: image.data
            for item in self.items
            if isinstance(item, UserMessage)
            for image in item.images
            if image.data is not None and image.artifact_name is not None
        }
        self.items = []
        self._assistant = None
        self._tools_by_call = {}
        for message in messages:
            role = message.get("role")
            content = str(message.get("content") or "")
            if role == "user":
                images = [
                    shown for wire in message.get("images") or () if (shown := ShownImage.from_history(wire))
                ]
                self.items.append(UserMessage(self._key(), content, message.get("taskId"), images))
            elif role == "assistant":
                if content.strip():
                    reply = AssistantMessage(self._key(), message.get("stepId"), message.get("taskId"))
                    reply.append(content)
                    self.items.append(reply)
                for call in message.get("toolCalls") or ():
                    row = ToolCallRow(
                        self._key(),
                        str(call.get("toolName") or "tool"),
                        tool_call_id=call.get("toolCallId"),
                        target=_target(call.get("arguments")),
                        state=ToolState.SUCCEEDED,
                        step_id=message.get("stepId"),
                    )
                    self.items.append(row)
                    if row.tool_call_id:
                        self._tools_by_call[row.tool_call_id] = row
            elif role == "tool":
                answered = self._tools_by_call.get(str(message.get("toolCallId")))
                if answered is not None:
                    answered.state = _tool_state(message.get("toolStatus"))
                    answered.output = content
                    if answered.state is ToolState.DENIED:
                        answered.denial, answered.output = _stored_denial(content)
            elif role == "system" and content.strip():
                self.items.append(Notice(self._key(), content, Tone.INFO))
        for kept in cancelled:
            self._insert_cancelled(kept)
        self._fill(known)
        self.checklist.load_history(messages)
        for observer in self._observers:
            observer.items_reset()

    def _insert_cancelled(self, reply: CancelledReply) -> None:
        """``reply`` after the last item of its task: before the prompt of the next one."""
        items = self.items
        asked = next(
            (
                i
                for i, item in enumerate(items)
                if isinstance(item, UserMessage) and item.task_id == reply.task_id
            ),
            None,
        )
        if asked is None:
            return  # the task is not in this history
        end = next((i for i in range(asked + 1, len(items)) if isinstance(items[i], UserMessage)), len(items))
        message = AssistantMessage(self._key(), reply.step_id, reply.task_id, cancelled=True)
        message.append(reply.text)
        items.insert(end, message)

    def cancelled_replies(self, session_id: str) -> list[CancelledReply]:
        """The answers of this conversation that a cancel cut off, to keep (see :meth:`load_history`)."""
        return [
            CancelledReply(session_id, item.task_id, item.step_id, item.text)
            for item in self.items
            if isinstance(item, AssistantMessage) and item.cancelled and item.task_id
        ]

    # ------------------------------------------------------------------ the runtime's events

    def apply(self, event: Mapping[str, Any]) -> None:
        """One ``SessionEvent`` (its params, as the wire carries them). Unknown types are ignored."""
        self.events_seen += 1
        handler = self._handlers.get(str(event.get("eventType")))
        if handler is None:
            return
        payload = event.get("payload")
        handler(event, payload if isinstance(payload, dict) else {})

    def _on_text_chunk(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        text = payload.get("text")
        if not isinstance(text, str) or not text:
            return
        step_id = event.get("stepId")
        reply = self._assistant
        if reply is None or reply.step_id != step_id:
            reply = AssistantMessage(self._key(), step_id, event.get("taskId"), streaming=True)
            self._assistant = reply
            reply.append(text)
            self._added(reply)
            return
        reply.append(text)
        self._changed(reply)

    def _on_llm_started(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        reply = self._assistant
        if reply is not None and reply.step_id == event.get("stepId") and reply.streaming:
            # The runtime retries the call: what it streamed so far was discarded (seed 000 §6.4).
            reply.clear()
            self._changed(reply)
        self._set_task("WAITING_FOR_LLM")

    def _on_llm_completed(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self._end_streaming()
        self.usage.add_call(payload)
        self.model_used = str(payload.get("model") or "") or self.model_used
        used, limit = payload.get("sessionTokensUsed"), payload.get("maxSessionTokens")
        if isinstance(used, int):
            self.tokens_used = used
        else:
            spent = _int(payload.get("inputTokens"), 0) + _int(payload.get("outputTokens"), 0)
            self.tokens_used = (self.tokens_used or 0) + spent
        if isinstance(limit, int):
            self.token_limit = limit
        self._set_task("PROCESSING_RESPONSE")

    def _on_task_started(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        if self.task_id != event.get("taskId"):
            self._changed_paths.clear()
        self.task_id = event.get("taskId") or self.task_id
        self.max_steps = _int(payload.get("maxSteps"), self.max_steps or 0) or self.max_steps
        self.step_count = 0
        self.near_step_limit = False
        self._set_task("TASK_RUNNING")

    def _on_task_ended(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        kind = event.get("eventType")
        reply = self._assistant
        if kind == "task_cancelled" and reply is not None and reply.streaming and reply.text.strip():
            # The runtime drops an answer cut off by a cancel; what the user saw of it stays, marked.
            reply.cancelled = True
        self._end_streaming()
        for row in self._tools_by_call.values():
            if not row.finished and row.state is ToolState.AWAITING_APPROVAL:
                row.state = ToolState.DENIED
                row.denial = Denial.CANCELLED if kind == "task_cancelled" else row.denial
                self._changed(row)
        self.step_count = _int(payload.get("stepCount"), self.step_count)
        reason = payload.get("reason")
        error = payload.get("error") if isinstance(payload.get("error"), dict) else {}
        if kind == "task_completed":
            self.task_status = "TASK_COMPLETED"
        elif kind == "task_cancelled":
            self.task_status = "TASK_CANCELLED"
            self.add_notice(translate("Conversation", "Task cancelled."))
        else:
            self.task_status = "TASK_FAILED"
            self.set_banner(
                task_failed_banner(
                    reason if isinstance(reason, str) else None,
                    error.get("message") if isinstance(error, dict) else None,
                    step_count=self.step_count,
                    max_steps=self.max_steps,
                    error=error if isinstance(error, dict) else None,
                    endpoint=self.gateway_endpoint,
                )
            )
        if self._changed_paths:
            count = len(self._changed_paths)
            self.add_notice(
                translate("Conversation", "1 file changed — review the changes.")
                if count == 1
                else translate("Conversation", "{count} files changed — review the changes.").format(
                    count=count
                ),
                action="review_changes",
            )
            self._changed_paths.clear()
        self._status_changed()

    def _on_step(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        count = payload.get("stepCount")
        if isinstance(count, int):
            self.step_count = count
        if self.max_steps and self.step_count >= int(self.max_steps * 0.8):
            self.near_step_limit = True
        self._set_task("TASK_RUNNING")

    def _on_step_limit(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self.step_count = _int(payload.get("stepCount"), self.step_count)
        self.max_steps = _int(payload.get("maxSteps"), self.max_steps or 0) or self.max_steps
        self.near_step_limit = True
        self._status_changed()

    def _on_tool_requested(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self._end_streaming()
        row = ToolCallRow(
            self._key(),
            str(payload.get("toolName") or "tool"),
            tool_call_id=payload.get("toolCallId"),
            target=payload.get("target"),
            step_id=event.get("stepId"),
        )
        if row.tool_call_id:
            self._tools_by_call[row.tool_call_id] = row
        self._added(row)
        self._set_task("CHECKING_POLICY")

    def _on_tool_completed(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        row = self._tools_by_call.get(str(payload.get("toolCallId"))) or self._open_row(
            str(payload.get("toolName")), event.get("stepId")
        )
        if row is None:
            # A call requested before this window saw the session (resumed after a crash): its end
            # still deserves a row.
            row = ToolCallRow(
                self._key(),
                str(payload.get("toolName") or "tool"),
                tool_call_id=payload.get("toolCallId"),
                step_id=event.get("stepId"),
            )
            if row.tool_call_id:
                self._tools_by_call[row.tool_call_id] = row
            self._added(row)
        row.state = _tool_state(payload.get("status"))
        # The runtime's latency runs from the request, approval wait included (seed 000 §8.5).
        row.duration_ms = max(0, _int(payload.get("latencyMs"), 0) - (row.approval_wait_ms or 0))
        error = payload.get("error")
        if row.state is ToolState.DENIED and row.denial is None:
            code = error.get("code") if isinstance(error, dict) else None
            row.denial = Denial.USER if code == "APPROVAL_DENIED" else Denial.POLICY
        if isinstance(error, dict) and error.get("message"):
            row.output = str(error["message"])
        else:
            preview = payload.get("outputPreview")
            row.output = str(preview) if preview else None
        if row.state is ToolState.SUCCEEDED and row.tool_name in _CHANGING_TOOLS and row.target:
            self._changed_paths.add(row.target)
        self._changed(row)
        if self.task_status == "CHECKING_POLICY":
            self._set_task("EXECUTING_TOOLS")

    def _on_approval_requested(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        details = payload.get("details") if isinstance(payload.get("details"), dict) else {}
        tool = str((details or {}).get("toolName") or "")
        row = self._tools_by_call.get(str((details or {}).get("toolCallId") or "")) or self._open_row(
            tool, event.get("stepId") or payload.get("stepId"), unasked=True
        )
        if row is not None:
            row.state = ToolState.AWAITING_APPROVAL
            row.approval_id = payload.get("approvalId")
            self._changed(row)
        self._set_task("WAITING_FOR_APPROVAL")

    def _on_approval_resolved(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        waited = _int(payload.get("latencyMs"), 0)
        self._approval_settled(
            payload.get("approvalId"), payload.get("decision") == "approved", Denial.USER, waited or None
        )

    def _on_approval_timeout(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self._approval_settled(payload.get("approvalId"), False, Denial.TIMEOUT)
        for row in self._tools_by_call.values():
            if row.approval_id == payload.get("approvalId") and row.denial is not None:
                row.denial = Denial.TIMEOUT  # whichever of the two events came first
                self._changed(row)
        self.add_notice(
            translate("Conversation", "An approval request timed out and was denied."), Tone.WARNING
        )

    def _approval_settled(
        self, approval_id: object, approved: bool, denial: Denial, waited_ms: int | None = None
    ) -> None:
        for row in self._tools_by_call.values():
            if row.approval_id == approval_id and row.state is ToolState.AWAITING_APPROVAL:
                row.state = ToolState.RUNNING if approved else ToolState.DENIED
                row.approval_wait_ms = waited_ms
                if not approved:
                    row.denial = denial
                self._changed(row)
        waiting = any(row.state is ToolState.AWAITING_APPROVAL for row in self._tools_by_call.values())
        if not waiting and self.task_status == "WAITING_FOR_APPROVAL":
            self._set_task("EXECUTING_TOOLS")

    def _on_session_started(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self._on_session_running(event, payload)
        files = payload.get("instructionFiles")
        loaded = (
            [f for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)]
            if isinstance(files, list)
            else []
        )
        self.instruction_files = loaded
        if loaded:
            cut = translate("Conversation", " (cut to fit)")
            names = ", ".join(f["path"] + (cut if f.get("truncated") else "") for f in loaded)
            self.add_notice(
                translate("Conversation", "Project instructions loaded: {files}").format(files=names)
            )

    def _on_session_running(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self.session_status = "SESSION_RUNNING"
        if self.banner is not None and self.banner.action is BannerAction.RESUME:
            self.set_banner(None)
        self._status_changed()

    def _on_session_paused(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self._end_streaming()
        self.session_status = "SESSION_PAUSED"
        error = payload.get("error") if isinstance(payload.get("error"), dict) else {}
        reason = payload.get("reason")
        self.set_banner(
            pause_banner(
                reason if isinstance(reason, str) else None,
                (error or {}).get("message"),
                error=error or None,
                endpoint=self.gateway_endpoint,
            )
        )
        self._status_changed()

    def _on_session_ended(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self._end_streaming()
        self.session_status = {
            "session_completed": "SESSION_COMPLETED",
            "session_cancelled": "SESSION_CANCELLED",
            "session_failed": "SESSION_FAILED",
        }[str(event.get("eventType"))]
        if self.session_status == "SESSION_FAILED":
            # The runtime ended the session itself (seed 000 §3.3 → FAILED) and exits: nothing is left
            # to resume, but the history was uploaded, so the conversation can go on in a new session.
            error = payload.get("error")
            message = error.get("message") if isinstance(error, dict) else None
            said = " ".join(
                str(message or payload.get("reason") or translate("Banners", "no reason given")).split()
            )
            self.set_banner(
                Banner(
                    translate(
                        "Conversation",
                        "The session ended with an error: {reason}. Continue in a new session: its history"
                        " comes along.",
                    ).format(reason=said.rstrip(".")[:400]),
                    action=BannerAction.NEW_SESSION,
                )
            )
        self._status_changed()

    def _on_policy_expired(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self.add_notice(translate("Conversation", "The session's policy expired."), Tone.WARNING)

    def _on_policy_updated(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self.add_notice(policy_updated_text(payload))
        if self.session_status == "SESSION_PAUSED" and self.banner is not None and self.banner.revoked:
            self.set_banner(policy_restored_banner())

    def _on_policy_revoked(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        reason = payload.get("reason")
        self.add_notice(
            translate(
                "Conversation",
                "The organisation revoked the policy of this session ({reason}). It pauses once what is"
                " running now has finished.",
            ).format(reason=_said(reason)),
            Tone.WARNING,
        )

    def _on_stop_requested(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self._end_streaming()
        reason = payload.get("reason")
        self.set_banner(stopped_banner(reason if isinstance(reason, str) else None))

    def _on_recovery_failed(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self.add_notice(
            translate(
                "Conversation",
                "The saved state of this conversation could not be read, so it starts fresh; its history"
                " up to the last completed task is kept.",
            ),
            Tone.WARNING,
        )

    def _on_upload_failed(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self.add_notice(
            translate(
                "Conversation",
                "Could not save {artifact} to the backend: {reason}. The conversation goes on.",
            ).format(
                artifact=payload.get("artifactName") or translate("Conversation", "an artifact"),
                reason=payload.get("reason") or translate("Banners", "no reason given"),
            ),
            Tone.WARNING,
        )

    def _on_upload_skipped(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self.add_notice(
            translate(
                "Conversation",
                "{artifact} was not saved to the backend: the policy does not allow it ({reason}). The"
                " conversation goes on.",
            ).format(
                artifact=payload.get("artifactName") or translate("Conversation", "An artifact"),
                reason=payload.get("reason") or translate("Banners", "no reason given"),
            ),
            Tone.WARNING,
        )

    def _on_redaction(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        count = _int(payload.get("count"), 1)
        self.add_notice(
            translate("Conversation", "1 sensitive value was redacted from what was sent to the model.")
            if count == 1
            else translate(
                "Conversation", "{count} sensitive values were redacted from what was sent to the model."
            ).format(count=count)
        )

    def _on_compacted(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        count = _int(payload.get("messages"), 1)
        noun = (
            translate("Conversation", "1 earlier message")
            if count == 1
            else translate("Conversation", "{count} earlier messages").format(count=count)
        )
        if payload.get("mode") == "summarized":
            self.add_notice(
                translate(
                    "Conversation",
                    "The conversation outgrew the model's context window: {messages} were summarised; the"
                    " model now sees the summary in their place.",
                ).format(messages=noun)
            )
        else:
            why = str(payload.get("reason") or translate("Conversation", "summarising was not possible"))
            self.add_notice(
                translate(
                    "Conversation",
                    "The conversation outgrew the model's context window: {messages} are no longer sent to"
                    " the model ({reason}).",
                ).format(messages=noun, reason=why),
                Tone.WARNING,
            )

    def _on_checklist(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self.checklist.apply(str(event.get("eventType")), payload)

    def _on_mcp_server_state(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        before, after = self.mcp_servers.update(payload)
        if after is None:
            return
        if after.unavailable and (before is None or not before.unavailable):
            self.add_notice(unavailable_text(after.name, after.last_error), Tone.WARNING)
        elif before is not None and before.unavailable and after.state == "connected":
            self.add_notice(available_again_text(after.name))

    def _on_mcp_progress(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        row = self._mcp_row(payload)
        text = progress_text(payload)
        if row is None or not text or row.finished:
            return
        row.progress = text
        self._changed(row)
        self._tool_is_running()

    def _tool_is_running(self) -> None:
        # Progress and questions come from a call already past the policy check and any approval.
        if self.task_status == "CHECKING_POLICY":
            self._set_task("EXECUTING_TOOLS")

    def _on_mcp_config_warning(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        self.add_notice(config_warning_text(payload), Tone.WARNING)

    def _on_elicitation_requested(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        row = self._mcp_row(payload)
        elicitation_id = payload.get("elicitationId")
        if row is None or row.finished or not isinstance(elicitation_id, str):
            return
        self._asking[elicitation_id] = row
        row.progress = translate("Conversation", "{server} asks for your input").format(
            server=payload.get("serverName") or translate("Conversation", "the server")
        )
        self._changed(row)
        self._tool_is_running()

    def _on_elicitation_resolved(self, event: Mapping[str, Any], payload: dict[str, Any]) -> None:
        row = self._asking.pop(str(payload.get("elicitationId")), None)
        if row is not None and not row.finished:
            row.progress = None
            self._changed(row)

    def _mcp_row(self, payload: Mapping[str, Any]) -> ToolCallRow | None:
        """The row of the MCP tool call an event is about: by its call ID, else the newest running row
        of ``server/tool``."""
        call_id = payload.get("toolCallId")
        if isinstance(call_id, str) and call_id in self._tools_by_call:
            return self._tools_by_call[call_id]
        server, tool = payload.get("serverName"), payload.get("toolName")
        if not isinstance(server, str) or not isinstance(tool, str):
            return None
        names = {tool, f"{server}/{tool}"}
        for row in reversed(self._tools_by_call.values()):
            if not row.finished and row.tool_name in names:
                return row
        return None

    # ------------------------------------------------------------------ helpers

    def _set_task(self, status: str) -> None:
        if self.session_status is None:
            self.session_status = "SESSION_RUNNING"
        if status != self.task_status:
            self.task_status = status
            self._status_changed()

    def _end_streaming(self) -> None:
        reply = self._assistant
        if reply is not None and reply.streaming:
            reply.streaming = False
            self._changed(reply)
        self._assistant = None

    def _open_row(self, tool_name: str, step_id: object, *, unasked: bool = False) -> ToolCallRow | None:
        """The newest unfinished row of ``tool_name`` in the step (events that name no call ID)."""
        for row in reversed(self._tools_by_call.values()):
            if row.finished or row.step_id != step_id or (tool_name and row.tool_name != tool_name):
                continue
            if unasked and row.approval_id is not None:
                continue
            return row
        return None


def _stored_denial(content: str) -> tuple[Denial, str]:
    """Who refused a call, from the text the model read for it (``Denied: Not approved: …`` when the
    user said no, ``Denied: <the policy's reason>`` otherwise), and the reason alone."""
    reason = content.removeprefix("Denied: ")
    if reason.startswith("Not approved: "):
        return Denial.USER, reason.removeprefix("Not approved: ")
    return Denial.POLICY, reason


def _said(value: object) -> str:
    text = " ".join(str(value or "").split()).rstrip(".")
    return text[:300] or translate("Banners", "no reason given")


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _tool_state(value: object) -> ToolState:
    try:
        return ToolState(str(value))
    except ValueError:
        return ToolState.FAILED


def _target(arguments: object) -> str | None:
    if not isinstance(arguments, dict):
        return None
    for name in _TARGET_ARGUMENTS:
        value = arguments.get(name)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())[:300]
    return None
