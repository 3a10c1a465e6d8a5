"""A process killed at any instant leaves the old complete checkpoint or the new one, never a part
(seed 000 §9.3), and the temp file it was writing is never taken for a checkpoint."""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from agent_runtime.agent_host.state import CheckpointStore
from tests.agent_runtime.agent_host.state.subprocesses import start_module
from tests.agent_runtime.agent_host.state.writer_child import variant

KILLS = 16
SPIN_LIMIT_S = 10.0


def _kill_while_a_temp_file_exists(directory: Path, deadline: float) -> bool:
    """Spin (bounded) until the writer is inside a write — its temp file exists — and say so."""
    while time.monotonic() < deadline:
        with os.scandir(directory) as entries:
            if any(entry.name.endswith(".tmp") for entry in entries):
                return True
    return False


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX; Windows' TerminateProcess is its twin")
def test_killing_a_writer_at_random_instants_always_leaves_a_complete_checkpoint(tmp_path: Path) -> None:
    rng = random.Random(20260221)
    directory = tmp_path / "checkpoints"
    store = CheckpointStore(directory)
    interrupted_writes = 0
    for kill in range(KILLS):
        child = start_module("writer_child", str(directory))
        assert child.stdout is not None
        try:
            assert child.stdout.readline() == "ready\n"
            if kill % 2:
                # Half the kills at a random instant of the loop: the delay picks the instant, it
                # waits for nothing.
                time.sleep(rng.uniform(0.0, 0.03))
            else:
                # The other half aimed at the dangerous window: while the new file is being written.
                directory.mkdir(exist_ok=True)
                assert _kill_while_a_temp_file_exists(directory, time.monotonic() + SPIN_LIMIT_S)
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.kill()
            child.wait(timeout=30)
            child.stdout.close()
        if any(name.endswith(".tmp") for name in os.listdir(directory)):
            interrupted_writes += 1
        loaded = store.load("sess_kill")  # a partial file would raise CheckpointCorrupt here
        if loaded is None:
            continue  # killed before its first write finished: no checkpoint is a correct outcome
        assert loaded == variant(loaded.session_tokens_used)
        assert not any(name.endswith(".tmp") for name in os.listdir(directory))
        assert store.session_ids() == ["sess_kill"]
    assert interrupted_writes >= 1, "no kill landed inside a write; the test proved nothing"
