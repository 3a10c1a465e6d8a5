"""One open conversation and its agent runtime: every JSON-RPC call the window makes for it, and
what happens when the runtime dies. Qt-free: the runtime arrives through a :class:`RuntimeLauncher`
(the window's is :mod:`desktop.supervision`, tests may bring their own).

* The runtime starts when the conversation is first needed (a new conversation at once, a past one
  when the user starts typing), and its ``SessionEvent`` notifications feed the
  :class:`ConversationState` and the approval queue.
* A new conversation is ``CreateSession`` with the project folder (``workspaceHint.localPaths``) or
  none (a general chat); a past one is ``CreateSession`` with the history of its newest session
  (seed 004 scenario B).
* An MCP server's request for input (``elicitation_requested``) goes to the window's queue and the
  user's answer back as ``AnswerElicitation``; a sign-in page (``mcp_authorization_required``) is
  opened in the browser; ``GetMcpServers`` fills the list Settings shows.
* The runtime dies → the user is told, a new runtime is started and ``ResumeSession`` continues
  from the checkpoint (seed 000 §9.5), at most :data:`RESTARTS` times in :data:`RESTART_WINDOW_S`
  before the user decides. ``close()`` is ``Shutdown`` (seed 000 §3.4).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from contracts.errors import ErrorCode
from contracts.images import ImageContent
from contracts.ipc.client_core import ConnectionClosed, RpcCallError
from contracts.jsonrpc import RpcErrorCode
from contracts.methods import MAX_EARLIER_SESSIONS
from desktop.conversation.attachments import ShownImage, prompt_problem
from desktop.conversation.banners import (
    Banner,
    BannerAction,
    runtime_lost_banner,
    runtime_not_recovered_banner,
)
from desktop.conversation.errors import ConversationError
from desktop.conversation.items import Tone
from desktop.conversation.journal import CancelledReply, OpenSession, SessionJournal
from desktop.conversation.state import ConversationState
from desktop.i18n import translate
from desktop.launch.runtime import SUPPORTED_CAPABILITIES
from desktop.mcp.authorization import sign_in_problem
from desktop.patch.model import RevertRequest, changes_from_history, reverted_summary

if TYPE_CHECKING:
    from desktop.updater.compatible import Incompatibility

__all__ = [
    "RESTARTS",
    "RESTART_WINDOW_S",
    "TASK_STOP_GRACE_S",
    "ApprovalSink",
    "ConversationSession",
    "ElicitationSink",
    "Identity",
    "Phase",
    "RestartBudget",
    "RuntimeConnection",
    "RuntimeLauncher",
    "TaskDefaults",
]

logger = logging.getLogger(__name__)

RESTARTS = 3
RESTART_WINDOW_S = 300.0
CREATE_TIMEOUT_S = 60.0
SHUTDOWN_TIMEOUT_S = 30.0
"""How long ``Shutdown`` may take when no task runs: history upload, the Session Service told."""
TASK_STOP_GRACE_S = 300.0 + SHUTDOWN_TIMEOUT_S
"""How long ``Shutdown`` may take while a task runs: the runtime lets the current step finish (seed 000
§3.4 step 2) because tools are never cut off (§4.5), and a shell command's own limit is 300 s (§7.4)."""


class RuntimeConnection(Protocol):
    """A running runtime process with its authenticated JSON-RPC connection."""

    @property
    def pid(self) -> int | None: ...

    @property
    def gateway(self) -> Mapping[str, str]:
        """The ``LLM_GATEWAY_*`` settings it was started with: a runtime reads them once."""

    async def call(self, method: str, params: Any = None, *, timeout: float = 30.0) -> Any: ...

    async def stop(self, *, shutdown: bool, shutdown_timeout: float = SHUTDOWN_TIMEOUT_S) -> bool:
        """``Shutdown`` first when asked (and connected), then end the process for sure; never raises.
        True when the runtime answered ``Shutdown`` (the session ended in order, its checkpoint gone)."""


class RuntimeLauncher(Protocol):
    async def launch(
        self,
        *,
        cwd: str | None,
        on_event: Callable[[dict[str, Any]], None],
        on_lost: Callable[[str], None],
    ) -> RuntimeConnection:
        """A connected runtime; ``on_lost(why)`` once if it goes away without being stopped."""

    async def gateway(self) -> Mapping[str, str]:
        """The ``LLM_GATEWAY_*`` settings a runtime started now would get (what Settings say now)."""


