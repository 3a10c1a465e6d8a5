"""``exit_now``: a finished program ends without the interpreter's teardown, but not before what an
exit owes — a non-daemon thread's work, the ``atexit`` handlers, buffered output — and with its
status; an idle thread pool does not hold it up."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.peers import REPO_ROOT

PROGRAM = textwrap.dedent(
    """
    import atexit, concurrent.futures, sys, threading, time
    from pathlib import Path
    from contracts.ipc.eventloop import exit_now

    out = Path(sys.argv[1])
    pool = concurrent.futures.ThreadPoolExecutor(2)
    pool.submit(lambda: None).result()  # an idle worker is left waiting for work

    def late_write():
        time.sleep(0.2)
        (out / "thread.txt").write_text("written")

    threading.Thread(target=late_write).start()
    atexit.register(lambda: (out / "atexit.txt").write_text("ran"))
    sys.stdout.write("no newline, still buffered")
    exit_now(7)
    """
)


def test_exit_now_finishes_what_an_exit_owes_and_ends_with_the_status(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 7, result.stderr
    assert result.stdout == "no newline, still buffered"
    assert (tmp_path / "thread.txt").read_text() == "written"
    assert (tmp_path / "atexit.txt").read_text() == "ran"
