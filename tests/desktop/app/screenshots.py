"""Screenshots of the desktop app for the README: the main window with a real conversation, the
approval dialog and the patch preview.

Everything is real but the model: the app, its runtime processes, the local backend, the tools
working in a small sample project; a scripted gateway plays the model's turns.

    scripts/screenshots [--x11] [OUTPUT_DIR]      # default: docs/screenshots

By default each widget is grabbed offscreen (``QWidget.grab()``). With ``--x11`` the app runs on an X
server (``QT_QPA_PLATFORM=xcb``, ``DISPLAY`` set) and each shot is read back from the server with
``xwd``: the pixels a user sees, window decorations aside.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication, QWidget

MODEL = "claude-sonnet-4-5"
"""A model the default price table knows, so the header shows the estimated cost."""

CALC = '''"""A tiny calculator."""


def add(a: float, b: float) -> float:
    return a + b


def divide(a: float, b: float) -> float:
    return a / b
'''

CALC_FIXED = '''"""A tiny calculator."""


def add(a: float, b: float) -> float:
    return a + b


def divide(a: float, b: float) -> float:
    if b == 0:
        raise ValueError("cannot divide by zero")
    return a / b
'''

TESTS = """import unittest

from calc import add, divide


class CalcTest(unittest.TestCase):
    def test_add(self) -> None:
        self.assertEqual(add(2, 3), 5)

    def test_divide_by_zero_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "zero"):
            divide(1, 0)
"""

COMMIT_ADVICE = """A good commit message answers *why*, not only *what*:

1. **A short subject line** (about 50 characters) in the imperative: "Refuse a zero divisor".
2. **A blank line**, then a body that explains the reason and any trade-off.
3. **One logical change per commit**, so it can be reviewed and reverted on its own."""

RELEASE_NOTE = """**Version 1.2** — the calculator now refuses to divide by zero with a clear message, and its
test suite covers both operations. No other behaviour changed."""

SUMMARY = """Done. `divide` now refuses a zero divisor with a clear message instead of a bare
`ZeroDivisionError`:

```python
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ValueError("cannot divide by zero")
    return a / b
```

