"""The main window: the sidebar of conversations, the conversation with its banner and status strip,
the composer; menus and shortcuts; the approval dialog, the patch preview, Settings and About; the
runtime updater's note in the status bar and Help → Check for Runtime Updates.

It draws and forwards, nothing more. What happens lives in the Qt-free
:class:`desktop.conversation.workbench.Workbench`, every call goes through its
:class:`CallRunner` (which also decides which controls are enabled), and every failure comes back to
:meth:`MainWindow.present`, the one error presenter, as a banner.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QHBoxLayout,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop.app.checklist_view import ChecklistView
from desktop.app.composer import Composer
from desktop.app.conversation_actions import ConversationActions
from desktop.app.conversation_view import ConversationView
from desktop.app.header_view import ConversationHeader, saved_prices, settings_model
from desktop.app.notifications import DesktopNotifier, set_windows_app_id
from desktop.app.sidebar_view import SidebarView
from desktop.app.status import BannerView, StatusStrip
from desktop.app.update_status import RuntimeUpdateStatus
from desktop.app.welcome_view import WelcomeView
from desktop.conversation.banners import Banner, BannerAction
from desktop.conversation.controller import CallRunner, Problem, describe_failure
from desktop.conversation.items import Item, Tone
from desktop.conversation.pricing import PriceTable
from desktop.conversation.session import ConversationSession, Phase
from desktop.conversation.workbench import Workbench, commands_for
from desktop.dialog_size import keep_laid_out
from desktop.i18n import QT_TRANSLATE_NOOP, translate
from desktop.patch.model import RevertRequest, reverted_summary
from desktop.updater.indicator import NoteKind, UpdateNote, progress_note, result_note
from desktop.updater.outcome import UpdateProgress, UpdateResult

if TYPE_CHECKING:
    from desktop.patch.dialog import PatchPreviewDialog
    from desktop.updater.qt import RuntimeUpdater

__all__ = ["AboutInfo", "MainWindow"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AboutInfo:
    app_version: str
    runtime_version: str
    qt_version: str
    python_version: str

    def text(self) -> str:
        return translate(
            "About",
            "<h3>Cowork {app}</h3>"
            "<p>A local-first desktop agent: it reads, writes and runs things in your projects, asking"
            " you before risky actions.</p>"
            "<p>Agent runtime: {runtime}<br>"
            "Qt {qt} · Python {python}</p>",
        ).format(
            app=self.app_version, runtime=self.runtime_version, qt=self.qt_version, python=self.python_version
        )


class MainWindow(QMainWindow):
    closing = Signal()
    """The user closed the window: the app shuts the runtimes down and quits."""

    def __init__(
        self,
        *,
        about: AboutInfo | Callable[[], AboutInfo],
        log_dir: Path,
        open_url: Callable[[QUrl], bool] = QDesktopServices.openUrl,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._closed_for_good = False
        self.setWindowTitle("Cowork")
        self.resize(1180, 760)
        self._about = about
        self._log_dir = log_dir
        self._open_url = open_url
        self.workbench: Workbench | None = None
        self.runner: CallRunner | None = None
        self._observed: ConversationSession | None = None
        self._app_banner: Banner | None = None
        self._dialogs: list[QWidget] = []
        self.approval_dialog: QWidget | None = None
        self.preview_dialog: QWidget | None = None
        self.settings_opener: Callable[[], None] | None = None
        self.price_source: Callable[[], PriceTable] = saved_prices
        """The price table the header's cost estimate uses (Settings → Prices)."""
        self.updater: RuntimeUpdater | None = None
        self.compatible_dialog: QDialog | None = None
        """The last offer of a compatible runtime (for tests to drive)."""
        self._update_asked = False
        self.close_question: QMessageBox | None = None
        """Asked when the window is closed while a task runs: stop it and quit, or keep working."""
        self.stop_and_quit_button: QPushButton | None = None
        self._stopping = False
        """The user chose to stop the running task and quit: the app is shutting down."""
        self._shut_down = False
        self.updates_off_reason: str | None = None
        """Why Help → Check for Runtime Updates is greyed out (also said in About)."""
        self.logs_dialog: QDialog | None = None
        """Shown when no file manager opened the logs folder."""
        set_windows_app_id()  # before the window shows: its taskbar button and toasts are Cowork's
        self.notifier = DesktopNotifier(self)
        """OS notifications while this window is not active (File → Notify When in the Background)."""
        self._build_actions()
        self._build()
        self._build_menus()
        self._refresh_view()

    # ------------------------------------------------------------------ layout

    def _build_actions(self) -> None:
        def action(
            text: str,
            shortcut: QKeySequence | QKeySequence.StandardKey | str | None,
            slot: Callable[[], object],
        ) -> QAction:
            made = QAction(text, self)
            if shortcut is not None:
                made.setShortcut(QKeySequence(shortcut))
            made.triggered.connect(lambda _checked=False: slot())
            return made

        self.new_action = action(
            translate("MainWindow", "New Conversation in a &Folder…"),
            QKeySequence.StandardKey.New,
            self.choose_folder,
        )
        self.new_general_action = action(
            translate("MainWindow", "New &General Chat"), "Ctrl+Shift+N", lambda: self.new_conversation(None)
        )
        self.close_action = action(
            translate("MainWindow", "&Close Conversation"),
            QKeySequence.StandardKey.Close,
            self.close_conversation,
        )
        self.settings_action = action(
            translate("MainWindow", "&Settings…"), QKeySequence.StandardKey.Preferences, self.open_settings
        )
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.quit_action = action(translate("MainWindow", "&Quit"), QKeySequence.StandardKey.Quit, self.close)
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.send_action = action(translate("MainWindow", "&Send"), "Ctrl+Return", self.send)
        self.stop_action = action(translate("MainWindow", "S&top"), "Escape", self.stop)
        self.review_action = action(
            translate("MainWindow", "&Review Changes…"), "Ctrl+Shift+D", self.review_changes
        )
        self.edit_last_action = action(
            translate("MainWindow", "&Edit Last Prompt"), "Ctrl+Shift+E", self.edit_last_prompt
        )
        self.retry_action = action(translate("MainWindow", "Re&try Last Task"), "Ctrl+Shift+R", self.retry)
        self.find_action = action(
            translate("MainWindow", "&Find Conversation"), "Ctrl+Shift+F", lambda: self.sidebar.focus_search()
        )
        self.logs_action = action(translate("MainWindow", "Open &Logs Folder"), None, self.open_logs)
        self.check_updates_action = action(
            translate("MainWindow", "Check for Runtime &Updates"), None, self.check_for_updates
        )
        self.check_updates_action.setEnabled(False)  # until the app has an updater (installed, or configured)
        self.about_action = action(translate("MainWindow", "&About Cowork"), None, self.show_about)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)

    def _build(self) -> None:
        self.sidebar = SidebarView(self.new_action, self.new_general_action)
        self.sidebar.selected.connect(self.open_conversation)
        self.conversation_actions = ConversationActions(self.sidebar, self, self._keep)
        self.header = ConversationHeader(prices=lambda: self.price_source(), settings_model=settings_model)
        self.header.model_chosen.connect(self._model_chosen)
        self.title = self.header.title
        self.folder = self.header.folder
        self.banner = BannerView()
        self.banner.acted.connect(self.act)
        self.banner.dismissed.connect(self._dismiss_banner)
        self.view = ConversationView()
        self.view.action_triggered.connect(self._notice_action)
        self.status = StatusStrip()
        self.composer = Composer()
        self.composer.edit.command_source = lambda: commands_for(self._current())
        self.composer.edit.submitted.connect(self.send)
        self.composer.edit.typing_started.connect(self._typing)
        self.composer.stop_button.clicked.connect(self.stop)
        self.composer.changed.connect(self._composer_changed)
        main = QWidget()
        column = QVBoxLayout(main)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.header)
        column.addWidget(self.banner)
        self.checklist = ChecklistView()
        middle = QHBoxLayout()
        middle.setContentsMargins(0, 0, 0, 0)
        middle.addWidget(self.view, 1)
        # While no conversation is open: what to do first, in place of an empty conversation.
        self.welcome = WelcomeView(self.new_action, self.settings_action)
        middle.addWidget(self.welcome, 1)
        middle.addWidget(self.checklist)
        column.addLayout(middle, 1)
        column.addWidget(self.status)
        column.addWidget(self.composer)
        splitter = QSplitter()
        splitter.addWidget(self.sidebar)
        splitter.addWidget(main)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([280, 900])
        splitter.setChildrenCollapsible(False)
        self.setCentralWidget(splitter)
        self.update_status = RuntimeUpdateStatus()
        self.statusBar().addPermanentWidget(self.update_status, 1)
        self.statusBar().setSizeGripEnabled(False)
        self.statusBar().hide()  # shown only while the updater has something to say
        self.update_status.noteChanged.connect(lambda note: self.statusBar().setVisible(note is not None))
        # Window-wide: Ctrl+Enter sends and Esc stops wherever the focus is (dialogs have their own Esc).
        self.addAction(self.send_action)
        self.addAction(self.stop_action)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu(translate("MainWindow", "&File"))
        for action in (self.new_action, self.new_general_action, self.close_action):
            file_menu.addAction(action)
        file_menu.addSeparator()
        file_menu.addAction(self.settings_action)
        file_menu.addAction(self.notifier.toggle_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        conversation = bar.addMenu(translate("MainWindow", "&Conversation"))
        conversation.addAction(self.send_action)
        conversation.addAction(self.stop_action)
        conversation.addAction(self.review_action)
        conversation.addSeparator()
        conversation.addAction(self.edit_last_action)
        conversation.addAction(self.retry_action)
        conversation.addAction(self.find_action)
        help_menu = bar.addMenu(translate("MainWindow", "&Help"))
        help_menu.setToolTipsVisible(True)  # a greyed-out update check says why in its tooltip
        help_menu.addAction(self.logs_action)
        help_menu.addAction(self.check_updates_action)
        help_menu.addAction(self.about_action)

    # ------------------------------------------------------------------ the workbench

    def attach(self, workbench: Workbench, approval_dialog: QWidget | None = None) -> None:
        """The app's logic is ready (the backend is up): enable the window."""
        self.workbench = workbench
        self.runner = workbench.runner
        self.approval_dialog = approval_dialog
        sidebar_changed, current_changed = self._sidebar_changed, self._current_changed
        workbench.sidebar_changed.append(sidebar_changed)
        workbench.current_changed.append(current_changed)

        def detach() -> None:
            # A refresh still in flight when the window goes must not draw into deleted widgets.
            self._closed_for_good = True
            for callbacks, callback in (
                (workbench.sidebar_changed, sidebar_changed),
                (workbench.current_changed, current_changed),
            ):
                if callback in callbacks:
                    callbacks.remove(callback)

        self.destroyed.connect(lambda *_: detach())
        runner = workbench.runner
        runner.guard(self.composer.send_button, self._can_send_text)
        runner.guard(self.send_action, self._can_send)
        runner.guard(self.composer.stop_button, self._busy)
        runner.guard(self.stop_action, self._busy)
        runner.guard(self.review_action, self._can_review)
        for again in (self.edit_last_action, self.retry_action):
            runner.guard(again, lambda: self._can_send() and workbench.last_prompt() is not None)
        self.conversation_actions.attach(workbench)
        runner.guard(self.close_action, lambda: workbench.current is not None)
        for action in (self.new_action, self.new_general_action):
            runner.guard(action)
        self.composer.edit.setEnabled(True)
        self.sidebar.show_message(translate("MainWindow", "Loading conversations…"))
        workbench.refresh()

    def attach_updater(self, updater: RuntimeUpdater) -> None:
        """Show the runtime updater's rounds in the status bar; Help → Check for Runtime Updates."""
        self.updater = updater
        updater.progressed.connect(self._update_progressed)
        updater.stageChanged.connect(self._update_stage)
        updater.finished.connect(self._update_finished)
        self.check_updates_action.setEnabled(True)
        self.check_updates_action.setToolTip(translate("MainWindow", "Check for a newer agent runtime now"))
        self.updates_off_reason = None

    def updates_unavailable(self, reason: str) -> None:
        """There is no runtime updater: the greyed-out Check for Runtime Updates, and About, say why."""
        self.updates_off_reason = reason
        self.check_updates_action.setEnabled(False)
        self.check_updates_action.setToolTip(self._updates_off_text())

    def _updates_off_text(self) -> str:
        return translate("MainWindow", "Runtime updates are off: {reason}.").format(
            reason=self.updates_off_reason
        )

    def check_for_updates(self) -> None:
        if self.updater is None:
            return
        self._update_asked = True  # also when a round is already running: its result is the answer
        self.updater.check_now()

    def show_update_note(self, note: UpdateNote | None) -> None:
        self.update_status.show_note(note)

    def _update_progressed(self, progress: UpdateProgress) -> None:
        note = progress_note(progress, asked=self._update_asked)
        if note is not None:
            self.show_update_note(note)

    def _update_stage(self, stage: str) -> None:
        if stage != "idle":
            return
        # The round is over; its result, if it had one, came just before. A round cut short leaves
        # neither its progress note nor a request to answer the next (scheduled) round as asked.
        self._update_asked = False
        shown = self.update_status.note
        if shown is not None and shown.kind is NoteKind.WORKING:
            self.show_update_note(None)

    def _update_finished(self, result: UpdateResult) -> None:
        asked, self._update_asked = self._update_asked, False
        self.show_update_note(result_note(result, asked=asked))

    def _can_send(self) -> bool:
        session = self._current()
        return (
            self.workbench is not None
            and not self._stopping
            and (session is None or (not session.state.busy and session.phase is not Phase.CLOSED))
        )

    def _can_send_text(self) -> bool:
        """Send is offered once the box holds more than whitespace."""
        return self._can_send() and self.composer.has_text()

    def _composer_changed(self) -> None:
        if self.runner is not None:
            self.runner.refresh()

    def _busy(self) -> bool:
        session = self._current()
        return session is not None and session.state.busy and not self._stopping

    def _connected(self) -> bool:
        session = self._current()
        return session is not None and session.connected

    def _can_review(self) -> bool:
        """A live conversation, or a past one opened from history (its runtime starts for the review)."""
        session = self._current()
        if session is None or session.connected:
            return session is not None
        return session.phase is Phase.IDLE and bool(session.earlier_sessions)

    def _current(self) -> ConversationSession | None:
        return self.workbench.current if self.workbench is not None else None

    # ------------------------------------------------------------------ ErrorPresenter

    def present(self, problem: Problem, context: object | None) -> None:
        """The one place failures are shown: the conversation's banner, or the window's."""
        if self._closed_for_good:
            return  # a call that failed after the window went: nothing left to show it in
        banner = Banner(f"{problem.title}: {problem.message}", Tone.ERROR, problem.action)
        logger.info("shown to the user: %s", banner.text)
        if isinstance(context, ConversationSession):
            context.state.set_banner(banner)
        else:
            self._app_banner = banner
            self._refresh_view()

    def show_problem(self, text: str, action: BannerAction | None = None, tone: Tone = Tone.ERROR) -> None:
        """A problem of the app itself (the backend did not start, nothing is configured)."""
        self._app_banner = Banner(text, tone, action)
        self._refresh_view()

    # ------------------------------------------------------------------ actions

    def choose_folder(self) -> None:
        dialog = QFileDialog(self, translate("MainWindow", "Choose the project folder"))
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly, True)
        dialog.fileSelected.connect(lambda path: self.new_conversation(path or None))
        self._keep(dialog)
        dialog.open()

    def new_conversation(self, folder: str | None) -> None:
        if self.workbench is None:
            return
        self.workbench.new_conversation(folder)
        self.composer.edit.setFocus()

    def open_conversation(self, key: str) -> None:
        if self.workbench is None:
            return
        self.workbench.runner.run(
            QT_TRANSLATE_NOOP("Errors", "open the conversation"), self.workbench.open(key)
        )

    def close_conversation(self) -> None:
        session = self._current()
        if self.workbench is not None and session is not None:
            self.workbench.runner.run(
                QT_TRANSLATE_NOOP("Errors", "close the conversation"), self.workbench.close(session)
            )

    def send(self) -> None:
        if self.workbench is None or not self._can_send():
            return
        if not self.composer.has_text():
            return
        message = self.composer.take_message()
        self.view.scroll_to_end()
        self.workbench.send(
            message.text,
            files=message.file_paths,
            images=message.image_contents,
            affects=[self.composer.send_button, self.send_action],
            on_failed=lambda _exc: self.composer.restore(message),
        )

    def edit_last_prompt(self) -> None:
        """The last prompt back in the composer, to change and send again."""
        prompt = self.workbench.last_prompt() if self.workbench is not None and self._can_send() else None
        if prompt is None:
            return
        self.composer.edit.setPlainText(prompt)
        cursor = self.composer.edit.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.composer.edit.setTextCursor(cursor)
        self.composer.edit.setFocus()

    def retry(self) -> None:
        """Send the last prompt again as a new task."""
        if self.workbench is not None and self._can_send():
            self.view.scroll_to_end()
            self.workbench.retry(affects=[self.retry_action, self.send_action])

    def _model_chosen(self, model: str | None) -> None:
        if self.workbench is not None:
            self.workbench.choose_model(model)
            self._refresh_view()

    def stop(self) -> None:
        if self.workbench is not None and self._busy():
            self.workbench.stop(affects=[self.composer.stop_button, self.stop_action])

    def act(self, action: BannerAction) -> None:
        if action is BannerAction.SETTINGS:
            self.open_settings()
        elif action is BannerAction.OPEN_LOGS:
            self.open_logs()
        elif action is BannerAction.UPDATE_RUNTIME:
            self.offer_compatible_runtime()
        elif self.workbench is not None:
            self.workbench.act(action, affects=[self.banner.action_button])

    def offer_compatible_runtime(self) -> None:
        """The backend refused this runtime's version (seed 001 §11): offer the one it accepts from the
        release manifest, and start the session again once it is installed."""
        session = self._current()
        found = session.incompatibility if session is not None else None
        if session is None or found is None:
            return
        if self.updater is None:
            session.state.set_banner(
                Banner(
                    translate(
                        "MainWindow",
                        "{refusal}. This installation has no runtime update source"
                        " (update.json or COWORK_UPDATE_MANIFEST_URL): install a compatible runtime or"
                        " Cowork version by hand.",
                    ).format(refusal=found.refusal),
                    Tone.ERROR,
                )
            )
            return
        from desktop.app.compatible_runtime import CompatibleRuntimeDialog

        def installed(result: UpdateResult) -> None:
            session.state.set_banner(None)
            session.state.add_notice(
                translate("MainWindow", "Runtime {version} is installed; the session starts with it.").format(
                    version=result.version
                )
            )
            if self.workbench is not None and self.workbench.current is session:
                self.workbench.warm_up()

        dialog = CompatibleRuntimeDialog(found, self.updater, installed, self)
        keep_laid_out(dialog)  # its status line wraps as the download goes on
        self.compatible_dialog = dialog
        self._keep(dialog)
        dialog.open()

    def review_changes(self) -> None:
        if self.workbench is not None:
            self.workbench.review_changes(self._show_preview, affects=[self.review_action])

    def _show_preview(self, session: ConversationSession, preview: dict[str, Any]) -> None:
        from desktop.patch.dialog import PatchPreviewDialog

        if self.preview_dialog is not None:
            self.preview_dialog.close()
        root = Path(session.folder) if session.folder else None
        dialog = PatchPreviewDialog(
            preview, root, self, revert=lambda request: self._revert(session, dialog, request)
        )
        keep_laid_out(dialog)  # its diff and file list never squeezed below what they need
        self.preview_dialog = dialog
        dialog.show()

    def _revert(
        self, session: ConversationSession, dialog: PatchPreviewDialog, request: RevertRequest
    ) -> None:
        """A confirmed revert from the preview; the preview then shows the files as they are now."""
        if self.workbench is None:
            return
        runner = self.workbench.runner

        def done(result: dict[str, Any]) -> None:
            files = reverted_summary(result, Path(session.folder) if session.folder else None)
            told = translate("PatchPreview", "Reverted: {files}.").format(files=", ".join(files))

            def refreshed(preview: dict[str, Any]) -> None:
                dialog.set_preview(preview)
                dialog.revert_finished(told)

            runner.run(
                QT_TRANSLATE_NOOP("Errors", "show the changes"),
                session.patch_preview(),
                on_done=refreshed,
                on_failed=lambda _exc: dialog.revert_finished(told),
                context=session,
            )

        runner.run(
            QT_TRANSLATE_NOOP("Errors", "revert the changes"),
            session.revert_changes(request),
            on_done=done,
            on_failed=lambda exc: dialog.revert_finished(
                describe_failure(QT_TRANSLATE_NOOP("Errors", "revert the changes"), exc).message
            ),
            context=session,
        )

    def open_settings(self) -> None:
        if self.settings_opener is not None:
            self.settings_opener()

    def open_logs(self) -> None:
        self._log_dir.mkdir(parents=True, exist_ok=True)
        if self._open_url(QUrl.fromLocalFile(str(self._log_dir))):
            return
        from desktop.app.folder_message import FolderPathDialog

        logger.info("no file manager opened %s", self._log_dir)
        dialog = FolderPathDialog(self._log_dir, self)
        self.logs_dialog = dialog
        self._keep(dialog)
        dialog.open()

    def show_about(self) -> None:
        box = QMessageBox(self)
        box.setWindowTitle(translate("MainWindow", "About Cowork"))
        box.setTextFormat(box.textFormat().RichText)
        about = self._about() if callable(self._about) else self._about
        text = about.text()
        if self.updates_off_reason is not None:
            text += f"<p>{html.escape(self._updates_off_text())}</p>"
        box.setText(text)
        box.setStandardButtons(QMessageBox.StandardButton.Ok)
        self._keep(box)
        box.open()

    def _keep(self, dialog: QWidget) -> None:
        self._dialogs = [d for d in self._dialogs if d.isVisible()]
        self._dialogs.append(dialog)

    def _notice_action(self, action: str) -> None:
        if action == "review_changes":
            self.review_changes()

    def _typing(self) -> None:
        if self.workbench is not None:
            self.workbench.warm_up()

    def _dismiss_banner(self) -> None:
        session = self._current()
        if session is not None and session.state.banner is not None:
            session.state.set_banner(None)
        else:
            self._app_banner = None
        self._refresh_view()

    # ------------------------------------------------------------------ following the workbench

    def _sidebar_changed(self) -> None:
        assert self.workbench is not None
        session = self.workbench.current
        self.sidebar.show_sidebar(self.workbench.sidebar, self.workbench.key_of(session) if session else None)
        if session is not None:
            self.title.setText(self._title_of(session))  # a rename, or the first prompt's title

    def _current_changed(self) -> None:
        session = self._current()
        if self.workbench is not None:
            self.notifier.watch(self.workbench.sessions)  # a new or reopened conversation is made current
        if self._observed is not None:
            self._observed.state.unsubscribe(self)
        self._observed = session
        if session is not None:
            session.state.subscribe(self)
        self.view.show_state(session.state if session else None, session.folder if session else None)
        self.checklist.show_state(session.state.checklist if session else None)
        if self.workbench is not None:
            self.sidebar.select(self.workbench.key_of(session) if session else None)
        self.composer.set_folder(session.folder if session else None)
        self._refresh_view()
        self.composer.edit.setFocus()

    # StateObserver of the shown conversation: the strip, the banner, the controls.
    def item_added(self, item: Item) -> None:
        pass

    def item_changed(self, item: Item) -> None:
        pass

    def items_reset(self) -> None:
        pass

    def status_changed(self) -> None:
        self._refresh_view()

    def banner_changed(self) -> None:
        self._refresh_view()

    def _refresh_view(self) -> None:
        session = self._current()
        if session is None:
            self.title.setText(
                "Cowork" if self.workbench is None else translate("MainWindow", "No conversation open")
            )
            self.folder.setText("")
            self.status.show_status(None)
            self.header.show_session(None)
            self.banner.show_banner(self._app_banner)
            self.view.hide()
            self.welcome.show()
        else:
            self.welcome.hide()
            self.view.show()
            self.title.setText(self._title_of(session))
            self.folder.setText(session.folder or translate("MainWindow", "General chat"))
            self.folder.setToolTip(
                session.folder or translate("MainWindow", "A conversation without a project folder")
            )
            self.status.show_status(session.state.status)
            self.header.show_session(session)
            self.banner.show_banner(session.state.banner or self._app_banner)
        self.composer.edit.setEnabled(self.workbench is not None and not self._stopping)
        if self.runner is not None:
            self.runner.refresh()
        else:
            for control in (
                self.composer.send_button,
                self.composer.stop_button,
                self.send_action,
                self.stop_action,
                self.review_action,
                self.edit_last_action,
                self.retry_action,
            ):
                control.setEnabled(False)

    def _title_of(self, session: ConversationSession) -> str:
        workbench = self.workbench
        if workbench is not None:
            key = workbench.key_of(session)
            summary = workbench.sidebar.find(key) if key else None
            if summary is not None:
                return summary.title
        return translate("MainWindow", "New conversation")

    # ------------------------------------------------------------------ closing

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._shut_down:
            event.accept()
            return
        if self._stopping:
            event.ignore()  # already on its way out; the banner says what it waits for
            return
        if self.workbench is not None and self.workbench.running_tasks():
            event.ignore()
            self._ask_before_closing()
            return
        self._close_dialogs()
        self.closing.emit()
        event.accept()

    def shut_down(self) -> None:
        """The app has shut everything down: the window goes (it stayed while a task was stopped)."""
        self._shut_down = True
        self.close()

    def _ask_before_closing(self) -> None:
        if self.close_question is not None and self.close_question.isVisible():
            self.close_question.raise_()
            return
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(translate("MainWindow", "Quit Cowork"))
        box.setText(translate("MainWindow", "A task is still running. Stop it and quit?"))
        box.setInformativeText(
            translate(
                "MainWindow",
                "Cowork cancels the task and waits for the step in progress to end — a command that is"
                " running is allowed to finish — then shuts everything down. The conversation stays in"
                " the sidebar.",
            )
        )
        stop = box.addButton(
            translate("MainWindow", "Stop the task and quit"), QMessageBox.ButtonRole.AcceptRole
        )
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)
        stop.clicked.connect(self._stop_and_quit)
        self.close_question = box
        self.stop_and_quit_button = stop
        box.open()

    def _stop_and_quit(self) -> None:
        self._stopping = True
        self._close_dialogs()
        self.show_problem(
            translate(
                "MainWindow",
                "Stopping the running task before Cowork quits: the step in progress ends first (a running"
                " command is allowed to finish), then everything shuts down.",
            ),
            tone=Tone.INFO,
        )
        if self.workbench is not None and self.workbench.current is not None:
            self.workbench.current.state.set_banner(None)  # the window's banner is the one to read
        self.composer.edit.setEnabled(False)
        self.closing.emit()

    def _close_dialogs(self) -> None:
        for dialog in [*self._dialogs, self.approval_dialog, self.preview_dialog]:
            if dialog is not None:
                dialog.close()
