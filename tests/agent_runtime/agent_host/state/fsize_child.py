"""Runs a checkpoint write under a file-size limit (RLIMIT_FSIZE), the kernel's own "disk full":
it works even for root, whom read-only permissions do not stop.

``python -m tests.agent_runtime.agent_host.state.fsize_child DIR LIMIT`` writes a small checkpoint,
lowers the limit to LIMIT bytes, tries a large one and prints the outcome as one JSON line.
"""

from __future__ import annotations

import json
import resource
import signal
import sys
from pathlib import Path

from agent_runtime.agent_host.state import CheckpointStore
from tests.agent_runtime.agent_host.state.samples import sample_checkpoint


def main(directory: str, limit: int) -> None:
    store = CheckpointStore(Path(directory))
    store.write(sample_checkpoint("sess_full", messages=4, step=1))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # get EFBIG from write() instead of being killed
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    try:
        store.write(sample_checkpoint("sess_full", messages=200, step=2))
    except OSError as exc:
        print(json.dumps({"raised": "OSError", "errno": exc.errno}))
    else:
        print(json.dumps({"raised": None}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