`test_calc.py` pins that down, and both tests pass. Review the changes before you commit them."""


def _script(project: Path) -> list[dict[str, Any]]:
    def call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
        return {"id": call_id, "name": name, "arguments": arguments}

    return [
        {"text": COMMIT_ADVICE, "chunkSize": 8},
        {"text": RELEASE_NOTE, "chunkSize": 8},
        {
            "text": "I'll read the calculator first to see how `divide` behaves today.",
            "chunkSize": 5,
            "toolCalls": [call("ReadFile", "r1", path=str(project / "calc.py"))],
        },
        {
            "text": "`divide` passes a zero divisor straight to Python. I'll guard it and add a test:",
            "chunkSize": 5,
            "toolCalls": [
                call("WriteFile", "w1", path=str(project / "calc.py"), content=CALC_FIXED),
                call("WriteFile", "w2", path=str(project / "test_calc.py"), content=TESTS),
            ],
        },
        {
            "text": "Now the tests.",
            "toolCalls": [call("RunCommand", "c1", command="python3 -m unittest -q")],
        },
        {"text": SUMMARY, "chunkSize": 7},
    ]


async def _until(check: Any, timeout: float = 30.0) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while not (found := check()):
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("the app did not get there in time")
        await asyncio.sleep(0.02)
    return found


def xwd_image(data: bytes) -> QImage:
    """The picture in an ``xwd`` dump (a 24/32-bit TrueColor ZPixmap, what Xvfb and desktop X servers
    use); any other format is refused by name rather than decoded into noise."""
    if len(data) < 100:
        raise ValueError("not an xwd dump: shorter than its header")
    fields = struct.unpack(">25I", data[:100])
    header_size, version, pixmap_format = fields[0], fields[1], fields[2]
    width, height, byte_order, bits_per_pixel, bytes_per_line = (
        fields[4],
        fields[5],
        fields[7],
        fields[11],
        fields[12],
    )
    masks, colours = fields[14:17], fields[19]
    if version != 7 or pixmap_format != 2:
        raise ValueError(f"not an xwd ZPixmap dump (version {version}, format {pixmap_format})")
    if bits_per_pixel != 32 or masks != (0xFF0000, 0x00FF00, 0x0000FF):
        raise ValueError(f"unsupported xwd pixels: {bits_per_pixel} bits, masks {[hex(m) for m in masks]}")
    start = header_size + colours * 12
    pixels = bytearray(data[start : start + bytes_per_line * height])
    if len(pixels) < bytes_per_line * height:
        raise ValueError("xwd dump is cut short")
    if byte_order == 1:  # most significant byte first: XRGB, where QImage's RGB32 wants BGRX in memory
        for at in range(0, len(pixels), 4):
            pixels[at : at + 4] = pixels[at : at + 4][::-1]
    image = QImage(bytes(pixels), width, height, bytes_per_line, QImage.Format.Format_RGB32)
    return image.copy()  # owns its pixels once ``pixels`` goes


class Camera:
    """Saves a widget's picture: grabbed from Qt's backing store, or read back from the X server."""

    def __init__(self, output: Path, *, x11: bool) -> None:
        self.output = output
        self.x11 = x11

    async def save(self, widget: QWidget, name: str) -> None:
        path = self.output / name
        window = widget.window()
        if self.x11:  # on top, so no other window covers what the server gives back
            window.raise_()
            window.activateWindow()
        # The last layout and paint reach the screen while the loop runs (not processEvents(): that
        # would run the app's own tasks inside this one).
        await asyncio.sleep(0.4)
        image = self._from_server(window) if self.x11 else widget.grab().toImage()
        if not image.save(str(path)):
            raise OSError(f"could not write {path}")
        print(f"wrote {path} ({image.width()}x{image.height()})")

    def _from_server(self, window: QWidget) -> QImage:
        result = subprocess.run(
            ["xwd", "-silent", "-id", str(int(window.winId()))], capture_output=True, check=False
        )
        if result.returncode != 0:
            raise OSError(f"xwd could not read the window: {result.stderr.decode(errors='replace').strip()}")
        return xwd_image(result.stdout)


async def _shoot(camera: Camera, root: Path) -> None:
    from agent_runtime.scripted_gateway import ScriptedGatewayThread
    from desktop.app.messages import ToolRowView
    from desktop.approval.dialog import ApprovalDialog
    from desktop.patch.dialog import PatchPreviewDialog
    from desktop.settings.store import SettingsStore
    from tests.desktop.app.harness import app_environment, current, running_app, type_and_send
    from tests.support.backend import start_backend

    project = root / "projects" / "calculator"
    project.mkdir(parents=True)
    (project / "calc.py").write_text(CALC)
    with (
        start_backend(root / "backend") as backend,
        ScriptedGatewayThread({"turns": _script(project)}) as gateway,
    ):
        env = app_environment(root / "home", backend, gateway.url, approval_mode="always")
        store = SettingsStore()
        store.save(replace(store.load(), model=MODEL), None)
        env["LLM_GATEWAY_MODEL"] = MODEL
        async with running_app(env, root / "logs") as window:
            window.resize(1280, 800)
            # Earlier chats, so the sidebar looks lived in.
            for question in ("What makes a good commit message?", "Draft a two-line release note for 1.2"):
                window.new_conversation(None)
                type_and_send(window, question)
                await _until(lambda: current(window).state.status.task == "TASK_COMPLETED")
            window.new_conversation(str(project))
            type_and_send(window, "Make `divide` refuse a zero divisor with a clear error, and add a test.")
            dialog = window.approval_dialog
            assert isinstance(dialog, ApprovalDialog)
            dialog.resize(680, 600)
            shot_dialog = False
            while current(window).state.status.task != "TASK_COMPLETED":
                if dialog.isVisible() and dialog.armed:
                    shown = dialog.shown
                    # calc.py's edit (the two writes ask in either order): the diff that shows the guard.
                    details = shown.request["details"] if shown is not None else {}
                    if not shot_dialog and Path(str(details.get("path", ""))).name == "calc.py":
                        await camera.save(dialog, "approval-dialog.png")
                        shot_dialog = True
                    dialog.approve_button.click()
                await asyncio.sleep(0.02)
            if not shot_dialog:
                raise RuntimeError("the approval dialog never asked about calc.py's edit")
            await _until(lambda: len(window.sidebar.titles()) == 2)
            window.review_changes()
            preview = await _until(lambda: window.preview_dialog)
            assert isinstance(preview, PatchPreviewDialog)
            preview.resize(960, 480)
            await camera.save(preview, "patch-preview.png")
            preview.close()
            # The command's row opened: what the test run printed.
            window.view.flush()
            for widget in window.view.widgets():
                if isinstance(widget, ToolRowView) and widget.row.tool_name == "RunCommand":
                    widget.header.click()
            window.view.scroll_to_end()
            await camera.save(window, "main-window.png")


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="scripts/screenshots", description=__doc__.split("\n\n")[0])
    parser.add_argument("output", nargs="?", default="docs/screenshots", help="where the PNGs go")
    parser.add_argument(
        "--x11", action="store_true", help="read each shot back from the X server in DISPLAY (xcb platform)"
    )
    return parser.parse_args(argv)


def _x11_problem() -> str | None:
    """Why the app cannot be shown and read back on an X server here, or None."""
    from desktop.app.platform_check import xcb_problem

    if not os.environ.get("DISPLAY"):
        return (
            "--x11 needs an X server: set DISPLAY (scripts/screenshots --x11 starts Xvfb when it is unset)."
        )
    if shutil.which("xwd") is None:
        return (
            "--x11 reads the windows back with xwd, not installed here (Debian/Ubuntu: apt install x11-apps)."
        )
    return xcb_problem(os.environ, [])


def main(argv: list[str]) -> int:
    arguments = _arguments(argv)
    output = Path(arguments.output).resolve()
    if arguments.x11:
        os.environ["QT_QPA_PLATFORM"] = "xcb"
        problem = _x11_problem()
        if problem is not None:
            print(problem, file=sys.stderr)
            return 3
    else:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    output.mkdir(parents=True, exist_ok=True)
    import qasync

    # A short, stable folder: its path shows in the pictures.
    root = Path(tempfile.gettempdir()) / "cowork-screenshots"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    try:
        home = root / "home"
        for variable, folder in (
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_DATA_HOME", "data"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_CACHE_HOME", "cache"),
        ):
            (home / folder).mkdir(parents=True)
            os.environ[variable] = str(home / folder)
        os.environ["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
        app = QApplication.instance() or QApplication(sys.argv[:1])
        from desktop.app.theme import follow_system_theme

        follow_system_theme(app)  # type: ignore[arg-type]
        camera = Camera(output, x11=arguments.x11)
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            runner.run(_shoot(camera, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
