"""The one atomic file write: a file holds the old content or the new, never part of either, and
nothing is left beside it."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from contracts.atomic import TEMP_SUFFIX, atomic_writer, temp_prefix, write_atomically
from tests.support.peers import REPO_ROOT

POSIX = pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")


def siblings(path: Path) -> list[str]:
    return sorted(entry.name for entry in path.parent.iterdir() if entry.name != path.name)


def test_the_file_holds_the_new_content_and_nothing_is_left_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    target.write_bytes(b"old")
    write_atomically(target, b'{"new": true}\n')
    assert target.read_bytes() == b'{"new": true}\n'
    assert siblings(target) == []


def test_a_new_file_is_created(tmp_path: Path) -> None:
    target = tmp_path / "new.bin"
    write_atomically(str(target), bytes(range(256)) * 1000, durable=False)
    assert target.read_bytes() == bytes(range(256)) * 1000


def test_a_failure_midway_keeps_the_old_content_and_removes_the_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "manifest.json"
    target.write_bytes(b"old and complete")
    seen: list[bytes] = []

    def pack_and_fail() -> None:
        with atomic_writer(target) as pending:
            pending.write(b"half of the new")
            pending.flush()
            seen.append(pending.temporary.read_bytes())
            raise RuntimeError("packing failed")

    with pytest.raises(RuntimeError, match="packing failed"):
        pack_and_fail()
    assert seen == [b"half of the new"]
    assert target.read_bytes() == b"old and complete"
    assert siblings(target) == []


def test_a_rename_that_fails_keeps_the_target_and_removes_the_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    (target / "inside").write_text("a directory cannot be replaced by a file")
    with pytest.raises(IsADirectoryError if os.name != "nt" else OSError):
        write_atomically(target, b"data")
    assert (target / "inside").exists()
    assert siblings(target) == []


def test_a_missing_directory_is_a_clear_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "no" / "such" / "dir.json", b"x")


def test_a_process_killed_before_the_rename_leaves_the_old_content(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"OLD" * 1000)
    child = textwrap.dedent(
        f"""
        import os, signal, sys
        from contracts.atomic import atomic_writer
        with atomic_writer({str(target)!r}) as pending:
            pending.write(b"NEW" * 500_000)
            pending.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    if sys.platform == "win32":
        pytest.skip("SIGKILL of oneself is POSIX")
    result = subprocess.run([sys.executable, "-c", child], cwd=REPO_ROOT, timeout=60, check=False)
    assert result.returncode == -signal.SIGKILL
    assert target.read_bytes() == b"OLD" * 1000
    # The killed writer's temp file is left; its name says whose it is, for a sweep to find.
    leftovers = siblings(target)
    assert len(leftovers) == 1
    assert leftovers[0].startswith(temp_prefix(target.name))
    assert leftovers[0].endswith(TEMP_SUFFIX)


@POSIX
def test_mode_is_exact_from_creation(tmp_path: Path) -> None:
    secret = tmp_path / "token.json"
    write_atomically(secret, b"secret", mode=0o600)
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    served = tmp_path / "bundle.tar.gz"
    write_atomically(served, b"archive", mode=0o644)
    assert stat.S_IMODE(served.stat().st_mode) == 0o644
    script = tmp_path / "run.sh"
    script.write_text("echo one\n")
    script.chmod(0o750)
    write_atomically(script, b"echo two\n", mode=stat.S_IMODE(script.stat().st_mode))
    assert stat.S_IMODE(script.stat().st_mode) == 0o750


@POSIX
def test_without_a_mode_a_new_file_gets_what_any_program_would(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_atomically(tmp_path / "notes.txt", b"hello")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "notes.txt").stat().st_mode) == 0o644


@POSIX
def test_a_secret_is_never_readable_by_others_even_while_written(tmp_path: Path) -> None:
    with atomic_writer(tmp_path / "key.pem", mode=0o600) as pending:
        assert stat.S_IMODE(pending.temporary.stat().st_mode) == 0o600
        pending.write(b"-----BEGIN PRIVATE KEY-----\n")


def test_a_chosen_prefix_names_the_temp_file(tmp_path: Path) -> None:
    with atomic_writer(tmp_path / "artifact", prefix=".tmp-") as pending:
        assert pending.temporary.name.startswith(".tmp-")
        assert pending.temporary.name.endswith(TEMP_SUFFIX)
        assert pending.temporary.parent == tmp_path
        pending.write(b"content")
    assert (tmp_path / "artifact").read_bytes() == b"content"


def test_a_long_name_still_makes_a_valid_temp_name(tmp_path: Path) -> None:
    target = tmp_path / ("n" * 250)
    with atomic_writer(target) as pending:
        assert len(pending.temporary.name) <= 255
        assert pending.temporary.name.startswith(temp_prefix(target.name, ""))
        pending.write(b"x")
    assert target.read_bytes() == b"x"
    marked = temp_prefix("n" * 250, "cowork-tmp-")
    assert marked.endswith(".cowork-tmp-")
    assert len(marked) + 16 + len(TEMP_SUFFIX) <= 255
