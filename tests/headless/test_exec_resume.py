"""``--resume`` after the runtime was killed (``kill -9``) in the middle of a task: ``cowork exec`` says
the runtime was lost (exit 7) and how to continue; continuing completes the task from its checkpoint."""

from __future__ import annotations

import re
import signal
from pathlib import Path

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from tests.headless.support import Running, run_cowork, runtime_children, tool_call


def test_resume_after_kill_9_of_the_runtime_completes_the_task(env: dict[str, str], workspace: Path) -> None:
    first, second = workspace / "first.txt", workspace / "second.txt"
    turns = [
        tool_call("WriteFile", "c1", path=str(first), content="one\n"),
        # Step 2's model call is held: the runtime is killed while it waits for the answer.
        {"text": "Now the second file.", "holdAfterChunks": 0},
        # What the resumed session asks for: step 2 again, then the end.
        tool_call("WriteFile", "c2", path=str(second), content="two\n"),
        {"text": "Both files are written."},
    ]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        try:
            with Running(["-C", str(workspace), "--endpoint", gateway.url, "Write two files"], env) as run:
                gateway.wait_for(lambda: len(gateway.requests) == 2, 30)
                (runtime,) = runtime_children(run.pid)
                runtime.send_signal(signal.SIGKILL)
                code = run.wait(timeout=30)
        finally:
            gateway.release()
        assert code == 7, run.stderr
        assert "error: the agent runtime exited" in run.stderr
        assert "Traceback" not in run.stderr
        hint = re.search(r"continue with: cowork exec --resume (sess_\w+)", run.stderr)
        assert hint, run.stderr
        assert first.read_text() == "one\n"
        assert not second.exists()

        resumed = run_cowork(["-C", str(workspace), "--endpoint", gateway.url, "--resume", hint[1]], env)
        gateway.assert_done()
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed session {hint[1]} at step" in resumed.stderr
    assert resumed.stdout == "Both files are written.\n"
    assert second.read_text() == "two\n"
