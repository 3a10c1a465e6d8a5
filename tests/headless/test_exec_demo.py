"""``cowork exec --demo`` with nothing configured: the embedded local backend is started (platformdirs'
folders in a temporary place) and the offline demo model reads the file the prompt names, edits its
own demo file and runs a harmless command; afterwards the demo model and the runtime are gone and the
backend alone is left running, for the next run (it stops after its idle timeout)."""

from __future__ import annotations

import json
from pathlib import Path

import psutil

from tests.headless.support import base_environment, local_backends, run_cowork, stop_local_backends


def processes_of_the_run(data_home: str) -> list[str]:
    """Processes whose environment has this run's ``XDG_DATA_HOME``: what the run started (backend,
    demo model, runtime) inherits it."""
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get("XDG_DATA_HOME") == data_home:
                found.append(f"{process.pid}: {' '.join(process.cmdline())}")
        except psutil.Error:
            continue
    return found


def test_demo_with_the_embedded_backend_reads_the_named_file_and_leaves_only_the_backend_running(
    tmp_path: Path, workspace: Path
) -> None:
    env = base_environment(tmp_path, None)  # no COWORK_BACKEND_URL: the embedded backend
    (workspace / "notes.txt").write_text("Remember the milk.\n")
    backend_dir = Path(env["XDG_DATA_HOME"]) / "Cowork" / "backend"

    # Without a terminal the demo's command needs --approve-all (the default policy asks for commands).
    prompt = "What does notes.txt say?"
    try:
        result = run_cowork(["-C", str(workspace), "--demo", "--approve-all", prompt], env)
        backends = [(process.pid, " ".join(process.cmdline())) for process in local_backends(env)]
        state = json.loads((backend_dir / "backend.json").read_text())
        left = processes_of_the_run(env["XDG_DATA_HOME"])
    finally:
        stop_local_backends(env)

    assert result.returncode == 0, result.stderr
    assert "using the offline demo model — not a real LLM" in result.stderr
    tools = [line.split(" (")[0] for line in result.stderr.splitlines() if line[:1] in "→✓✗"]
    demo_file = workspace / "cowork-demo.md"
    assert tools == [
        f"→ ReadFile {workspace / 'notes.txt'}",
        "✓ ReadFile",
        f"→ WriteFile {demo_file}",
        "✓ WriteFile",
        f"→ EditFile {demo_file}",
        "✓ EditFile",
        "→ RunCommand echo Hello from the Cowork demo",
        "✓ RunCommand",
    ], result.stderr
    assert demo_file.read_text().endswith("Status: edited by the demo\n")
    assert "[Offline demo model — not a real LLM]" in result.stdout
    assert "Remember the milk." in result.stdout
    assert "Traceback" not in result.stderr
    # The backend runs from platformdirs' data folder, and it alone is left: the demo model and the
    # runtime are gone.
    assert (backend_dir / "backend.log").exists()
    assert [pid for pid, _ in backends] == [state["pid"]]
    assert left == [f"{pid}: {command}" for pid, command in backends], left
