"""The patch preview without Qt: entries, line kinds, display limits, what "Open in editor" opens."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from desktop.patch.model import (
    DISPLAY_MAX_LINES,
    CannotOpen,
    display_diff,
    line_kind,
    open_target,
    read_preview,
)
from tests.desktop.patch.previews import workspace_preview


def test_entries_keep_the_runtimes_order_with_markers_counts_and_workspace_relative_names(
    tmp_path: Path,
) -> None:
    contents = read_preview(workspace_preview(tmp_path), tmp_path)
    assert contents.skipped == 0
    assert [(e.marker, e.status_word, e.display_path, e.added, e.removed) for e in contents.entries] == [
        ("M", "modified", "src/app.py", 1, 1),
        ("A", "created", "NOTES.md", 2, 0),
        ("D", "deleted", "old.txt", 0, 2),
        ("M", "modified", "logo.png", 0, 0),
    ]
    assert [e.has_hunks for e in contents.entries] == [True, True, True, False]


def test_paths_outside_the_workspace_or_without_one_are_shown_whole(tmp_path: Path) -> None:
    outside = str(tmp_path.parent / "elsewhere.txt")
    preview = {"files": [{"path": outside, "status": "created", "diff": "", "sizeBytes": 1}]}
    assert read_preview(preview, tmp_path).entries[0].display_path == outside.replace(os.sep, "/")
    assert read_preview(preview, None).entries[0].display_path == outside.replace(os.sep, "/")


def test_an_empty_preview_has_no_entries() -> None:
    contents = read_preview({"files": []}, None)
    assert contents.entries == ()
    assert contents.skipped == 0


@pytest.mark.parametrize("preview", [None, [], {}, {"files": "x"}, {"files": None}])
def test_something_that_is_not_a_preview_is_refused(preview: object) -> None:
    with pytest.raises(ValueError, match="no list of files"):
        read_preview(preview, None)


def test_bad_entries_are_counted_not_dropped_silently() -> None:
    preview = {
        "files": [
            {"path": "/w/a.py", "status": "modified", "diff": "", "sizeBytes": 1},
            {"path": "/w/b.py", "status": "modified"},
            "not an entry",
            {"path": "", "status": "created", "diff": ""},
            {"path": "/w/c.py", "status": "created", "diff": "", "sizeBytes": "12"},
        ]
    }
    contents = read_preview(preview, None)
    assert [e.path for e in contents.entries] == ["/w/a.py", "/w/c.py"]
    assert contents.entries[1].size_bytes == 0
    assert contents.skipped == 3


def test_line_kinds_follow_the_hunks_not_the_look_of_a_line() -> None:
    lines = ["diff --git a/x b/x", "--- a/x", "+++ b/x", "@@ -1,3 +1,3 @@", " same", "--- gone", "+++ new",
             "\\ No newline at end of file", "diff --git a/y b/y", "--- a/y"]  # fmt: skip
    kinds = []
    in_hunks = False
    for line in lines:
        kind, in_hunks = line_kind(line, in_hunks)
        kinds.append(kind)
    assert kinds == [
        "header",
        "header",
        "header",
        "hunk",
        "context",
        "removed",
        "added",
        "note",
        "header",
        "header",
    ]
    assert line_kind("Binary files a/x and b/x differ", False) == ("note", False)


def test_a_long_diff_is_cut_for_display_with_a_line_saying_so() -> None:
    short = "@@ -1 +1 @@\n-a\n+b\n"
    assert display_diff(short) == (short.rstrip("\n"), "")
    long = "@@ -1 +1 @@\n" + "+x\n" * (DISPLAY_MAX_LINES + 500)
    text, note = display_diff(long)
    assert text.count("\n") + 1 == DISPLAY_MAX_LINES
    assert note == "… 501 more lines not shown here: open the file in the editor to see it all."
    wide = "@@ -1 +1 @@\n" + ("+" + "y" * 999 + "\n") * 1000  # 1 MB in 1,001 lines
    text, note = display_diff(wide)
    assert len(text) <= 512 * 1024
    assert note.startswith("… 477 more lines")


def test_open_target_opens_a_text_file_itself(tmp_path: Path) -> None:
    entries = read_preview(workspace_preview(tmp_path), tmp_path).entries
    target = open_target(entries[0], tmp_path)
    assert (target.path, target.reveal, target.note) == (tmp_path / "src" / "app.py", False, "")


def test_a_relative_path_is_found_in_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    entry = read_preview({"files": [{"path": "a.txt", "status": "created", "diff": ""}]}, tmp_path).entries[0]
    assert open_target(entry, tmp_path).path == tmp_path / "a.txt"
    with pytest.raises(CannotOpen, match="no folder"):
        open_target(entry, None)


def test_deleted_and_vanished_files_cannot_be_opened(tmp_path: Path) -> None:
    entries = read_preview(workspace_preview(tmp_path), tmp_path).entries
    with pytest.raises(CannotOpen, match=r"old\.txt was deleted"):
        open_target(entries[2], tmp_path)
    (tmp_path / "NOTES.md").unlink()
    with pytest.raises(CannotOpen, match=r"NOTES\.md no longer exists"):
        open_target(entries[1], tmp_path)


@pytest.mark.parametrize("name", ["setup.exe", "run.command", "Install.BAT", "launcher.desktop", "x.js"])
def test_a_file_the_system_would_run_opens_its_folder_instead(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("echo owned\n")
    preview = {"files": [{"path": str(tmp_path / name), "status": "created", "diff": ""}]}
    target = open_target(read_preview(preview, tmp_path).entries[0], tmp_path)
    assert target.reveal
    assert target.path == tmp_path
    assert name in target.note


def test_on_windows_scripts_open_their_folder_elsewhere_the_editor_opens_them(tmp_path: Path) -> None:
    (tmp_path / "fix.py").write_text("print('hi')\n")
    entry = read_preview(
        {"files": [{"path": str(tmp_path / "fix.py"), "status": "created", "diff": ""}]}, None
    )
    assert open_target(entry.entries[0], None, windows=True).reveal
    assert not open_target(entry.entries[0], None, windows=False).reveal


@pytest.mark.skipif(sys.platform == "win32", reason="execute bits are POSIX")
def test_a_file_with_an_execute_bit_opens_its_folder_instead(tmp_path: Path) -> None:
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho owned\n")
    script.chmod(0o755)
    preview = {"files": [{"path": str(script), "status": "modified", "diff": ""}]}
    target = open_target(read_preview(preview, tmp_path).entries[0], tmp_path, windows=False)
    assert (target.path, target.reveal) == (tmp_path, True)


def test_a_directory_opens_its_parent_not_itself(tmp_path: Path) -> None:
    (tmp_path / "Thing.app").mkdir()
    preview = {"files": [{"path": str(tmp_path / "Thing.app"), "status": "created", "diff": ""}]}
    target = open_target(read_preview(preview, tmp_path).entries[0], tmp_path)
    assert (target.path, target.reveal) == (tmp_path, True)
