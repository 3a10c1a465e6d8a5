"""``cowork`` with no subcommand: the desktop app.

The window is shown first, before anything slow: then the backend starts (the embedded one unless
one is configured), the first-run dialog asks for a model if nothing is configured, and the window
is handed its :class:`Workbench`. Everything runs on the Qt thread under qasync's asyncio loop; every
wait is asynchronous, so the window never freezes. Closing the window shuts every runtime down
(``Shutdown``), stops the embedded backend and the demo model, and quits; while a task runs the window
first asks, and stays open, saying so, until the stopped task's current step has ended.

Runtime updates (issue 8, ``desktop.updater``): when updates are configured (``update.json`` beside
the installed app, or ``COWORK_UPDATE_MANIFEST_URL``), a :class:`RuntimeUpdater` checks shortly after
launch and then on its schedule, its progress shows in the status bar, and Help → Check for Runtime
Updates starts a check. In the installed app every runtime started from an installed update is
reported to the crash-loop guard, which rolls a crash-looping version back.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import logging
import logging.handlers
import os
import platform
import signal
import socket
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import qasync
from platformdirs import user_data_dir, user_log_dir
from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QSocketNotifier, Qt, qVersion
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from contracts.logs import JsonLinesFormatter
from desktop.app.language import AppLanguage
from desktop.app.main_window import AboutInfo, MainWindow
from desktop.app.single_instance import InstanceServer, hand_over, instance_name
from desktop.app.theme import AppTheme, follow_system_theme
from desktop.approval.dialog import ApprovalDialog
from desktop.approval.queue import ApprovalQueue
from desktop.audit import DesktopAudit, SessionRef
from desktop.conversation.banners import BannerAction
from desktop.conversation.controller import CallRunner
from desktop.conversation.history_client import HistoryClient
from desktop.conversation.items import Tone
from desktop.conversation.journal import SessionJournal
from desktop.conversation.session import TASK_STOP_GRACE_S, ConversationSession, Identity, TaskDefaults
from desktop.conversation.workbench import Workbench
from desktop.i18n import QT_TRANSLATE_NOOP, translate
from desktop.launch.errors import LaunchError
from desktop.launch.runtime import RUNTIME_EXECUTABLE_VARIABLE, runtime_command
from desktop.mcp.elicitation_dialog import ElicitationDialog
from desktop.mcp.elicitations import ElicitationQueue
from desktop.mcp.servers import McpServersSource
from desktop.mcp.sign_in_view import open_in_browser
from desktop.settings.dialog import FirstRunDialog, SettingsDialog
from desktop.settings.presets import accepts_images
from desktop.settings.rules import ProjectRules
from desktop.settings.store import AppSettings, SettingsError, SettingsStore
from desktop.supervision.runtime import QtRuntimeLauncher
from desktop.supervision.services import GatewayChoice, Services

if TYPE_CHECKING:  # the updater's modules are loaded only when the app checks for updates
    from contracts.release import RootKeySet
    from desktop.updater.crashloop import CrashLoopWatch
    from desktop.updater.install import Rollback
    from desktop.updater.qt import RuntimeUpdater

__all__ = [
    "DesktopApp",
    "OpenRequest",
    "UpdaterSetup",
    "active_runtime_version",
    "app_version",
    "log_dir",
    "run_app",
    "runtime_version",
]

logger = logging.getLogger(__name__)

CLOSE_TIMEOUT_S = TASK_STOP_GRACE_S + 30.0
"""Every runtime's ``Shutdown`` (a running task's step allowed to end) and its exit."""
WINDOW_ICON = Path(__file__).with_name("cowork.png")
"""Package data, frozen beside this module too (``installer/cowork.spec``)."""
UPDATER_STOP_TIMEOUT_S = 10.0

_SOURCES = {"installed": "installed update", "previous": "previous update", "bundled": "bundled with the app"}


def app_version() -> str:
    try:
        return importlib.metadata.version("cowork")
    except importlib.metadata.PackageNotFoundError:
        return "0.1.0"


def active_runtime_version(environ: Mapping[str, str]) -> str:
    """The version of the runtime new conversations start (the updater's active one when installed),
    as the Session Service's compatibility check reads it."""
    if getattr(sys, "frozen", False) and not environ.get(RUNTIME_EXECUTABLE_VARIABLE, "").strip():
        try:
            from desktop.updater.active import active_runtime

            return active_runtime().version
        except Exception:  # the launch itself reports a broken installation; the check falls back
            logger.warning("the active runtime's version is unknown; sending the app's", exc_info=True)
    return app_version()


def runtime_version(environ: Mapping[str, str]) -> str:
    """Which agent runtime new conversations start, for About."""
    executable = environ.get(RUNTIME_EXECUTABLE_VARIABLE, "").strip()
    if executable:
        return f"{executable} (set by {RUNTIME_EXECUTABLE_VARIABLE})"
    if getattr(sys, "frozen", False):
        try:
            from desktop.updater.active import active_runtime

            active = active_runtime()
            return f"{active.version} ({_SOURCES.get(active.source, active.source)})"
        except Exception as exc:  # About must open whatever the installation's state
            return f"unavailable: {exc}"
    return f"{app_version()} (from source)"


def is_frozen() -> bool:
    """The installed app (PyInstaller sets ``sys.frozen``), as opposed to a run from source."""
    return bool(getattr(sys, "frozen", False))


@dataclass(frozen=True)
class UpdaterSetup:
    """How the app makes its runtime updater. Only tests change it — to trust their own release
    site's root keys and to check at once — which is why it is an argument and never a setting or an
    environment variable: whoever could set it could choose which programs count as the runtime."""

    root_keys: RootKeySet | None = None
    """None: the root keys pinned in the app (``desktop.updater.keys``)."""
    first_delay_seconds: float = 15.0
    interval_hours: float = 6.0


@dataclass(frozen=True)
class OpenRequest:
    """``cowork open``: a new conversation in ``folder`` once the window is up, started on ``task``."""

    folder: str
    task: str | None = None


def log_dir() -> Path:
    return Path(user_log_dir("Cowork", appauthor=False))


def data_dir() -> Path:
    return Path(user_data_dir("Cowork", appauthor=False))


def journal_path() -> Path:
    """Where the window notes its open sessions (:mod:`desktop.conversation.journal`)."""
    return data_dir() / "desktop" / "open-sessions.json"


def _configure_logging(directory: Path) -> None:
    handlers: list[logging.Handler] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            directory / "desktop.log", maxBytes=2 * 1024 * 1024, backupCount=3, encoding="utf-8"
        )
        handler.setFormatter(JsonLinesFormatter())
        handlers.append(handler)
    except OSError as exc:
        print(f"cowork: cannot write logs to {directory}: {exc}", file=sys.stderr)
    level = os.environ.get("COWORK_LOG_LEVEL", "INFO").upper()
    logging.basicConfig(level=level, handlers=handlers or [logging.StreamHandler(sys.stderr)], force=True)


