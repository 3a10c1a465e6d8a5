"""The Local Approval UI (seed 001 §1, §4.3; seed 000 §10): the queue of requests waiting for the user
(``queue``, Qt-free), what the dialog shows of one (``present``, Qt-free) and the dialog (``dialog``).

Nothing is imported here, so ``desktop.approval.queue`` stays usable without Qt.
"""
