"""``cowork``'s start as a user gets it, for ``bench_desktop``: it prints the wall-clock time at which
the main window was first shown, then closes it (the app then shuts down as usual)."""

from __future__ import annotations

import sys
import time

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QMainWindow


class _FirstShow(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Show and isinstance(watched, QMainWindow):
            print(f"{time.time():.6f}", flush=True)
            QApplication.instance().removeEventFilter(self)  # type: ignore[union-attr]
            QTimer.singleShot(0, watched.close)
        return False


if __name__ == "__main__":
    app = QApplication(sys.argv[:1])
    watcher = _FirstShow()
    app.installEventFilter(watcher)
    from desktop.cli import main

    sys.exit(main([]))