def run_app(
    argv: Sequence[str], *, environ: Mapping[str, str] | None = None, opening: OpenRequest | None = None
) -> int:
    """Run the desktop app until its window is closed; the exit status."""
    env = dict(os.environ if environ is None else environ)
    logs = log_dir()
    _configure_logging(logs)
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication([sys.argv[0] if sys.argv else "cowork", *argv])
    app.setApplicationName("Cowork")
    app.setApplicationDisplayName("Cowork")
    app.setApplicationVersion(app_version())
    app.setWindowIcon(QIcon(str(WINDOW_ICON)))
    # One app per user and data folder: a second start hands its folder over and ends.
    instance = instance_name(data_dir())
    if hand_over(instance, opening.folder if opening else None, opening.task if opening else None):
        logger.info("handed the start over to the running app")
        print(
            translate("Startup", "Cowork is already running: its window now shows {what}.").format(
                what=opening.folder if opening else translate("Startup", "itself")
            ),
            file=sys.stderr,
        )
        return 0
    server = InstanceServer(instance)
    server.listen()
    # Before any window is built: text is translated when a widget is made.
    language = AppLanguage(app)
    language.apply(SettingsStore().language())
    theme = follow_system_theme(app, SettingsStore().theme())
    desktop = DesktopApp(env, logs, opening=opening, theme=theme)
    server.requested.connect(desktop.open_requested)
    try:
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            return runner.run(desktop.run())
    finally:
        server.close()


