"""Cowork's backend services: Session, Policy, Workspace, Approval, Audit and Telemetry (seed 001 §1).

Each service is a package with ``service.py`` (logic), ``repository.py`` (its storage interface) and
``api.py`` (its FastAPI router); services never import one another and reach each other only through
small interfaces (``ports.py``) that :mod:`backend.apps` wires, in process or over HTTP. Storage has three
implementations of every repository — :mod:`backend.storage.memory`, :mod:`backend.storage.local`
(SQLite + files, the desktop's embedded default) and :mod:`backend.storage.aws` (DynamoDB + S3).
``cowork-backend`` (:mod:`backend.cli`) serves them and runs the maintenance commands.
"""

import sys

# httpx imports its command-line client when click, rich and pygments happen to be installed (~30 ms of
# every start, and the embedded backend's start is on the way to a user's first task); the backend
# never runs it. A None entry makes that import fail, and httpx falls back as it does when they are
# missing — as the runtime does (agent_runtime/main.py).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
