"""A process that writes checkpoints in a tight loop until it is killed (the atomicity test's victim).

``python -m tests.agent_runtime.agent_host.state.writer_child DIR`` prints ``ready`` once, then writes
checkpoint 0, 1, 2, … forever. Thread lengths cycle so consecutive files differ in size; the messages
are the same objects each time, so writing (not encoding) dominates and the temp file exists for most
of each iteration.
"""

from __future__ import annotations

import sys
from pathlib import Path

from agent_runtime.agent_host.state import CheckpointStore
from contracts.checkpoint import Checkpoint
from tests.agent_runtime.agent_host.state.samples import sample_checkpoint

LENGTHS = (600, 450, 520)
BASE = sample_checkpoint("sess_kill", messages=max(LENGTHS), step=1)


def variant(index: int) -> Checkpoint:
    """The checkpoint of write number ``index``."""
    return BASE.model_copy(
        update={
            "thread": BASE.thread[: LENGTHS[index % len(LENGTHS)]],
            "session_tokens_used": index,
            "step_cursor": f"step_{index}",
        }
    )


def main(directory: str) -> None:
    store = CheckpointStore(Path(directory))
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    index = 0
    while True:
        store.write(variant(index))
        index += 1


if __name__ == "__main__":
    main(sys.argv[1])