class ApprovalSink(Protocol):
    """Where approval requests go (the window's queue, :mod:`desktop.approval.queue`)."""

    def add(self, session_id: str, request: dict[str, Any], *, received_at: float) -> object: ...

    def discard(self, approval_id: str) -> None: ...

    def discard_session(self, session_id: str) -> None: ...


class ElicitationSink(Protocol):
    """Where MCP servers' requests for input go (the window's queue, :mod:`desktop.mcp.elicitations`)."""

    def add(
        self,
        session_id: str,
        request: dict[str, Any],
        *,
        received_at: float,
        refusal: str = "",
        entered: dict[str, Any] | None = None,
    ) -> object:
        """Queue ``request``; with ``refusal``, it is one whose answer (``entered``) was refused."""

    def discard(self, elicitation_id: str) -> None: ...

    def discard_session(self, session_id: str) -> None: ...


@dataclass(frozen=True)
class Identity:
    """Who the sessions are for and what this client is."""

    user_id: str
    tenant_id: str
    app_version: str
    runtime_version: Callable[[], str]
    """The version of the runtime a launch starts now: an update may change it between sessions, and
    the Session Service checks compatibility against it (``localAgentHostVersion``)."""
    os_family: str


@dataclass(frozen=True)
class TaskDefaults:
    approval_mode: str = "on_risky_actions"
    max_steps: int | None = None
    rules_for: Callable[[str], list[dict[str, Any]]] | None = None
    """The saved "Always allow" rules of a project folder, as StartTask sends them."""
    accepts_images: bool = True
    """Whether the model in Settings reads images (its preset says; unknown models are tried)."""


class Phase(StrEnum):
    IDLE = "idle"
    """No runtime yet (or the last one could not start): the next action starts one."""
    STARTING = "starting"
    READY = "ready"
    RECOVERING = "recovering"
    BROKEN = "broken"
    """The runtime kept dying: automatic restarts stopped until the user asks for one."""
    CLOSED = "closed"


@dataclass
class RestartBudget:
    """At most ``limit`` automatic restarts within ``window_s``: a runtime that dies at once every
    time is not restarted forever."""

    limit: int = RESTARTS
    window_s: float = RESTART_WINDOW_S
    _times: deque[float] = field(default_factory=deque)

    def allow(self, now: float) -> bool:
        while self._times and now - self._times[0] > self.window_s:
            self._times.popleft()
        if len(self._times) >= self.limit:
            return False
        self._times.append(now)
        return True

    def reset(self) -> None:
        self._times.clear()


HistoryFetcher = Callable[[str, str], Awaitable[dict[str, Any] | None]]
"""``(workspace_id, session_id)`` → the session's ``session_history`` wire dict, or ``None``."""


