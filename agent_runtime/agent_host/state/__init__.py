"""The Local State Store: crash-recovery checkpoints on this machine (seed 000 §9).

``CheckpointStore.from_environment(os.environ)`` finds the directory; ``write`` after every step,
``load`` on restart, ``delete`` on clean session end. ``location`` also names the event log's path.
"""

from __future__ import annotations

from agent_runtime.agent_host.state.errors import CheckpointCorrupt, CheckpointError
from agent_runtime.agent_host.state.location import (
    DATA_DIR_ENV,
    MAX_SESSION_ID_LENGTH,
    checkpoints_dir,
    event_log_path,
    events_dir,
    runtime_data_dir,
    safe_session_id,
    uploads_dir,
)
from agent_runtime.agent_host.state.serialize import CheckpointEncoder, serialize_checkpoint
from agent_runtime.agent_host.state.store import MAX_CHECKPOINT_BYTES, CheckpointStore

__all__ = [
    "DATA_DIR_ENV",
    "MAX_CHECKPOINT_BYTES",
    "MAX_SESSION_ID_LENGTH",
    "CheckpointCorrupt",
    "CheckpointEncoder",
    "CheckpointError",
    "CheckpointStore",
    "checkpoints_dir",
    "event_log_path",
    "events_dir",
    "runtime_data_dir",
    "safe_session_id",
    "serialize_checkpoint",
    "uploads_dir",
]
