"""Screenshots of the desktop app for the README: the main window with a real conversation, the
approval dialog and the patch preview, grabbed offscreen (``QWidget.grab()``).

Everything is real but the model: the app, its runtime processes, the local backend, the tools
working in a small sample project; a scripted gateway plays the model's turns.

    scripts/screenshots [OUTPUT_DIR]      # default: docs/screenshots
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QApplication, QWidget

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

TESTS = """import pytest

from calc import add, divide


def test_add() -> None:
    assert add(2, 3) == 5


def test_divide_by_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="zero"):
        divide(1, 0)
"""

SUMMARY = """Done. Here is what changed:

- **`calc.py`** — `divide` now raises a `ValueError` with a clear message instead of a bare
  `ZeroDivisionError`.
- **`test_calc.py`** — a new test pins that behaviour down.

```python
>>> divide(1, 0)
ValueError: cannot divide by zero
```

Both tests pass. Review the changes before you commit them."""


def _script(project: Path) -> list[dict[str, Any]]:
    def call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
        return {"id": call_id, "name": name, "arguments": arguments}

    return [
        {"text": "What makes a good commit message?", "chunkSize": 6},
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
            "toolCalls": [call("RunCommand", "c1", command="echo '2 passed in 0.02s'")],
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


def _save(widget: QWidget, path: Path) -> None:
    QApplication.processEvents()
    if not widget.grab().save(str(path)):
        raise OSError(f"could not write {path}")
    print(f"wrote {path}")


async def _shoot(output: Path, root: Path) -> None:
    from agent_runtime.scripted_gateway import ScriptedGatewayThread
    from desktop.app.messages import ToolRowView
    from desktop.approval.dialog import ApprovalDialog
    from desktop.patch.dialog import PatchPreviewDialog
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
        async with running_app(env, root / "logs") as window:
            window.resize(1280, 800)
            window.new_conversation(None)
            type_and_send(window, "What makes a good commit message?")
            await _until(lambda: current(window).state.status.task == "TASK_COMPLETED")
            window.new_conversation(str(project))
            type_and_send(window, "Make `divide` refuse a zero divisor with a clear error, and add a test.")
            dialog = window.approval_dialog
            assert isinstance(dialog, ApprovalDialog)
            dialog.resize(680, 560)
            shot_dialog = False
            while current(window).state.status.task != "TASK_COMPLETED":
                if dialog.isVisible() and dialog.armed:
                    shown = dialog.shown
                    if not shot_dialog and shown is not None and shown.request["details"].get("diff"):
                        _save(dialog, output / "approval-dialog.png")
                        shot_dialog = True
                    dialog.approve_button.click()
                await asyncio.sleep(0.02)
            await _until(lambda: len(window.sidebar.titles()) == 2)
            window.review_changes()
            preview = await _until(lambda: window.preview_dialog)
            assert isinstance(preview, PatchPreviewDialog)
            preview.resize(1000, 620)
            await asyncio.sleep(0.3)
            _save(preview, output / "patch-preview.png")
            preview.close()
            # The command's row opened: what the test run printed.
            window.view.flush()
            for widget in window.view.widgets():
                if isinstance(widget, ToolRowView) and widget.row.tool_name == "RunCommand":
                    widget.header.click()
            window.view.scroll_to_end()
            await asyncio.sleep(0.3)
            _save(window, output / "main-window.png")


def main(argv: list[str]) -> int:
    output = Path(argv[0] if argv else "docs/screenshots").resolve()
    output.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
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
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            runner.run(_shoot(output, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
