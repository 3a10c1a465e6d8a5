"""Operating-system notifications while Cowork's window is not active: a task finished or failed, an
approval or an MCP server's question waits (what and when: :mod:`desktop.conversation.notify`).

On Linux and the BSDs through the freedesktop notification service (``org.freedesktop.Notifications``
on the session D-Bus, :class:`DBusBackend`): desktops such as GNOME have no tray to show a tray
icon's message, but all run that service. Elsewhere, and when the service does not answer, through
``QSystemTrayIcon.showMessage`` (:class:`TrayBackend`): the Notification Center on macOS, toasts on
Windows — attributed to the app by its AppUserModelID, set once at start (:func:`set_windows_app_id`).
Where the system has neither, nothing is shown and the conversation still has everything. The File
menu's "Notify When in the Background" turns them off (``ui.notifications`` in the settings file).
"""

from __future__ import annotations

import logging
import sys
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import Q_ARG, QMetaObject, Qt
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QApplication, QSystemTrayIcon, QWidget

from desktop.conversation.notify import Notification, NotificationKind, notification_for
from desktop.i18n import translate
from desktop.settings.store import SettingsError, SettingsStore

if TYPE_CHECKING:
    from PySide6.QtDBus import QDBusConnection, QDBusInterface

    from desktop.conversation.session import ConversationSession

__all__ = [
    "APP_USER_MODEL_ID",
    "DBusBackend",
    "DesktopNotifier",
    "FirstThatShows",
    "NotificationBackend",
    "TrayBackend",
    "set_windows_app_id",
    "system_backend",
]

logger = logging.getLogger(__name__)

APP_USER_MODEL_ID = "Cowork.Desktop"
"""How Windows knows the app: its toasts, taskbar button and pinned shortcut are grouped under it."""


class NotificationBackend(Protocol):
    def show(self, notification: Notification) -> bool:
        """Hand ``notification`` to the system; whether it took it."""
        ...


class TrayBackend:
    """``QSystemTrayIcon.showMessage``; the icon is created (hidden until the first message) when the
    system has a tray or a notification service to show it through."""

    def __init__(self, icon: QIcon | None = None) -> None:
        self._icon = icon if icon is not None else QApplication.windowIcon()
        self._tray: QSystemTrayIcon | None = None

    @staticmethod
    def available() -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable() and QSystemTrayIcon.supportsMessages()

    def show(self, notification: Notification) -> bool:
        if not self.available():
            return False
        if self._tray is None:
            self._tray = QSystemTrayIcon(self._icon)
            self._tray.setToolTip("Cowork")
        self._tray.show()
        warning = notification.kind is NotificationKind.TASK_FAILED
        icon = QSystemTrayIcon.MessageIcon.Warning if warning else QSystemTrayIcon.MessageIcon.Information
        self._tray.showMessage(notification.title, notification.body, icon, 10_000)
        return True


class DBusBackend:
    """``Notify`` of ``org.freedesktop.Notifications`` (the Desktop Notifications Specification) on the
    session bus, or on ``connection``. The call waits for the service's answer, at most
    ``timeout_ms``: a notification service that hangs must not hold the window for long."""

    SERVICE = "org.freedesktop.Notifications"
    PATH = "/org/freedesktop/Notifications"

    def __init__(self, connection: QDBusConnection | None = None, *, timeout_ms: int = 2000) -> None:
        self._bus = connection
        self._timeout_ms = timeout_ms
        self._service: QDBusInterface | None = None

    def show(self, notification: Notification) -> bool:
        try:
            # Imported when first needed: only Linux and the BSDs use it, and a build without QtDBus
            # still shows notifications through the tray.
            from PySide6.QtDBus import QDBusConnection, QDBusInterface
        except ImportError:
            return False
        if self._bus is None:
            self._bus = QDBusConnection.sessionBus()
        if not self._bus.isConnected():
            return False
        if self._service is None or not self._service.isValid():
            # Introspected once: the typed method it describes sends replaces_id as uint32 and the
            # actions as a string array, as the specification's signature (susssasa{sv}i) requires.
            self._service = QDBusInterface(self.SERVICE, self.PATH, self.SERVICE, self._bus)
            self._service.setTimeout(self._timeout_ms)
            if not self._service.isValid():
                logger.info("no notification service on D-Bus: %s", self._service.lastError().message())
                self._service = None
                return False
        sent = QMetaObject.invokeMethod(
            self._service,
            "Notify",
            Qt.ConnectionType.DirectConnection,
            Q_ARG(str, "Cowork"),
            Q_ARG("uint", 0),
            Q_ARG(str, "cowork"),
            Q_ARG(str, notification.title),
            Q_ARG(str, notification.body),
            Q_ARG("QStringList", []),
            Q_ARG("QVariantMap", {}),
            Q_ARG(int, -1),
        )
        error = self._service.lastError()
        if not sent or error.isValid():
            logger.info("the notification service refused: %s", error.message())
            return False
        return True


