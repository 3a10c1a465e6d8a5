"""Server names (contracts.ipc.transport): refused with a reason when no platform could use them."""

from __future__ import annotations

import sys

import pytest

from contracts.ipc.transport import check_server_name, is_windows_pipe


def test_windows_pipe_names_are_recognised() -> None:
    assert is_windows_pipe("\\\\.\\pipe\\cw-0123456789ab")
    assert not is_windows_pipe("/tmp/cw-abc/s")


@pytest.mark.parametrize("name", ["", "/tmp/a\0b"])
def test_empty_names_and_nul_bytes_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="empty or contains a NUL"):
        check_server_name(name)


@pytest.mark.skipif(sys.platform == "win32", reason="checks the non-Windows answer")
def test_a_pipe_name_is_refused_off_windows_with_the_reason() -> None:
    with pytest.raises(ValueError, match="Windows named pipe"):
        check_server_name("\\\\.\\pipe\\cw-0123456789ab")


def test_a_unix_socket_path_too_long_for_macos_is_refused() -> None:
    with pytest.raises(ValueError, match="longer than 103 bytes"):
        check_server_name("/" + "x" * 103)
    check_server_name("/" + "x" * 102)
