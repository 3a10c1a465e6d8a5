"""Everything the window does, without the window: the sidebar's conversations, the open ones with
their runtimes, which one is shown, and every call made for them — through the one
:class:`CallRunner`, so each failure reaches the one error presenter. Qt-free.

A conversation is *open* once it has a :class:`ConversationSession` (and, once used, a runtime). The
sidebar lists the stored ones from the backend's history plus the open ones not stored yet (a new
conversation before its first task ends); an open conversation is found again in a refreshed sidebar
by its chain of sessions (:mod:`desktop.conversation.sidebar`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from contracts.images import ImageContent
from desktop.conversation.attachments import prompt_with_files
from desktop.conversation.banners import Banner, BannerAction
from desktop.conversation.commands import CommandError, PromptCommand, expand_prompt, load_commands
from desktop.conversation.controller import CallRunner, Control
from desktop.conversation.errors import ConversationError
from desktop.conversation.export import ConversationExport
from desktop.conversation.history_client import HistoryClient
from desktop.conversation.items import AssistantMessage, Tone, UserMessage
from desktop.conversation.journal import OpenSession, SessionJournal
from desktop.conversation.session import (
    ApprovalSink,
    ConversationSession,
    ElicitationSink,
    Identity,
    RuntimeLauncher,
    TaskDefaults,
)
from desktop.conversation.sidebar import ConversationSummary, Sidebar, build_sidebar, title_of
from desktop.conversation.state import ConversationState
from desktop.conversation.titles import TitleError, TitleStore
from desktop.i18n import QT_TRANSLATE_NOOP, translate

__all__ = ["OPEN_PREFIX", "Workbench", "commands_for"]

logger = logging.getLogger(__name__)

OPEN_PREFIX = "open:"
"""Sidebar keys of open conversations that have no stored history yet."""


@dataclass
class _Open:
    key: str
    session: ConversationSession
    opened_at: datetime


class Workbench:
    def __init__(
        self,
        *,
        runner: CallRunner,
        launcher: RuntimeLauncher,
        history: HistoryClient,
        identity: Identity,
        approvals: ApprovalSink,
        defaults: Callable[[], TaskDefaults] = TaskDefaults,
        journal: SessionJournal | None = None,
        elicitations: ElicitationSink | None = None,
        open_url: Callable[[str], bool] | None = None,
        titles: TitleStore | None = None,
    ) -> None:
        """``elicitations`` receives MCP servers' requests for input; ``open_url`` opens an MCP server's
        sign-in page in the system browser (see :class:`ConversationSession`); ``titles`` keeps the
        names the user gives conversations (by default beside the journal)."""
        self.runner = runner
        self._journal = journal
        if titles is None and journal is not None:
            titles = TitleStore(journal.path.with_name("conversation-names.json"))
        self._titles = titles
        self._launcher = launcher
        self._history = history
        self._identity = identity
        self._approvals = approvals
        self._elicitations = elicitations
        self._open_url = open_url
        self._defaults = defaults
        self._open: list[_Open] = []
        self._numbers = itertools.count(1)
        self._stored = Sidebar()
        self.sidebar = Sidebar()
        self.current: ConversationSession | None = None
        self._refreshing: asyncio.Task[Any] | None = None
        self._refresh_again = False
        self.sidebar_changed: list[Callable[[], None]] = []
        self.current_changed: list[Callable[[], None]] = []

    # ------------------------------------------------------------------ reading

    @property
    def sessions(self) -> list[ConversationSession]:
        return [entry.session for entry in self._open]

    def running_tasks(self) -> list[ConversationSession]:
        """The open conversations whose task still runs (closing the app would stop it)."""
        return [session for session in self.sessions if session.state.busy]

    def session_by_id(self, session_id: str) -> ConversationSession | None:
        for entry in self._open:
            if entry.session.session_id == session_id:
                return entry.session
        return None

    def key_of(self, session: ConversationSession) -> str | None:
        """The sidebar key that shows ``session``: its stored summary's, else its open key."""
        stored = self._stored_for(session)
        if stored is not None:
            return stored.session_id
        for entry in self._open:
            if entry.session is session:
                return entry.key
        return None

    def _stored_for(self, session: ConversationSession) -> ConversationSummary | None:
        chain = session.chain
        for summary in self._stored.all():
            if summary.chain & chain:
                return summary
        return None

    # ------------------------------------------------------------------ the sidebar

    def refresh(self) -> asyncio.Task[Any] | None:
        """Read the conversation list again (now, or right after a refresh already running)."""
        if self._refreshing is not None and not self._refreshing.done():
            self._refresh_again = True
            return None
        task = self.runner.run(QT_TRANSLATE_NOOP("Errors", "load the conversation list"), self._refresh())
        self._refreshing = task
        return task

    async def _refresh(self) -> None:
        while True:
            self._refresh_again = False
            summaries = await self._history.conversations()
            titles = self._titles
            if titles is not None:
                late = [summary for summary in summaries if titles.was_deleted(summary.chain)]
                for summary in late:  # a history that arrived after its conversation was deleted
                    self.runner.run("delete the conversation", self._history.delete_conversation(summary))
                summaries = [summary for summary in summaries if summary not in late]
            self._stored = build_sidebar(summaries, self._title_of)
            self._rebuild()
            if not self._refresh_again:
                return

    def _rebuild(self) -> None:
        stored = self._stored.all()
        pending = [
            ConversationSummary(
                session_id=entry.key,
                workspace_id="",
                title=_title(entry.session.state),
                updated_at=entry.opened_at,
                folder=entry.session.folder,
                message_count=len(entry.session.state.items),
                earlier_sessions=frozenset(entry.session.chain),
                search_text="\n".join(
                    item.text for item in entry.session.state.items if isinstance(item, UserMessage)
                ).casefold(),
            )
            for entry in self._open
            if self._stored_for(entry.session) is None
        ]
        pending = [
            replace(summary, title=title, renamed=True)
            if (title := self._title_of(summary.earlier_sessions)) is not None
            else summary
            for summary in pending
        ]
        self.sidebar = build_sidebar([*stored, *pending])
        for callback in self.sidebar_changed:
            callback()

    def _title_of(self, sessions: Iterable[str]) -> str | None:
        return self._titles.title_of(sessions) if self._titles is not None else None

    # ------------------------------------------------------------------ managing conversations

    def summary_of(self, key: str) -> ConversationSummary | None:
        """The sidebar's entry behind ``key``."""
        return self.sidebar.find(key)

    def rename(self, key: str, title: str) -> str:
        """Give the conversation behind ``key`` a name of the user's; the name as kept.
        :class:`ConversationError` when it cannot be kept."""
        summary = self.summary_of(key)
        if summary is None:
            raise ConversationError(translate("Conversation", "This conversation is no longer in the list."))
        sessions = {s for s in summary.chain if not s.startswith(OPEN_PREFIX)}
        open_session = self._open_session_for(summary)
        if open_session is not None:
            sessions |= open_session.chain
        if not sessions:
            raise ConversationError(
                translate(
                    "Conversation",
                    "This conversation has not started yet; name it once its first message is sent.",
                )
            )
        if self._titles is None:
            raise ConversationError(
                translate("Conversation", "Conversation names cannot be kept in this setup.")
            )
        try:
            kept = self._titles.rename(sorted(sessions), title)
        except TitleError as exc:
            raise ConversationError(str(exc)) from exc
        except OSError as exc:
            raise ConversationError(
                translate("Conversation", "The name could not be saved: {reason}.").format(
                    reason=exc.strerror or exc
                )
            ) from exc
        stored = [
            replace(s, title=kept, renamed=True) if s.chain & sessions else s for s in self._stored.all()
        ]
        self._stored = build_sidebar(stored)
        self._rebuild()
        return kept

    async def delete(self, key: str) -> None:
        """Permanently delete the conversation behind ``key``: its runtime is shut down if it is open,
        then its history and artifacts are removed from the backend and its name forgotten."""
        summary = self.summary_of(key)
        if summary is None:
            raise ConversationError(translate("Conversation", "This conversation is no longer in the list."))
        open_session = self._open_session_for(summary)
        sessions = set(summary.chain)
        if open_session is not None:
            if open_session.state.busy:
                raise ConversationError(
                    translate("Conversation", "A task is still running in this conversation; stop it first.")
                )
            sessions |= open_session.chain
        stored = self._stored_for_chain(sessions)
        # Noted first: should the app quit before the backend has answered, or a history arrive late
        # (a runtime sends it in the background), the next refresh hides it and deletes it again.
        if self._titles is not None:
            try:
                self._titles.forget(sorted(s for s in sessions if not s.startswith(OPEN_PREFIX)))
            except OSError as exc:
                logger.warning("the deletion of %s could not be noted: %s", sorted(sessions), exc)
        self._stored = build_sidebar([s for s in self._stored.all() if not (s.chain & sessions)])
        if open_session is not None:
            await self.close(open_session)  # its Shutdown may send its history once more: deleted below
        else:
            self._rebuild()
        if stored is not None:
            await self._history.delete_conversation(stored)
        if open_session is not None and open_session.session_id and open_session.workspace_id:
            await self._history.delete_conversation(
                ConversationSummary(
                    session_id=open_session.session_id,
                    workspace_id=open_session.workspace_id,
                    title=summary.title,
                    updated_at=datetime.now(UTC),
                    folder=open_session.folder,
                    message_count=0,
                    earlier_sessions=frozenset(open_session.earlier_sessions),
                )
            )

    async def export(self, key: str) -> ConversationExport:
        """The conversation behind ``key``, whole, for :func:`desktop.conversation.export.write_export`:
        its stored history, or what the window shows of one not stored yet."""
        summary = self.summary_of(key)
        if summary is None:
            raise ConversationError(translate("Conversation", "This conversation is no longer in the list."))
        stored = self._stored_for_chain(set(summary.chain))
        open_session = self._open_session_for(summary)
        messages: list[dict[str, Any]] = []
        if stored is not None:
            history = await self._history.history(stored.workspace_id, stored.session_id)
            if history is not None:
                messages = [message.to_wire() for message in history.messages]
        if open_session is not None and len(open_session.state.items) > len(messages):
            # Newer than the stored history (a task ran since): what the window shows, in its words.
            messages = _shown_messages(open_session)
        if not messages:
            raise ConversationError(
                translate("Conversation", "This conversation has no messages to export yet.")
            )
        sessions = list(dict.fromkeys(str(m.get("sessionId")) for m in messages if m.get("sessionId")))
        return ConversationExport(
            title=summary.title,
            folder=summary.folder,
            session_ids=sessions or sorted(s for s in summary.chain if not s.startswith(OPEN_PREFIX)),
            messages=messages,
            exported_at=datetime.now(UTC),
        )

    def _open_session_for(self, summary: ConversationSummary) -> ConversationSession | None:
        for entry in self._open:
            if entry.key == summary.session_id or summary.chain & entry.session.chain:
                return entry.session
        return None

    def _stored_for_chain(self, sessions: set[str]) -> ConversationSummary | None:
        for summary in self._stored.all():
            if summary.chain & sessions:
                return summary
        return None

    # ------------------------------------------------------------------ opening

    def new_conversation(self, folder: str | None) -> ConversationSession:
        """A new conversation in ``folder`` (``None``: a general chat); its runtime starts now."""
        session = self._add(ConversationState(), folder, history=None)
        self._show(session)
        self.runner.run(
            QT_TRANSLATE_NOOP("Errors", "start the agent runtime"), session.ensure_started(), context=session
        )
        return session

    async def open(self, key: str) -> ConversationSession:
        """The conversation behind a sidebar key, opened (its history loaded) if it is not yet."""
        for entry in self._open:
            if entry.key == key:
                self._show(entry.session)
                return entry.session
        summary = self.sidebar.find(key) or self._stored.find(key)
        if summary is None:
            raise ConversationError(translate("Conversation", "This conversation is no longer in the list."))
        for entry in self._open:
            if summary.chain & entry.session.chain:
                self._show(entry.session)
                return entry.session
        history = await self._history.history(summary.workspace_id, summary.session_id)
        if history is None:
            raise ConversationError("The history of this conversation could not be found in the backend.")
        wire: dict[str, Any] = history.to_wire()
        state = ConversationState()
        state.load_history(wire.get("messages") or [])
        # It may have been opened by a second click while the history was loading.
        for entry in self._open:
            if summary.chain & entry.session.chain:
                self._show(entry.session)
                return entry.session
        session = self._add(state, summary.folder, history=wire)
        self._show(session)
        if state.missing_images():
            self.runner.run(
                QT_TRANSLATE_NOOP("Errors", "show the conversation's images"),
                self._show_images(summary.workspace_id, state),
                context=session,
            )
        return session

    async def _show_images(self, workspace_id: str, state: ConversationState) -> None:
        """The images of an opened history, fetched from their artifacts. Best effort: an image that
        cannot be fetched stays shown by its name."""
        try:
            found = await self._history.attachments(workspace_id, state.missing_images())
        except Exception as exc:
            logger.warning("could not fetch the images of a conversation: %s", exc)
            return
        state.fill_images(found)

    def _add(
        self,
        state: ConversationState,
        folder: str | None,
        *,
        history: dict[str, Any] | None,
        interrupted: OpenSession | None = None,
    ) -> ConversationSession:
        session = ConversationSession(
            state=state,
            launcher=self._launcher,
            identity=self._identity,
            folder=folder,
            approvals=self._approvals,
            defaults=self._defaults,
            history=history,
            fetch_history=self._fetch_history,
            journal=self._journal,
            interrupted=interrupted,
            elicitations=self._elicitations,
            open_url=self._open_url,
        )
        session.on_lost = self._recover
        session.on_task_ended = self._task_ended
        self._open.append(_Open(f"{OPEN_PREFIX}{next(self._numbers)}", session, datetime.now(UTC)))
        self._rebuild()
        return session

    async def restore_interrupted(self) -> int:
        """Open the conversations a crash of the desktop left running (seed 004 scenario A): each
        shows what its history holds and offers to resume from its checkpoint. Their number."""
        if self._journal is None:
            return 0
        entries = self._journal.interrupted()
        for entry in entries:
            state = ConversationState()
            try:
                history = await self._history.history(entry.workspace_id, entry.session_id)
            except Exception as exc:  # the offer to resume matters more than the history shown
                logger.warning("no history for interrupted session %s: %s", entry.session_id, exc)
                history = None
            if history is not None:
                state.load_history([message.to_wire() for message in history.messages])
            state.set_banner(
                Banner(
                    translate(
                        "Conversation",
                        "Cowork closed while this conversation was running. Resume to go on from its last"
                        " checkpoint.",
                    ),
                    Tone.WARNING,
                    BannerAction.RESUME,
                )
            )
            session = self._add(state, entry.folder, history=None, interrupted=entry)
            if state.missing_images():
                self.runner.run(
                    QT_TRANSLATE_NOOP("Errors", "show the conversation's images"),
                    self._show_images(entry.workspace_id, state),
                    context=session,
                )
            if self.current is None:
                self._show(session)
        return len(entries)

    def _show(self, session: ConversationSession) -> None:
        if self.current is session:
            return
        self.current = session
        for callback in self.current_changed:
            callback()

    async def _fetch_history(self, workspace_id: str, session_id: str) -> dict[str, Any] | None:
        history = await self._history.history(workspace_id, session_id)
        return None if history is None else history.to_wire()

    def _task_ended(self, session: ConversationSession) -> None:
        self.refresh()  # the task's history is stored now: the sidebar shows it

    def _recover(self, session: ConversationSession, why: str) -> None:
        self.runner.run(
            QT_TRANSLATE_NOOP("Errors", "resume the conversation"), session.recover(), context=session
        )

    # ------------------------------------------------------------------ actions on the current one

    def warm_up(self) -> None:
        """The user started typing: have the runtime ready by the time they send."""
        session = self.current
        if session is not None and session.phase.value == "idle":
            self.runner.run(
                QT_TRANSLATE_NOOP("Errors", "start the agent runtime"),
                session.ensure_started(),
                context=session,
            )

    def send(
        self,
        text: str,
        *,
        files: Sequence[Path] = (),
        images: Sequence[ImageContent] = (),
        affects: Iterable[Control] = (),
        on_failed: Callable[[BaseException], None] | None = None,
    ) -> asyncio.Task[Any] | None:
        """Send ``text`` in the current conversation (a new general chat if none is shown); a
        ``/name args`` prompt command is sent expanded, an unknown one is refused with the list of
        known ones (nothing is sent, and ``on_failed`` gives the text back). The paths of attached
        ``files`` follow the text; ``images`` go as image content."""
        session = self.current
        folder = session.folder if session is not None else None
        try:
            prompt = prompt_with_files(expand_prompt(text, Path(folder) if folder else None), files)
        except CommandError as exc:
            return self.runner.run(
                QT_TRANSLATE_NOOP("Errors", "send the message"),
                _refuse(ConversationError(str(exc))),
                on_failed=on_failed,
                context=session,
            )
        if session is None:
            session = self.new_conversation(None)
        task = self.runner.run(
            QT_TRANSLATE_NOOP("Errors", "send the message"),
            session.send(prompt, images),
            affects=affects,
            on_failed=on_failed,
            context=session,
        )
        # After the task's first step, which shows the prompt: a new conversation takes its title.
        asyncio.get_running_loop().call_soon(self._rebuild)
        return task

    def last_prompt(self) -> str | None:
        """The current conversation's last prompt, to edit and send again or to retry."""
        session = self.current
        if session is None:
            return None
        for item in reversed(session.state.items):
            if isinstance(item, UserMessage):
                return item.text
        return None

    def retry(self, *, affects: Iterable[Control] = ()) -> asyncio.Task[Any] | None:
        """Send the current conversation's last prompt again, as a new task."""
        prompt = self.last_prompt()
        if prompt is None:
            return None
        return self.send(prompt, affects=affects)

    def choose_model(self, model: str | None) -> None:
        """The model the current conversation's next tasks call (``None``: the one Settings name)."""
        session = self.current
        if session is not None:
            session.model = (model or "").strip() or None

    def stop(self, *, affects: Iterable[Control] = ()) -> None:
        session = self.current
        if session is not None and session.state.busy:
            self.runner.run(
                QT_TRANSLATE_NOOP("Errors", "stop the task"),
                session.cancel(),
                affects=affects,
                context=session,
            )

    def act(self, action: BannerAction, *, affects: Iterable[Control] = ()) -> None:
        """The current conversation's banner button."""
        session = self.current
        if session is None:
            return
        if action is BannerAction.RESUME:
            self.runner.run(
                QT_TRANSLATE_NOOP("Errors", "resume the session"),
                session.resume(),
                affects=affects,
                context=session,
            )
        elif action is BannerAction.NEW_SESSION:
            self.runner.run(
                QT_TRANSLATE_NOOP("Errors", "continue in a new session"),
                session.new_session(),
                affects=affects,
                context=session,
            )
        elif action is BannerAction.RESTART_RUNTIME:
            self.runner.run(
                QT_TRANSLATE_NOOP("Errors", "restart the agent runtime"),
                session.recover(by_user=True),
                affects=affects,
                context=session,
            )

    def review_changes(
        self,
        on_preview: Callable[[ConversationSession, dict[str, Any]], None],
        *,
        affects: Iterable[Control] = (),
    ) -> None:
        session = self.current
        if session is None:
            return
        self.runner.run(
            QT_TRANSLATE_NOOP("Errors", "show the changes"),
            session.patch_preview(),
            affects=affects,
            on_done=lambda preview: on_preview(session, preview),
            context=session,
        )

    def approve(self, session_id: str, approval_id: str, decision: str, scope: str, reason: str) -> None:
        session = self.session_by_id(session_id)
        if session is None:
            logger.warning("a decision for session %s, which is not open", session_id)
            return
        self.runner.run(
            QT_TRANSLATE_NOOP("Errors", "send your decision"),
            session.approve(approval_id, decision, scope, reason),
            context=session,
        )

    def answer_elicitation(
        self, session_id: str, elicitation_id: str, action: str, content: dict[str, Any] | None
    ) -> None:
        """The user's answer to an MCP server's request for input (the elicitation dialog)."""
        session = self.session_by_id(session_id)
        if session is None:
            logger.warning("an answer for session %s, which is not open", session_id)
            return
        self.runner.run(
            QT_TRANSLATE_NOOP("Errors", "send your answer to the MCP server"),
            session.answer_elicitation(elicitation_id, action, content),
            context=session,
        )

    def refresh_mcp_servers(self, session: ConversationSession) -> None:
        """Ask ``session``'s runtime for its MCP servers again (Settings' list)."""
        self.runner.run(
            QT_TRANSLATE_NOOP("Errors", "list the MCP servers"),
            session.refresh_mcp_servers(),
            context=session,
        )

    def settings_changed(self) -> None:
        """Settings were saved: each open conversation whose runtime still calls the previous gateway
        says so; the new settings apply from its next task or resume (the runtime is restarted then)."""
        for session in self.sessions:
            self.runner.run(
                QT_TRANSLATE_NOOP("Errors", "check the gateway settings"),
                self._tell_if_old(session),
                context=session,
            )

    async def _tell_if_old(self, session: ConversationSession) -> None:
        if await session.on_old_settings():
            session.state.add_notice(
                translate(
                    "Conversation",
                    "This conversation still uses the previous gateway settings; the new ones apply from its"
                    " next task or when it resumes.",
                ),
                Tone.WARNING,
            )

    # ------------------------------------------------------------------ closing

    async def close(self, session: ConversationSession) -> None:
        """Close one conversation: its runtime shuts down; it stays in the sidebar if stored."""
        for entry in list(self._open):
            if entry.session is session:
                self._open.remove(entry)
        if self.current is session:
            self.current = None
            for callback in self.current_changed:
                callback()
        self._rebuild()
        await session.close()

    async def close_all(self) -> None:
        """Every runtime shut down (concurrently), then the history client closed. Never raises."""
        sessions = self.sessions
        self._open.clear()
        await asyncio.gather(*(session.close() for session in sessions), return_exceptions=True)
        with contextlib.suppress(Exception):
            await self._history.aclose()


def commands_for(session: ConversationSession | None) -> list[PromptCommand]:
    """The prompt commands usable in ``session`` (the user's, and its project's), sorted by name."""
    folder = session.folder if session is not None else None
    return list(load_commands(Path(folder) if folder else None).values())


async def _refuse(error: ConversationError) -> None:
    raise error


def _shown_messages(session: ConversationSession) -> list[dict[str, Any]]:
    """The prompts and replies the window shows, as history messages (an export of a conversation
    whose newest turns are not stored yet)."""
    messages: list[dict[str, Any]] = []
    for item in session.state.items:
        if isinstance(item, UserMessage):
            messages.append({"role": "user", "content": item.text, "sessionId": session.session_id})
        elif isinstance(item, AssistantMessage) and item.text.strip():
            messages.append({"role": "assistant", "content": item.text, "sessionId": session.session_id})
    return messages


def _title(state: ConversationState) -> str:
    for item in state.items:
        if isinstance(item, UserMessage):
            return title_of([{"role": "user", "content": item.text}])
    if state.banner is not None:
        return translate("Conversation", "Interrupted conversation")
    return translate("Conversation", "New conversation")