class DesktopApp:
    """One run of the app: the window, then the services and the workbench, then the shutdown."""

    def __init__(
        self,
        environ: Mapping[str, str],
        logs: Path,
        *,
        updater_setup: UpdaterSetup | None = None,
        opening: OpenRequest | None = None,
        theme: AppTheme | None = None,
    ) -> None:
        self.environ = environ
        self.logs = logs
        self.updater_setup = updater_setup or UpdaterSetup()
        self.opening = opening
        self.theme = theme
        """The app's appearance, switched by Settings at once (None: Settings offers no choice)."""
        self.window: MainWindow | None = None
        self.updater: RuntimeUpdater | None = None
        self._backend_url = ""
        self._workbench: Workbench | None = None
        self.audit = DesktopAudit()
        """What only the desktop sees, for the Audit Service (approvals shown and answered, updates)."""

    async def run(self) -> int:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.setQuitOnLastWindowClosed(False)  # the loop ends when the shutdown is done, not before
        qt = f"{qVersion()} (PySide6 {pyside_version})"
        window = MainWindow(
            # Asked each time About opens: an update or a rollback changes the runtime new
            # conversations start.
            about=lambda: AboutInfo(
                app_version=app_version(),
                runtime_version=runtime_version(self.environ),
                qt_version=qt,
                python_version=platform.python_version(),
            ),
            log_dir=self.logs,
        )
        self.window = window
        closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def closing() -> None:
            if self.updater is not None:
                self.updater.stop(timeout=0)  # no new round; the one in flight is cancelled
            if not closed.done():
                closed.set_result(None)

        window.closing.connect(closing)
        # Before the window shows: from then on the user (or the system) may end the app at any moment.
        restore_signals = _close_on_termination(closing)
        try:
            window.show()
            # Start-up time as users see it, read back by the packaged-app test and benchmark.
            logger.info("main window shown")
            try:
                self.updater = self._start_updater(window)
            except Exception:  # updates are a convenience: the app runs without them
                logger.exception("the runtime updater could not start")
                window.updates_unavailable(
                    translate(
                        "MainWindow", "the updater could not start (the log in {folder} says why)"
                    ).format(folder=self.logs)
                )
            await self._serve(window, closed)
        finally:
            restore_signals()
            if self.updater is not None:
                await self.updater.wait_stopped(UPDATER_STOP_TIMEOUT_S)
            window.shut_down()  # kept open while a stopped task ended; everything is down now
            window.deleteLater()
            await asyncio.to_thread(self.audit.close)  # what is queued, within two seconds
        return 0

    def _start_updater(self, window: MainWindow) -> RuntimeUpdater | None:
        """Check for runtime updates if they are configured; say once in the log why not if not."""
        from desktop.updater.config import UpdatesOff, update_config

        config = update_config(self.environ, frozen=is_frozen())
        if isinstance(config, UpdatesOff):
            (logger.error if config.invalid else logger.info)("no runtime update checks: %s", config.reason)
            window.updates_unavailable(config.reason)
            return None
        from desktop.updater.keys import PINNED_ROOT_KEYS
        from desktop.updater.qt import RuntimeUpdater
        from desktop.updater.service import UpdateService

        setup = self.updater_setup
        service = UpdateService(
            config.manifest_url,
            channel=config.channel,
            root_keys=setup.root_keys if setup.root_keys is not None else PINNED_ROOT_KEYS,
        )
        updater = RuntimeUpdater(
            service,
            interval_hours=setup.interval_hours,
            first_delay_seconds=setup.first_delay_seconds,
            parent=window,
        )
        window.attach_updater(updater)
        updater.finished.connect(self.audit.update_result)
        updater.start()
        logger.info(
            "runtime updates: checking %s (from %s) on the %s channel every %g hours",
            config.manifest_url,
            config.origin,
            config.channel,
            setup.interval_hours,
        )
        return updater

    def _crash_watch(self, window: MainWindow) -> CrashLoopWatch:
        from desktop.updater.crashloop import CrashLoopGuard, CrashLoopWatch
        from desktop.updater.indicator import rollback_note

        def rolled_back(rollback: Rollback) -> None:
            window.show_update_note(rollback_note(rollback))
            self.audit.update_rolled_back(rollback.from_version, rollback.to_version, rollback.reason)

        return CrashLoopWatch(CrashLoopGuard(), on_rollback=rolled_back)

    async def _serve(self, window: MainWindow, closed: asyncio.Future[None]) -> None:
        store = SettingsStore()
        window.settings_opener = lambda: self._open_settings(store)
        window.composer.set_send_key(store.send_key())
        if not store.is_configured() and not self.environ.get("LLM_GATEWAY_ENDPOINT"):
            self._first_run(store)
        try:
            settings = store.load()
        except SettingsError as exc:
            window.show_problem(
                translate("MainWindow", "{problem} Open Settings to fix it.").format(problem=exc),
                BannerAction.SETTINGS,
            )
            settings = AppSettings()
        self._show_model(settings)
        self._backend_url = settings.backend_url

        project_rules = ProjectRules(store)

        def defaults() -> TaskDefaults:
            with contextlib.suppress(SettingsError):
                saved = store.load()
                return TaskDefaults(
                    approval_mode=saved.approval_mode,
                    max_steps=saved.max_steps,
                    rules_for=project_rules.wire_for_project,
                    accepts_images=accepts_images(saved.preset, saved.model),
                )
            return TaskDefaults(rules_for=project_rules.wire_for_project)

        def choice() -> GatewayChoice:
            try:
                return GatewayChoice(demo=store.load().is_demo, settings_file=store.path)
            except SettingsError as exc:
                raise LaunchError(str(exc)) from exc

        runner = CallRunner(window)
        launcher: QtRuntimeLauncher | None = None
        try:
            async with Services.running(
                self.environ,
                backend_url=settings.backend_url,
                backend_token=store.backend_token() if settings.backend_url else None,
                choice=choice,
            ) as services:
                # Only the installed app starts installed runtimes (runtime_command), so only it watches
                # them for crash loops.
                watch = self._crash_watch(window) if is_frozen() else None
                launcher = QtRuntimeLauncher(
                    command=lambda: runtime_command(self.environ),
                    environment=services.runtime_environment,
                    log_dir=self.logs,
                    watch=watch.started if watch is not None else None,
                    parent=window,
                )
                approvals = ApprovalQueue()
                elicitations = ElicitationQueue()
                workbench = Workbench(
                    runner=runner,
                    launcher=launcher,
                    history=HistoryClient(services.backend.url, services.backend.token),
                    identity=Identity(
                        user_id=services.backend.user_id,
                        tenant_id=services.backend.tenant_id,
                        app_version=app_version(),
                        runtime_version=lambda: active_runtime_version(self.environ),
                        os_family={"darwin": "macOS", "win32": "Windows"}.get(sys.platform, "Linux"),
                    ),
                    approvals=approvals,
                    defaults=defaults,
                    journal=SessionJournal(journal_path()),
                    elicitations=elicitations,
                    open_url=open_in_browser,
                )
                dialog = ApprovalDialog(
                    approvals,
                    window,
                    session_label=lambda sid: _label(workbench, sid),
                    save_rules=lambda sid, rules: _save_rules(workbench, project_rules, sid, rules),
                )
                dialog.decided.connect(workbench.approve)
                self._audit_approvals(workbench, dialog, services)
                asking = ElicitationDialog(
                    elicitations, window, session_label=lambda sid: _label(workbench, sid)
                )
                asking.answered.connect(workbench.answer_elicitation)
                window.closing.connect(asking.hide)  # the runtimes shut down; their requests go with them
                window.attach(workbench, dialog)
                self._workbench = workbench
                runner.run(
                    QT_TRANSLATE_NOOP("Errors", "reopen the interrupted conversations"),
                    workbench.restore_interrupted(),
                )
                if self.opening is not None:
                    workbench.new_conversation(self.opening.folder)
                    if self.opening.task:
                        workbench.send(self.opening.task)
                await closed
                await self._close(workbench, runner)
                await self._settle(launcher)
        except LaunchError as exc:
            logger.warning("the app could not start its services: %s", exc)
            window.show_problem(
                translate("MainWindow", "Cowork could not start: {problem}").format(problem=exc),
                BannerAction.SETTINGS,
            )
            await closed
        finally:
            if launcher is not None:
                launcher.kill_all()

    def _audit_approvals(self, workbench: Workbench, dialog: ApprovalDialog, services: Services) -> None:
        """The desktop's audit producer, told of the backend, the open sessions and the approvals."""
        audit = self.audit

        def sessions() -> list[SessionRef]:
            return [
                SessionRef(session.session_id, session.workspace_id, session.feature_flags)
                for session in workbench.sessions
                if session.session_id is not None and session.workspace_id is not None
            ]

        audit.sessions = sessions
        backend = services.backend
        audit.connect(backend.url, backend.token, backend.tenant_id, backend.user_id)
        dialog.on_shown = lambda pending: audit.approval_shown(pending.session_id, pending.request)
        dialog.on_expired = lambda pending: audit.approval_timed_out(pending.session_id, pending.approval_id)
        dialog.decided.connect(audit.approval_decided)
        # An update waits for a session to be named with: any change of the conversations may bring one.
        workbench.sidebar_changed.append(audit.pump)

    async def _close(self, workbench: Workbench, runner: CallRunner) -> None:
        await runner.cancel_all()
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await workbench.close_all()
        except TimeoutError:
            logger.warning("the runtimes did not shut down within %s s; ending them", CLOSE_TIMEOUT_S)

    async def _settle(self, launcher: QtRuntimeLauncher) -> None:
        """Let the crash-loop guard hear how the runtimes just shut down ended (a clean end proves a
        new version)."""
        try:
            async with asyncio.timeout(5):
                await launcher.settled()
        except TimeoutError:
            logger.warning("the runtimes' ends were not all recorded for crash-loop detection")

    def open_requested(self, request: Mapping[str, str | None]) -> None:
        """A second ``cowork`` / ``cowork open DIR`` handed its start over: come to the front and open
        a conversation for the folder (once the services are up, if they are still starting)."""
        folder, task = request.get("folder"), request.get("task")
        window = self.window
        if window is None:  # not shown yet: it opens the folder as the first start's own
            if folder:
                self.opening = OpenRequest(folder=folder, task=task)
            return
        if window.isMinimized():
            window.showNormal()
        window.raise_()
        window.activateWindow()
        if not folder:
            return
        if not Path(folder).is_dir():
            window.show_problem(
                translate("Startup", "{folder} is not a folder: no conversation was opened for it.").format(
                    folder=folder
                )
            )
            return
        workbench = self._workbench
        if workbench is None:
            self.opening = OpenRequest(folder=folder, task=task)  # _serve opens it when the services are up
            return
        workbench.new_conversation(folder)
        if task:
            workbench.send(task)

    def _first_run(self, store: SettingsStore) -> None:
        assert self.window is not None
        dialog = FirstRunDialog(store, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.saved.connect(self._show_model)
        dialog.open()

    def _open_settings(self, store: SettingsStore) -> None:
        assert self.window is not None
        theme = self.theme
        dialog = SettingsDialog(
            store,
            self.window,
            environ=self.environ,
            mcp=self._mcp_source(),
            apply_theme=theme.apply if theme is not None else None,
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        dialog.saved.connect(self._settings_saved)
        # Once everything is saved (the send key last): the composer follows the choice.
        dialog.accepted.connect(lambda: self._send_key_saved(store))
        dialog.open()

    def _mcp_source(self) -> McpServersSource | None:
        """Settings' MCP page lists the servers of the conversation the window shows."""
        workbench = self._workbench
        session = workbench.current if workbench is not None else None
        if workbench is None or session is None:
            return None
        return McpServersSource(
            conversation=_conversation_label(workbench, session),
            servers=session.state.mcp_servers,
            refresh=lambda: workbench.refresh_mcp_servers(session),
        )

    def _send_key_saved(self, store: SettingsStore) -> None:
        if self.window is not None:
            self.window.composer.set_send_key(store.send_key())

    def _show_model(self, settings: AppSettings) -> None:
        """The empty window's second step says which model is set up, if one is."""
        if self.window is None:
            return
        model = self.environ.get("LLM_GATEWAY_MODEL") or settings.model
        endpoint = self.environ.get("LLM_GATEWAY_ENDPOINT") or settings.endpoint
        if settings.is_demo and not self.environ.get("LLM_GATEWAY_ENDPOINT"):
            self.window.welcome.show_model(translate("Welcome", "the offline demo model (not a real LLM)"))
        elif endpoint:
            self.window.welcome.show_model(
                translate("Welcome", "{model} at {endpoint}").format(model=model or "?", endpoint=endpoint)
            )
        else:
            self.window.welcome.show_model(None)

    def _settings_saved(self, settings: AppSettings) -> None:
        self._show_model(settings)
        # The gateway and the task defaults are read at each runtime start and each task (an open
        # conversation restarts its runtime on the new gateway before its next task or resume); the
        # backend every runtime talks to is chosen once, when the app starts.
        if self._workbench is not None:
            self._workbench.settings_changed()
        if self.window is not None and settings.backend_url != self._backend_url:
            self.window.show_problem(
                translate(
                    "MainWindow",
                    "Settings saved. Restart Cowork to switch to the new backend; new conversations use the"
                    " new model settings from their next task.",
                ),
                tone=Tone.INFO,
            )


def _close_on_termination(close: Callable[[], None]) -> Callable[[], None]:
    """SIGTERM (logout, system shutdown, ``kill``) and SIGINT close the app as its window's Close does:
    runtimes get ``Shutdown`` and the embedded backend stops, instead of being left running.

    Python runs a signal handler only once it gets control back, and an idle app waits inside Qt; the
    wakeup socket's notifier wakes Qt so the handler runs at once. Returns what undoes it.
    """
    if sys.platform == "win32":  # no SIGTERM there; a console Ctrl-C is not how a window app ends
        return lambda: None
    loop = asyncio.get_running_loop()
    wake_read, wake_write = socket.socketpair()
    for end in (wake_read, wake_write):
        end.setblocking(False)
    notifier = QSocketNotifier(wake_read.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(lambda: _drain(wake_read))
    previous_fd = signal.set_wakeup_fd(wake_write.fileno())
    previous = {
        number: signal.signal(number, lambda *_: loop.call_soon_threadsafe(close))
        for number in (signal.SIGTERM, signal.SIGINT)
    }

    def restore() -> None:
        for number, handler in previous.items():
            signal.signal(number, handler)
        signal.set_wakeup_fd(previous_fd)
        notifier.setEnabled(False)
        wake_read.close()
        wake_write.close()

    return restore


def _drain(wake: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while wake.recv(512):
            pass


def _save_rules(workbench: Workbench, rules: ProjectRules, session_id: str, suggested: list[Any]) -> str:
    """ "Always allow in this project" from the approval dialog: the rules saved for the conversation's
    project folder, as they read. ``ValueError`` (a message for the user) when there is no project."""
    session = workbench.session_by_id(session_id)
    if session is None or session.folder is None:
        raise ValueError("This conversation has no project folder to save the rule for.")
    saved = rules.add_wire(session.folder, suggested)
    return ", ".join(rule.describe() for rule in saved)


def _label(workbench: Workbench, session_id: str) -> str:
    session = workbench.session_by_id(session_id)
    if session is None:
        return "a conversation"
    return _conversation_label(workbench, session)


def _conversation_label(workbench: Workbench, session: ConversationSession) -> str:
    key = workbench.key_of(session)
    summary = workbench.sidebar.find(key) if key else None
    return summary.title if summary is not None else (session.folder or "General chat")
