"""Where the runtime keeps its files on this machine, and which session IDs may name them.

One data directory holds everything (``COWORK_RUNTIME_DATA_DIR``, else the platform's user data
directory for Cowork, ``agent-runtime`` inside it): ``checkpoints/<sessionId>.json`` (seed 000 §9.4),
``logs/<sessionId>.events.jsonl`` (seed 000 §12, Phase 1–2 local event log), ``uploads/``, the
artifacts and histories waiting to reach the Workspace Service (:mod:`agent_runtime.agent_host.uploads`),
and ``events/``, the audit and telemetry envelopes waiting for their services.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import platformdirs

__all__ = [
    "DATA_DIR_ENV",
    "MAX_SESSION_ID_LENGTH",
    "checkpoints_dir",
    "event_log_path",
    "events_dir",
    "runtime_data_dir",
    "safe_session_id",
    "uploads_dir",
]

DATA_DIR_ENV = "COWORK_RUNTIME_DATA_DIR"
MAX_SESSION_ID_LENGTH = 128

# Letters, digits, "_", "-" and inner dots: never a separator, never hidden (a leading dot is how the
# store's temp files are told apart), never ending in a dot or space (Windows strips those).
_SAFE_ID = re.compile(r"[A-Za-z0-9_-](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?")
# Names Windows maps to devices whatever their extension ("NUL.json" is the null device).
_WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)


def safe_session_id(session_id: str) -> str:
    """``session_id`` unchanged if it can be a file name on every platform; ``ValueError`` if not.

    Session IDs come from the Session Service and from the desktop: a crafted one must never make the
    store read, write or delete a file outside its directory.
    """
    if not isinstance(session_id, str):
        raise ValueError("a session ID must be a string")
    if not 0 < len(session_id) <= MAX_SESSION_ID_LENGTH:
        raise ValueError(f"a session ID must be 1 to {MAX_SESSION_ID_LENGTH} characters long")
    if _SAFE_ID.fullmatch(session_id) is None or ".." in session_id:
        raise ValueError(
            "a session ID may hold only letters, digits, '_', '-' and single inner dots: "
            f"{session_id[:40]!r} cannot name a file"
        )
    if session_id.split(".", 1)[0].lower() in _WINDOWS_DEVICES:
        raise ValueError(f"{session_id!r} is a reserved device name on Windows")
    return session_id


def runtime_data_dir(environ: Mapping[str, str]) -> Path:
    """The runtime's data directory: ``COWORK_RUNTIME_DATA_DIR`` if set and not empty, else
    ``<user data dir>/Cowork/agent-runtime`` as platformdirs spells it for this platform."""
    configured = environ.get(DATA_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser().absolute()
    return Path(platformdirs.user_data_dir("Cowork", appauthor=False)) / "agent-runtime"


def checkpoints_dir(data_dir: Path) -> Path:
    return data_dir / "checkpoints"


def uploads_dir(data_dir: Path) -> Path:
    return data_dir / "uploads"


def events_dir(data_dir: Path) -> Path:
    """The audit and telemetry envelopes waiting for their services (:mod:`agent_runtime.agent_host.
    observability.spool`)."""
    return data_dir / "events"


def event_log_path(data_dir: Path, session_id: str) -> Path:
    """``<data dir>/logs/<sessionId>.events.jsonl``, the session's local event log."""
    return data_dir / "logs" / f"{safe_session_id(session_id)}.events.jsonl"
