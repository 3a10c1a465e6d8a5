"""A stand-in for the desktop's notification service: ``org.freedesktop.Notifications`` on the D-Bus
at argv[1], with ``Notify`` as the Desktop Notifications Specification types it; each call is printed
as one JSON line. Prints ``READY`` once the name is owned."""

from __future__ import annotations

import json
import sys

from PySide6.QtCore import ClassInfo, QCoreApplication, QObject, Slot
from PySide6.QtDBus import QDBusConnection


@ClassInfo({"D-Bus Interface": "org.freedesktop.Notifications"})
class Notifications(QObject):
    @Slot(str, "uint", str, str, str, "QStringList", "QVariantMap", int, result="uint")
    def Notify(
        self,
        app_name: str,
        replaces_id: int,
        icon: str,
        summary: str,
        body: str,
        actions: list[str],
        hints: dict[str, object],
        timeout: int,
    ) -> int:
        called = {"appName": app_name, "replacesId": replaces_id, "icon": icon, "summary": summary}
        called |= {"body": body, "actions": actions, "timeout": timeout}
        print(json.dumps(called), flush=True)
        return 1


def main() -> None:
    app = QCoreApplication([])
    bus = QDBusConnection.connectToBus(sys.argv[1], "notification-service")
    service = Notifications()
    bus.registerObject(
        "/org/freedesktop/Notifications", service, QDBusConnection.RegisterOption.ExportAllSlots
    )
    if not bus.registerService("org.freedesktop.Notifications"):
        sys.exit("the name is taken")
    print("READY", flush=True)
    app.exec()


if __name__ == "__main__":
    main()