class FirstThatShows:
    """Each backend in turn until one shows the notification."""

    def __init__(self, *backends: NotificationBackend) -> None:
        self._backends = backends

    def show(self, notification: Notification) -> bool:
        return any(backend.show(notification) for backend in self._backends)


def system_backend(platform: str = sys.platform) -> NotificationBackend:
    """D-Bus first on Linux and the BSDs, the tray everywhere (and as the fallback)."""
    if platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return FirstThatShows(DBusBackend(), TrayBackend())
    return TrayBackend()


def set_windows_app_id(app_id: str = APP_USER_MODEL_ID, *, platform: str = sys.platform) -> bool:
    """Windows: name this process's app (``SetCurrentProcessExplicitAppUserModelID``) so its toasts
    show as Cowork's, not Python's. Elsewhere nothing to do (False); never raises."""
    if platform != "win32":
        return False
    try:
        import ctypes

        shell32 = ctypes.windll.shell32  # type: ignore[attr-defined,unused-ignore]
        return int(shell32.SetCurrentProcessExplicitAppUserModelID(ctypes.c_wchar_p(app_id))) == 0
    except (AttributeError, OSError) as exc:
        logger.warning("could not set the Windows AppUserModelID: %s", exc)
        return False


class DesktopNotifier:
    """Watches the open conversations and notifies when :func:`notification_for` says so.

    ``window`` is Cowork's main window (it owns the menu action); notifications are shown only while
    no Cowork window is active. ``backend`` shows them (default: the tray); ``store`` keeps the
    on/off choice."""

    def __init__(
        self,
        window: QWidget,
        *,
        backend: NotificationBackend | None = None,
        store: Callable[[], SettingsStore] = SettingsStore,
    ) -> None:
        self._window = window
        self.backend: NotificationBackend = backend if backend is not None else system_backend()
        """What shows them (replaceable: a test's recorder)."""
        self._store = store
        self.user_is_here: Callable[[], bool] = _cowork_in_front
        """Whether one of Cowork's windows (the main window or a dialog of it) is the active one: the
        user is looking at Cowork and needs no notification."""
        self._watched: weakref.WeakSet[ConversationSession] = weakref.WeakSet()
        self.shown: list[Notification] = []
        """What was handed to the system, newest last (bounded)."""
        self.toggle_action = QAction(translate("Notifications", "&Notify When in the Background"), window)
        self.toggle_action.setCheckable(True)
        self.toggle_action.setToolTip(
            translate(
                "Notifications",
                "Tell me through the system when a task finishes or needs me while Cowork is not in front",
            )
        )
        self.toggle_action.setChecked(self._enabled())
        self.toggle_action.toggled.connect(self._save)

    def watch(self, sessions: Iterable[ConversationSession]) -> None:
        """Observe each of ``sessions`` not observed yet (call whenever the open conversations change)."""
        for session in sessions:
            if session not in self._watched:
                self._watched.add(session)
                session.event_observers.append(self.observe)

    def observe(self, session: ConversationSession, event: Mapping[str, Any]) -> None:
        notification = notification_for(
            event,
            conversation=_name(session),
            window_active=self.user_is_here(),
            enabled=self.toggle_action.isChecked(),
        )
        if notification is None:
            return
        if self.backend.show(notification):
            self.shown = [*self.shown[-49:], notification]
        else:
            logger.info("no notification service to show %r", notification.title)

    def _enabled(self) -> bool:
        return self._store().notifications()

    def _save(self, enabled: bool) -> None:
        try:
            self._store().save_notifications(enabled)
        except (SettingsError, OSError) as exc:
            logger.warning("could not keep the notification setting: %s", exc)


def _cowork_in_front() -> bool:
    return QApplication.activeWindow() is not None


def _name(session: ConversationSession) -> str:
    if session.folder:
        return session.folder.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or session.folder
    return translate("Notifications", "General chat")
