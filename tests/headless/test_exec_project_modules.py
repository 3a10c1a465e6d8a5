"""A project folder whose files are named like Python modules — a ``contracts/`` package, a
``typing.py`` — is only data: ``cowork exec`` started in it runs the runtime there and the embedded
backend from there, and neither imports them in place of its own modules (``python -P``)."""

from __future__ import annotations

from pathlib import Path

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from tests.headless.support import base_environment, run_cowork, stop_local_backends, tool_call

TRAP = 'raise SystemExit("imported from the project folder")\n'


def test_modules_of_the_project_folder_are_never_imported_by_the_runtime_or_the_backend(
    tmp_path: Path, workspace: Path
) -> None:
    for package in ("contracts", "backend", "agent_runtime"):
        (workspace / package).mkdir()
        (workspace / package / "__init__.py").write_text(TRAP)
    (workspace / "typing.py").write_text(TRAP)
    env = base_environment(tmp_path, None)  # the embedded backend, started from the project folder
    turns = [tool_call("ReadFile", "c1", path=str(workspace / "typing.py")), {"text": "It is a trap."}]
    try:
        with ScriptedGatewayThread({"turns": turns}) as gateway:
            result = run_cowork(["--endpoint", gateway.url, "--approve-all", "Look"], env, cwd=workspace)
    finally:
        stop_local_backends(env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It is a trap.\n"
    assert "imported from the project folder" not in result.stderr
