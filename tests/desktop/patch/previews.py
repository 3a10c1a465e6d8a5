"""Patch previews as ``GetPatchPreview`` returns them, for files that really exist in a folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

MODIFIED_DIFF = (
    "--- a/src/app.py\n"
    "+++ b/src/app.py\n"
    "@@ -1,3 +1,3 @@\n"
    " import sys\n"
    "-print('hello')\n"
    "+print('hello, world')\n"
    " sys.exit(0)\n"
)
CREATED_DIFF = "--- /dev/null\n+++ b/NOTES.md\n@@ -0,0 +1,2 @@\n+# Notes\n+--- not a header\n"
DELETED_DIFF = "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-bye\n--- also not a header\n"
BINARY_DIFF = "Binary files a/logo.png and b/logo.png differ\n"


def workspace_preview(root: Path) -> dict[str, Any]:
    """A modified, a created and a deleted file, and a binary one, as the runtime reports them."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "src" / "app.py").write_text("import sys\nprint('hello, world')\nsys.exit(0)\n")
    (root / "NOTES.md").write_text("# Notes\n--- not a header\n")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    return {
        "files": [
            {
                "path": str(root / "src" / "app.py"),
                "status": "modified",
                "diff": MODIFIED_DIFF,
                "sizeBytes": 44,
            },
            {"path": str(root / "NOTES.md"), "status": "created", "diff": CREATED_DIFF, "sizeBytes": 24},
            {"path": str(root / "old.txt"), "status": "deleted", "diff": DELETED_DIFF, "sizeBytes": 0},
            {"path": str(root / "logo.png"), "status": "modified", "diff": BINARY_DIFF, "sizeBytes": 10},
        ]
    }