class ConversationSession:
    def __init__(
        self,
        *,
        state: ConversationState,
        launcher: RuntimeLauncher,
        identity: Identity,
        folder: str | None,
        approvals: ApprovalSink,
        defaults: Callable[[], TaskDefaults] = TaskDefaults,
        history: Mapping[str, Any] | None = None,
        fetch_history: HistoryFetcher | None = None,
        journal: SessionJournal | None = None,
        interrupted: OpenSession | None = None,
        clock: Callable[[], float] = time.monotonic,
        elicitations: ElicitationSink | None = None,
        open_url: Callable[[str], bool] | None = None,
    ) -> None:
        """``history``: a past conversation to continue in a new session; ``interrupted``: a session a
        crash left open, to resume from its checkpoint; ``journal`` keeps the open sessions on disk;
        ``elicitations`` receives MCP servers' requests for input; ``open_url`` opens an MCP server's
        sign-in page in the system browser (whether it could)."""
        self.state = state
        self.folder = folder
        self._launcher = launcher
        self._identity = identity
        self._approvals = approvals
        self._elicitations = elicitations
        self._asked: dict[str, tuple[dict[str, Any], float]] = {}
        """The requests for input still waiting, as they came (payload, arrival): one whose answer the
        runtime refuses goes back to the user."""
        self._open_url = open_url
        self._defaults = defaults
        self._history = dict(history) if history is not None else None
        self._fetch_history = fetch_history
        self._clock = clock
        self._connection: RuntimeConnection | None = None
        self._starting: asyncio.Future[None] | None = None
        self._budget = RestartBudget()
        self.phase = Phase.IDLE
        self._journal = journal
        self.session_id: str | None = interrupted.session_id if interrupted else None
        self.workspace_id: str | None = interrupted.workspace_id if interrupted else None
        self.earlier_sessions: set[str] = set()
        """Sessions this conversation was, before it continued in the current one."""
        self.feature_flags: dict[str, bool] = {}
        """The session's ``featureFlags`` as its runtime last reported them (contracts.observability)."""
        if history is not None:
            self.earlier_sessions |= {str(m.get("sessionId")) for m in history.get("messages") or ()}
            self._show_cancelled(history)
        self.on_lost: Callable[[ConversationSession, str], None] | None = None
        """Set by the owner: called when the runtime died and :meth:`recover` should run."""
        self.on_task_ended: Callable[[ConversationSession], None] | None = None
        """Called after a task ended (its history is then in the Workspace Service)."""
        self.event_observers: list[Callable[[ConversationSession, Mapping[str, Any]], None]] = []
        """Told of every ``SessionEvent`` after the conversation took it in (OS notifications)."""
        self._view_from_history = interrupted is not None
        """The view holds only the backend's history: the events of the interrupted task's earlier
        steps (its prompt, its replies, the call in flight) went to the window that crashed."""
        self._reloading: asyncio.Task[None] | None = None
        self._resumed_notice: str | None = None
        """What the next resume from the checkpoint tells the user, when it is not a crash's."""
        self.incompatibility: Incompatibility | None = None
        """The backend's verdict when it refused this client's versions at the last start (seed 001
        §11): the runtime range to download from, until a start succeeds."""
        self.model: str | None = None
        """The model the user chose for this conversation's next tasks (``taskOptions.model``);
        ``None``: the one Settings name (the runtime's ``LLM_GATEWAY_MODEL``)."""

    # ------------------------------------------------------------------ reading

    @property
    def chain(self) -> set[str]:
        """Every session this conversation has been: to find it again in a refreshed sidebar."""
        return self.earlier_sessions | ({self.session_id} if self.session_id else set())

    @property
    def runtime_pid(self) -> int | None:
        return self._connection.pid if self._connection is not None else None

    @property
    def connected(self) -> bool:
        return self._connection is not None and self.phase is Phase.READY

    # ------------------------------------------------------------------ starting

    async def ensure_started(self) -> None:
        """Start the runtime and the session unless they run; concurrent callers share one start."""
        if self.phase is Phase.READY:
            return
        if self.phase is Phase.CLOSED:
            raise ConnectionClosed("this conversation was closed")
        if self._starting is None or self._starting.done():
            self._starting = asyncio.ensure_future(self._start())
        await asyncio.shield(self._starting)

    async def _start(self) -> None:
        if self.session_id is not None:
            await self._recover()  # a session exists: it continues from its checkpoint
            return
        self.phase = Phase.STARTING
        try:
            connection = await self._launch()
            params: dict[str, Any] = {
                "userId": self._identity.user_id,
                "tenantId": self._identity.tenant_id,
                "clientInfo": {
                    "desktopAppVersion": self._identity.app_version,
                    "localAgentHostVersion": self._identity.runtime_version(),
                    "osFamily": self._identity.os_family,
                },
                "supportedCapabilities": list(SUPPORTED_CAPABILITIES),
            }
            if self.folder is not None:
                params["workspaceHint"] = {"localPaths": [self.folder]}
            if self._history is not None:
                params["history"] = self._history
            created = await self._first_call(connection, "CreateSession", params)
        except RpcCallError as exc:
            self.phase = Phase.IDLE
            refused = self._incompatible(exc)
            if refused is not None:
                raise refused from exc
            raise
        except BaseException:
            self.phase = Phase.IDLE
            raise
        self.incompatibility = None
        self.session_id = str(created["sessionId"])
        self.workspace_id = str(created["workspaceId"])
        self.feature_flags = _flags(created)
        if self._journal is not None:
            self._journal.add(self.session_id, self.workspace_id, self.folder)
        self.phase = Phase.READY
        self.state.set_session(str(created.get("sessionStatus") or "SESSION_RUNNING"))
        await self._sync_state()

    def _incompatible(self, exc: RpcCallError) -> ConversationError | None:
        """The Session Service's ``incompatible`` verdict (seed 000 §3.2 step 4), as something to do:
        download the runtime the backend accepts (seed 001 §11), or update Cowork itself."""
        details = exc.data.details if exc.data is not None else {}
        if details.get("compatibilityStatus") != "incompatible":
            return None
        from desktop.updater.compatible import incompatibility_from  # only when it happens

        found = incompatibility_from(details)
        if found is None:
            return None
        self.incompatibility = found
        return ConversationError(found.message, BannerAction.UPDATE_RUNTIME if found.fixable else None)

    async def _launch(self) -> RuntimeConnection:
        holder: list[RuntimeConnection] = []

        def lost(why: str) -> None:
            if holder and holder[0] is self._connection:
                self._lost(why)

        # A folder that is gone cannot be the runtime's working directory; CreateSession then says
        # plainly that it is missing.
        # (Asked on a thread: a folder on a network share can take its time to answer.)
        exists = bool(self.folder) and await asyncio.to_thread(os.path.isdir, self.folder or "")
        cwd = self.folder if exists else None
        self.state.mcp_servers.clear()  # a new runtime connects to its servers again and says so
        connection = await self._launcher.launch(cwd=cwd, on_event=self._on_event, on_lost=lost)
        holder.append(connection)
        self._connection = connection
        self.state.gateway_endpoint = connection.gateway.get("LLM_GATEWAY_ENDPOINT")
        self.state.gateway_model = connection.gateway.get("LLM_GATEWAY_MODEL")
        return connection

    def _drop(self, connection: RuntimeConnection) -> None:
        """Forget ``connection`` before stopping it, so its end is not taken for a crash."""
        if self._connection is connection:
            self._connection = None

    async def _sync_state(self) -> None:
        if self._connection is None or self.session_id is None:
            return
        with contextlib.suppress(RpcCallError, ConnectionClosed, TimeoutError):
            asked = self.state.events_seen
            state = await self._connection.call("GetSessionState", {"sessionId": self.session_id})
            self.state.set_session(
                state.get("sessionStatus"),
                state.get("task"),
                tokens_used=state.get("sessionTokensUsed"),
                token_limit=state.get("maxSessionTokens"),
                asked_after=asked,
            )

    # ------------------------------------------------------------------ events

    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("eventType")
        self.state.apply(event)
        for observer in list(self.event_observers):
            try:
                observer(self, event)
            except Exception:  # an observer's fault must not cost the conversation its events
                logger.exception("an observer of session %s failed", self.session_id)
        payload = event.get("payload")
        if not isinstance(payload, dict):
            return
        if kind == "approval_requested":
            session = str(event.get("sessionId") or self.session_id or "")
            self._approvals.add(session, payload, received_at=self._clock())
        elif kind in ("approval_resolved", "approval_timeout"):
            self._approvals.discard(str(payload.get("approvalId")))
        elif kind == "elicitation_requested" and self._elicitations is not None:
            session = str(event.get("sessionId") or self.session_id or "")
            arrived = self._clock()
            try:
                self._elicitations.add(session, payload, received_at=arrived)
            except ValueError as exc:  # no ID: nothing could answer it; the runtime's timeout ends it
                logger.warning("an elicitation request that cannot be answered: %s", exc)
            else:
                self._asked[str(payload["elicitationId"])] = (payload, arrived)
        elif kind == "elicitation_resolved" and self._elicitations is not None:
            self._asked.pop(str(payload.get("elicitationId")), None)
            self._elicitations.discard(str(payload.get("elicitationId")))
        elif kind == "mcp_authorization_required":
            self._sign_in(payload)
        elif kind in ("task_completed", "task_failed", "task_cancelled"):
            if kind == "task_cancelled" and self._journal is not None:
                for reply in self.state.cancelled_replies(str(event.get("sessionId") or self.session_id)):
                    if reply.task_id == event.get("taskId"):
                        self._journal.cancelled.add(reply)
            if self._view_from_history:
                self._reloading = asyncio.ensure_future(self._reload_view())
            if self.on_task_ended is not None:
                self.on_task_ended(self)

    def _sign_in(self, payload: dict[str, Any]) -> None:
        """Open the server's sign-in page in the browser and say so in the conversation, with the address
        to open again or copy — or why it was not opened."""
        server = str(payload.get("serverName") or translate("McpServers", "an MCP server"))
        url = str(payload.get("authorizationUrl") or "")
        problem = sign_in_problem(url)
        opened = False
        if not problem and self._open_url is not None:
            try:
                opened = bool(self._open_url(url))
            except Exception:  # the notice still shows the address to open by hand
                logger.exception("could not open the sign-in page of %s", server)
            if not opened:
                problem = translate(
                    "McpServers", "Cowork could not open your browser. Open the address below yourself."
                )
        elif not problem:
            problem = translate("McpServers", "Open the address below in your browser.")
        logger.info("sign-in for MCP server %s: browser %s", server, "opened" if opened else "not opened")
        self.state.add_sign_in(server, url, opened=opened, problem=problem)

    async def _reload_view(self) -> None:
        """The resumed task has ended and its history is uploaded (before its end event): draw the
        conversation from that history, the same source a restart of the app draws it from, so the
        interrupted turn shows whole instead of a result with no call or prompt above it."""
        if self._fetch_history is None or self.workspace_id is None or self.session_id is None:
            return
        shown, seen = len(self.state.items), self.state.events_seen
        try:
            history = await self._fetch_history(self.workspace_id, self.session_id)
        except Exception as exc:  # the live view stays; a restart shows the whole history
            logger.warning("could not reload the history of session %s: %s", self.session_id, exc)
            return
        if history is None or len(self.state.items) != shown or self.state.events_seen != seen:
            return  # nothing stored, or the conversation moved on meanwhile: its live view stays
        self._view_from_history = False
        self.state.load_history(history.get("messages") or [], self._cancelled_in(history))

    def _cancelled_in(self, history: Mapping[str, Any]) -> list[CancelledReply]:
        """The answers of ``history``'s tasks that a cancel cut off, as this desktop kept them."""
        if self._journal is None:
            return []
        tasks = {str(m["taskId"]) for m in history.get("messages") or () if m.get("taskId")}
        return self._journal.cancelled.for_tasks(tasks)

    def _show_cancelled(self, history: Mapping[str, Any]) -> None:
        """The conversation opened from ``history``: draw it again with its cancelled answers."""
        cancelled = self._cancelled_in(history)
        if cancelled:
            self.state.load_history(history.get("messages") or [], cancelled)

    # ------------------------------------------------------------------ the user's actions

    async def send(self, prompt: str, images: Sequence[ImageContent] = ()) -> str:
        """Start a task for ``prompt`` with the ``images`` attached to it; its id. The prompt shows in
        the conversation at once. A prompt too long for the runtime, or images for a model that does
        not take them, are refused before anything is sent."""
        text = prompt.strip()
        if not text:
            raise ValueError("an empty message")
        if self.state.busy:
            raise ConversationError("A task is still running; stop it or wait for it to end.")
        too_long = prompt_problem(text)
        if too_long is not None:
            raise ConversationError(too_long)
        if images and not self._defaults().accepts_images:
            raise ConversationError(
                translate(
                    "Attachments",
                    "The model chosen in Settings does not accept images. Remove the images, or choose"
                    " a model that reads them.",
                )
            )
        self.state.add_user_message(text, None, images=[ShownImage.of_content(image) for image in images])
        self.state.set_banner(None)
        await self.ensure_started()
        await self._renew_runtime()
        connection = self._require()
        defaults = self._defaults()
        options: dict[str, Any] = {"approvalMode": defaults.approval_mode}
        if defaults.max_steps is not None:
            options["maxSteps"] = defaults.max_steps
        if self.model:
            options["model"] = self.model
        if defaults.rules_for is not None and self.folder is not None:
            rules = defaults.rules_for(self.folder)
            if rules:
                options["permissionRules"] = rules
        task_id = f"task_{uuid.uuid4().hex[:16]}"
        await connection.call(
            "StartTask",
            {"sessionId": self.session_id, "taskId": task_id, "prompt": text, "taskOptions": options}
            | ({"images": [image.to_wire() for image in images]} if images else {}),
        )
        self.state.expect_task(task_id, defaults.max_steps or self.state.max_steps)
        return task_id

    async def cancel(self) -> bool:
        """``CancelTask`` for the running task; whether the runtime took the request."""
        if self._connection is None or self.session_id is None or self.state.task_id is None:
            return False
        result = await self._require().call(
            "CancelTask", {"sessionId": self.session_id, "taskId": self.state.task_id}
        )
        return bool(result.get("cancellationRequested"))

    async def resume(self) -> None:
        """A paused session goes on (seed 000 §3.3 PAUSED → RUNNING)."""
        if self._connection is None:
            await self.recover()
            return
        if await self._renew_runtime():
            return  # the new runtime's ResumeSession resumed it
        asked = self.state.events_seen
        result = await self._require().call("ResumeSession", {"sessionId": self.session_id}, timeout=60)
        self.feature_flags = _flags(result) or self.feature_flags
        self.state.set_session(result.get("sessionStatus"), result.get("task"), asked_after=asked)
        self.state.set_banner(None)

    async def on_old_settings(self) -> bool:
        """Whether the running runtime calls another gateway (endpoint, dialect, model, token) than
        the one Settings name now."""
        connection = self._connection
        if connection is None or self.phase is not Phase.READY:
            return False
        return dict(connection.gateway) != dict(await self._launcher.gateway())

    async def _renew_runtime(self) -> bool:
        """A runtime reads its gateway once, when it starts: when Settings changed since, a runtime
        started with the current ones continues the session from its checkpoint (``ResumeSession``).
        Never while a task runs (its step would be cut short). Whether it did."""
        connection = self._connection
        if connection is None or self.state.busy or not await self.on_old_settings():
            return False
        logger.info("session %s: restarting its runtime on the current gateway settings", self.session_id)
        self._drop(connection)
        self.phase = Phase.IDLE
        await connection.stop(shutdown=False)  # no Shutdown: the checkpoint must stay to resume from
        endpoint = (await self._launcher.gateway()).get("LLM_GATEWAY_ENDPOINT") or translate(
            "Conversation", "the gateway"
        )
        self._resumed_notice = translate(
            "Conversation", "The conversation now uses the current gateway settings ({endpoint})."
        ).format(endpoint=endpoint)
        try:
            await self.ensure_started()
        finally:
            self._resumed_notice = None
        return True

    async def approve(self, approval_id: str, decision: str, scope: str, reason: str) -> None:
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "approvalId": approval_id,
            "decision": decision,
            "scope": scope,
        }
        if reason:
            params["reason"] = reason
        await self._require().call("ApproveAction", params)

    async def answer_elicitation(
        self, elicitation_id: str, action: str, content: dict[str, Any] | None
    ) -> bool:
        """``AnswerElicitation``: the user's answer to an MCP server's request for input; whether the
        request was still waiting for it (the conversation says so when it was not)."""
        params: dict[str, Any] = {
            "sessionId": self.session_id,
            "elicitationId": elicitation_id,
            "action": action,
        }
        if action == "accept":
            params["content"] = dict(content or {})
        try:
            result = await self._require().call("AnswerElicitation", params)
        except RpcCallError as exc:
            asked = self._asked.get(elicitation_id)
            if exc.rpc_code != RpcErrorCode.INVALID_PARAMS or action != "accept" or asked is None:
                raise
            # The server's schema refused the content; the request still waits: back to the user, with
            # what they entered and why it was refused.
            why = exc.data.message if exc.data is not None else exc.rpc_message
            if self._elicitations is not None:
                self._elicitations.add(
                    str(self.session_id),
                    asked[0],
                    received_at=asked[1],
                    refusal=why.removeprefix("content ").strip(),
                    entered=content,
                )
            return False
        accepted = bool(result.get("accepted")) if isinstance(result, dict) else False
        self._asked.pop(elicitation_id, None)
        if not accepted:
            self.state.add_notice(
                translate(
                    "McpServers",
                    "Your answer did not reach the MCP server: its request was no longer waiting (it timed"
                    " out or its tool call ended).",
                ),
                Tone.WARNING,
            )
        return accepted

    async def refresh_mcp_servers(self) -> None:
        """``GetMcpServers`` into :attr:`ConversationState.mcp_servers`. A failure is kept there for
        Settings to show; it is not raised."""
        servers = self.state.mcp_servers
        if self._connection is None or self.phase is not Phase.READY or self.session_id is None:
            servers.failed(
                translate(
                    "McpServers",
                    "The conversation's agent runtime is not running; its MCP servers are listed once it"
                    " starts (send a message).",
                )
            )
            return
        servers.start_refresh()
        try:
            result = await self._connection.call("GetMcpServers", {"sessionId": self.session_id})
        except RpcCallError as exc:
            if exc.rpc_code == RpcErrorCode.METHOD_NOT_FOUND:  # a runtime from before MCP support
                servers.failed(
                    translate("McpServers", "This conversation's agent runtime does not support MCP servers.")
                )
            else:
                servers.failed(exc.data.message if exc.data is not None else exc.rpc_message)
            return
        except (ConnectionClosed, TimeoutError) as exc:
            servers.failed(
                translate("McpServers", "The agent runtime did not answer ({problem}).").format(
                    problem=exc or type(exc).__name__
                )
            )
            return
        listed = result.get("servers") if isinstance(result, dict) else None
        servers.replace(listed if isinstance(listed, list) else [])

    async def patch_preview(self) -> dict[str, Any]:
        """``GetPatchPreview`` for the whole conversation: the files its tasks changed, those of its
        earlier sessions too while this computer keeps them (a past conversation opened from history
        starts its runtime for this, as it would for the next message)."""
        await self.ensure_started()
        params: dict[str, Any] = {"sessionId": self.session_id}
        earlier = sorted(self.earlier_sessions - {self.session_id or ""})
        if earlier:
            params["earlierSessionIds"] = earlier[-MAX_EARLIER_SESSIONS:]
        result = dict(await self._require().call("GetPatchPreview", params, timeout=60))
        if self._history is not None and isinstance(result.get("files"), list):
            # Changes of earlier sessions this computer no longer keeps: named, without diff or revert.
            known = {str(f.get("path")) for f in result["files"] if isinstance(f, dict)}
            kept = {str(s) for s in result.get("keptSessionIds") or ()}
            root = Path(self.folder) if self.folder else None
            result["files"] = [
                *result["files"],
                *changes_from_history(self._history.get("messages"), root, known, kept),
            ]
        return result

    async def revert_changes(self, request: RevertRequest) -> dict[str, Any]:
        """``RevertChanges``: the files back to before the agent changed them; the conversation then
        shows what was put back (the runtime records it in the audit trail)."""
        connection = self._require()
        assert self.session_id is not None
        result = dict(await connection.call("RevertChanges", request.params(self.session_id), timeout=60))
        shown = reverted_summary(result, Path(self.folder) if self.folder else None)
        if shown:
            self.state.add_notice(
                translate("Conversation", "Reverted the agent's changes: {files}.").format(
                    files=", ".join(shown)
                ),
                action="review_changes",
            )
        return result

    async def new_session(self) -> None:
        """Continue in a new session with this conversation's history (budget used up, session
        expired): the current session ends, the history comes along."""
        if self.session_id is None or self.workspace_id is None or self._fetch_history is None:
            raise ConversationError(
                translate("Conversation", "This conversation has no session to continue from yet.")
            )
        await self._stop_runtime(shutdown=True)
        history = await self._fetch_history(self.workspace_id, self.session_id)
        if history is None:
            raise ConversationError(
                translate(
                    "Conversation",
                    "The conversation's history is not in the backend, so it cannot continue in a new"
                    " session.",
                )
            )
        self.earlier_sessions |= self.chain
        self._history = history
        self.session_id = self.workspace_id = None
        self.phase = Phase.IDLE
        self.state.set_banner(None)
        await self.ensure_started()
        self.state.add_notice(
            translate("Conversation", "Continued in a new session with this conversation's history.")
        )

    async def close(self) -> None:
        """``Shutdown`` (history uploaded, checkpoint removed) and the runtime's end. Never raises.
        A running task is cancelled first and its current step allowed to end (seed 000 §3.4, §4.5)."""
        running = self.state.busy and self.connected
        if running:
            try:
                await self.cancel()
            except (RpcCallError, ConnectionClosed, TimeoutError) as exc:
                logger.warning("could not cancel the task of session %s: %s", self.session_id, exc)
        self.phase = Phase.CLOSED
        await self._stop_runtime(
            shutdown=True, shutdown_timeout=TASK_STOP_GRACE_S if running else SHUTDOWN_TIMEOUT_S
        )

    async def abandon(self) -> None:
        """End the runtime without ``Shutdown``: its checkpoint stays (the app is being torn down
        while a task runs, say)."""
        self.phase = Phase.CLOSED
        await self._stop_runtime(shutdown=False)

    async def _stop_runtime(self, *, shutdown: bool, shutdown_timeout: float = SHUTDOWN_TIMEOUT_S) -> None:
        connection = self._connection
        if connection is None:
            return
        self._connection = None
        self._forget_questions()
        ended = await connection.stop(shutdown=shutdown, shutdown_timeout=shutdown_timeout)
        if ended and self.session_id is not None and self._journal is not None:
            # Ended in order: nothing is left to resume. Otherwise the next start offers to.
            self._journal.remove(self.session_id)

    def _forget_questions(self) -> None:
        """The runtime is gone: its approval requests and elicitations can no longer be answered."""
        if self.session_id is not None:
            self._approvals.discard_session(self.session_id)
            if self._elicitations is not None:
                self._elicitations.discard_session(self.session_id)
        self._asked.clear()

    async def _first_call(self, connection: RuntimeConnection, method: str, params: dict[str, Any]) -> Any:
        """``CreateSession`` or ``ResumeSession`` on a new runtime; if it fails (or is cancelled) the
        runtime is dropped and ended."""
        try:
            return await connection.call(method, params, timeout=CREATE_TIMEOUT_S)
        except BaseException:
            self._drop(connection)
            await connection.stop(shutdown=False)
            raise

    def _require(self) -> RuntimeConnection:
        if self._connection is None or self.phase is not Phase.READY:
            raise ConnectionClosed(
                translate("Conversation", "the agent runtime is being restarted")
                if self.phase is Phase.RECOVERING
                else translate("Conversation", "no agent runtime")
            )
        return self._connection

    # ------------------------------------------------------------------ the runtime died

    def _lost(self, why: str) -> None:
        logger.warning("the runtime of session %s was lost: %s", self.session_id, why)
        self._connection = None
        self._forget_questions()
        if self.phase is Phase.CLOSED:
            return
        if self.state.session_status in ("SESSION_FAILED", "SESSION_CANCELLED", "SESSION_COMPLETED"):
            # The runtime ended the session itself — it failed, or an administrator stopped it — and
            # exited as it should (its banner offers a new session): not a crash, nothing to resume.
            self.phase = Phase.BROKEN
            if self._journal is not None and self.session_id is not None:
                self._journal.remove(self.session_id)
            return
        if self.session_id is None:
            # Nothing to resume: the next action starts afresh.
            self.phase = Phase.IDLE
            self.state.set_banner(
                Banner(
                    translate(
                        "Conversation",
                        "The agent runtime stopped before the conversation started ({reason}). Send again to"
                        " retry.",
                    ).format(reason=why)
                )
            )
            return
        if not self._budget.allow(self._clock()):
            self.phase = Phase.BROKEN
            self.state.set_banner(
                runtime_not_recovered_banner(
                    translate("Conversation", "it stopped {count} times in a row ({reason})").format(
                        count=RESTARTS, reason=why
                    )
                )
            )
            return
        self.phase = Phase.RECOVERING
        self.state.set_banner(runtime_lost_banner(why))
        if self.on_lost is not None:
            self.on_lost(self, why)

    async def recover(self, *, by_user: bool = False) -> None:
        """A new runtime continues the session from its checkpoint (``ResumeSession``). It shares
        the one start in progress with everyone else who needs the runtime, so there is never a
        second one."""
        if by_user:
            self._budget.reset()
        await self.ensure_started()

    async def _recover(self) -> None:
        self.phase = Phase.RECOVERING
        asked = self.state.events_seen
        try:
            connection = await self._launch()
            result = await self._first_call(connection, "ResumeSession", {"sessionId": self.session_id})
        except RpcCallError as exc:
            self.phase = Phase.BROKEN
            message = exc.data.message if exc.data is not None else exc.rpc_message
            if exc.error_code in (ErrorCode.SESSION_NOT_FOUND, ErrorCode.SESSION_EXPIRED):
                if self._journal is not None and self.session_id is not None:
                    self._journal.remove(self.session_id)
                raise ConversationError(
                    translate(
                        "Conversation", "{message}. Continue in a new session: its history comes along."
                    ).format(message=message.rstrip(".")),
                    BannerAction.NEW_SESSION,
                ) from exc
            if exc.error_code is ErrorCode.RATE_LIMITED:
                # A quota of the organisation (seed 001 Phase 4): the backend's message names the
                # limit and when to try again, and a restarted runtime would be refused the same.
                raise ConversationError(message) from exc
            raise ConversationError(
                runtime_not_recovered_banner(message).text, BannerAction.RESTART_RUNTIME
            ) from exc
        except Exception as exc:
            self.phase = Phase.BROKEN
            why = str(exc) or type(exc).__name__
            raise ConversationError(
                runtime_not_recovered_banner(why).text, BannerAction.RESTART_RUNTIME
            ) from exc
        self.phase = Phase.READY
        self.feature_flags = _flags(result) or self.feature_flags
        self.state.set_session(result.get("sessionStatus"), result.get("task"), asked_after=asked)
        task = result.get("task") or {}
        resumed = (
            translate(
                "Conversation", "The agent runtime was restarted; the conversation resumed at step {step}."
            ).format(step=task.get("stepCount"))
            if task.get("stepCount")
            else translate("Conversation", "The agent runtime was restarted; the conversation resumed.")
        )
        self.state.set_banner(None)
        notice, self._resumed_notice = self._resumed_notice, None
        self.state.add_notice(notice or resumed, Tone.INFO)
        await self._sync_state()


def _flags(answer: Mapping[str, Any]) -> dict[str, bool]:
    """``featureFlags`` of a CreateSession or ResumeSession answer (only true/false values kept)."""
    flags = answer.get("featureFlags")
    if not isinstance(flags, dict):
        return {}
    return {str(name): value for name, value in flags.items() if isinstance(value, bool)}
