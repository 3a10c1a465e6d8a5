"""The desktop app: its bootstrap (QApplication and the qasync loop), the main window and its parts.
Widgets only draw; the logic they show lives in :mod:`desktop.conversation`."""

from desktop.app.bootstrap import OpenRequest, run_app

__all__ = ["OpenRequest", "run_app"]
