"""Approvals asked on a terminal: ``cowork exec`` on a pseudo-terminal (stdin, stdout and stderr all the
pty), the user answering ``y`` or ``n`` at the prompt."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from tests.headless.support import cowork_command, tool_call
from tests.support.peers import REPO_ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")

PROMPT = b"Approve? [y]es once / [a]lways for this run / [n]o: "


class Terminal:
    """``cowork exec ARGS`` with a pseudo-terminal as its stdin, stdout and stderr."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        import pty

        self.master, slave = pty.openpty()
        self.output = b""
        try:
            self.process = subprocess.Popen(
                [*cowork_command(), *args],
                env={**env, "TERM": "dumb"},
                cwd=REPO_ROOT,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                start_new_session=True,  # the pty may become its controlling terminal, not ours
            )
        finally:
            os.close(slave)

    def read_until(self, wanted: bytes, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while wanted not in self.output:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {wanted!r} on the terminal; it shows:\n{self.text()}")
            if not self._read(remaining):
                raise AssertionError(f"the terminal closed before {wanted!r}:\n{self.text()}")

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], min(timeout, 0.5))
        if ready:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: every end of the slave is closed
                return False
            if not data:
                return False
            self.output += data
        return True

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self, timeout: float = 30) -> int:
        """Read everything until the program exits; its exit status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._read(deadline - time.monotonic()):
            if self.process.poll() is not None and not select.select([self.master], [], [], 0.05)[0]:
                break
        return self.process.wait(timeout=max(0.1, deadline - time.monotonic()))

    def text(self) -> str:
        return self.output.decode(errors="replace").replace("\r\n", "\n")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)


@pytest.mark.parametrize(("answer", "code"), [("y", 0), ("n", 5)])
def test_an_approval_is_asked_on_the_terminal_and_the_answer_is_obeyed(
    env: dict[str, str], workspace: Path, answer: str, code: int
) -> None:
    target = workspace / "approved.txt"
    turns = [
        tool_call("WriteFile", "c1", path=str(target), content="approved\n"),
        {"text": "Finished."},
    ]
    with ScriptedGatewayThread({"turns": turns}) as gateway:
        term = Terminal(
            ["-C", str(workspace), "--endpoint", gateway.url, "--approval-mode", "always", "Write it"], env
        )
        try:
            term.read_until(PROMPT)
            shown = term.text()
            term.type(f"{answer}\n")
            status = term.finish()
        finally:
            term.close()
    screen = term.text()
    assert status == code, screen
    assert "── Approval needed:" in shown
    assert str(target) in shown
    assert "risk:" in shown
    assert shown.count("Approve?") == 1
    assert "Traceback" not in screen
    assert "Finished." in screen
    if answer == "y":
        assert target.read_text() == "approved\n"
        assert "✓ WriteFile" in screen
    else:
        assert not target.exists()
        assert "✗ not approved: Denied in the terminal" in screen
        assert "✗ WriteFile denied" in screen
