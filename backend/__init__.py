"""Cowork's backend services: Session, Policy, Workspace, Approval, Audit and Telemetry (seed 001 §1).

Each service is a package with ``service.py`` (logic), ``repository.py`` (its storage interface) and
``api.py`` (its FastAPI router); services never import one another and reach each other only through
small interfaces (``ports.py``) that :mod:`backend.apps` wires, in process or over HTTP. Storage has three
implementations of every repository — :mod:`backend.storage.memory`, :mod:`backend.storage.local`
(SQLite + files, the desktop's embedded default) and :mod:`backend.storage.aws` (DynamoDB + S3).
``cowork-backend`` (:mod:`backend.cli`) serves them and runs the maintenance commands.
"""
