"""The runtime's fork server and its client, without ``cowork exec``: exit statuses reported over the
connection, a forked runtime killed by its client, and who may connect (the same user only)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_runtime import fork_server
from contracts.ipc.fork_wire import (
    FRAME_HEADER,
    SOCKET_NAME,
    PeerRefused,
    check_peer,
    decode_frame_length,
    peer_uid,
    private_dir_problem,
)
from desktop.launch.forked import fork_runtime, fork_server_usable

IDLE = ("--idle-timeout", "60")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fork server is POSIX only")


@pytest.fixture
def server_dir() -> Iterator[Path]:
    """A running fork server's folder (short: a socket's path has about 104 bytes)."""
    directory = Path(tempfile.mkdtemp(prefix="cwf"))
    directory.chmod(0o700)
    server = subprocess.Popen(
        [sys.executable, "-P", "-m", "agent_runtime", "fork-server", "--socket-dir", str(directory), *IDLE],
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        assert server.stdout is not None
        assert b'"ready"' in server.stdout.readline()  # once it listens
        yield directory
    finally:
        server.kill()
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()
        shutil.rmtree(directory, ignore_errors=True)


def test_a_peer_of_another_user_is_refused() -> None:
    check_peer(os.getuid())
    with pytest.raises(PeerRefused):
        check_peer(os.getuid() + 1)
    with pytest.raises(PeerRefused):
        check_peer(0, own_uid=1000)


def test_a_connected_peer_is_this_user() -> None:
    left, right = socket.socketpair(socket.AF_UNIX)
    with left, right:
        assert peer_uid(left) == os.getuid()


def test_a_folder_open_to_others_is_not_private(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir(mode=0o700)
    assert private_dir_problem(folder) is None
    folder.chmod(0o750)
    assert "open to other users" in str(private_dir_problem(folder))
    assert "No such file" in str(private_dir_problem(tmp_path / "missing"))
    link = tmp_path / "link"
    link.symlink_to(folder)
    assert "not a folder" in str(private_dir_problem(link))


def test_the_fork_server_is_off_when_asked_or_when_the_runtime_is_another_program() -> None:
    source = [sys.executable, "-P", "-m", "agent_runtime"]
    assert fork_server_usable({}, source)
    assert not fork_server_usable({"COWORK_RUNTIME_FORK_SERVER": "0"}, source)
    assert not fork_server_usable({}, ["/opt/other-runtime"])


def test_a_changed_source_is_noticed(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("x = 1\n")
    known = {str(module): module.stat().st_mtime}
    assert not fork_server._sources_changed(known)
    os.utime(module, (1, 1))
    assert fork_server._sources_changed(known)


async def test_the_exit_status_of_a_forked_runtime_reaches_its_client(server_dir: Path) -> None:
    log: list[bytes] = []
    forked = await fork_runtime(
        server_dir, ["--stdio", "--no-such-option"], env=dict(os.environ), cwd="/", on_stderr=log.append
    )
    assert forked is not None
    client, child = forked
    assert await asyncio.wait_for(child.wait(), 30) == 2  # argparse's usage error
    assert child.returncode == 2
    assert b"--no-such-option" in b"".join(log)
    await client.close()


async def test_a_client_kills_its_forked_runtime(server_dir: Path) -> None:
    forked = await fork_runtime(server_dir, ["--stdio"], env=dict(os.environ), cwd="/")
    assert forked is not None
    client, child = forked
    child.kill()
    assert await asyncio.wait_for(child.wait(), 30) == -signal.SIGKILL
    child.kill()  # reported gone: nothing is signalled any more
    await client.close()


async def test_without_a_server_the_client_falls_back(tmp_path: Path) -> None:
    directory = Path(tempfile.mkdtemp(prefix="cwn"))
    try:
        directory.chmod(0o700)
        (directory / SOCKET_NAME).touch()  # what a killed server leaves: nobody listens there
        assert await fork_runtime(directory, ["--stdio"], env={}, cwd=None) is None
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs to become another user")
def test_the_server_refuses_a_process_of_another_user(server_dir: Path) -> None:
    # Opened up on purpose, so that another user can reach the socket at all: the peer check is
    # what is left to refuse it.
    server_dir.chmod(0o711)
    (server_dir / SOCKET_NAME).chmod(0o666)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        reply = b""
        with contextlib.suppress(BaseException):
            os.setgid(65534)
            os.setuid(65534)
            with socket.socket(socket.AF_UNIX) as conn:
                conn.settimeout(10)
                conn.connect(str(server_dir / SOCKET_NAME))
                header = conn.recv(FRAME_HEADER.size, socket.MSG_WAITALL)
                reply = conn.recv(decode_frame_length(header), socket.MSG_WAITALL)
        os.write(write_end, reply or b"no reply")
        os._exit(0)
    os.close(write_end)
    os.waitpid(pid, 0)
    with os.fdopen(read_end, "rb") as answer:
        said = answer.read()
    assert b"refused" in said, said
    assert b"65534" in said, said
