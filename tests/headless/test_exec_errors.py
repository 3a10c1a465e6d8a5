"""Bad input to ``cowork exec``: each problem is one clear line on stderr (never a traceback) and its
own exit status — 2 for flags and arguments, 3 for the configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_runtime.scripted_gateway import ScriptedGatewayThread
from tests.headless.support import run_cowork


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error:" in line]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--bogus", "hi"], "unrecognized arguments: --bogus"),
        ([], "a PROMPT (or - to read it from stdin) is needed"),
        (["--max-steps", "0", "hi"], "argument --max-steps: must be between 1 and 1000"),
        (["--resume", "sess_x", "a prompt"], "--resume continues the session's task; it takes no PROMPT"),
    ],
    ids=["invalid-flag", "no-prompt", "max-steps-0", "resume-with-prompt"],
)
def test_invalid_flags_and_arguments_exit_2(env: dict[str, str], args: list[str], says: str) -> None:
    result = run_cowork(args, env, timeout=30)
    assert result.returncode == 2, result.stderr
    assert len(error_lines(result.stderr)) == 1, result.stderr
    assert says in error_lines(result.stderr)[0]
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_configuration_problems_exit_3_with_one_line_each(env: dict[str, str], tmp_path: Path) -> None:
    # One gateway serves every case: each run stops before it asks the model anything.
    with ScriptedGatewayThread({"turns": []}) as gateway:
        cases = {
            "missing workspace": (
                ["-C", str(tmp_path / "nonexistent"), "--endpoint", gateway.url, "hi"],
                env,
                f"error: The workspace {tmp_path / 'nonexistent'} is not a folder",
            ),
            "unreachable gateway": (
                ["--endpoint", "http://127.0.0.1:9", "hi"],
                env,
                "error: The LLM gateway at http://127.0.0.1:9 cannot be reached",
            ),
            "no gateway": (
                ["hi"],
                env,
                "error: No LLM gateway is configured: set LLM_GATEWAY_ENDPOINT (and LLM_GATEWAY_MODEL), "
                "pass --endpoint, or try the offline demo model with --demo",
            ),
            "unreachable backend": (
                ["--endpoint", gateway.url, "hi"],
                {**env, "COWORK_BACKEND_URL": "http://127.0.0.1:9"},
                "error: The backend at http://127.0.0.1:9 cannot be reached",
            ),
            "backend without token": (
                ["--endpoint", gateway.url, "hi"],
                {**env, "COWORK_BACKEND_TOKEN": ""},
                "error: COWORK_BACKEND_URL is set but COWORK_BACKEND_TOKEN is not",
            ),
            "unknown session": (
                ["-C", str(tmp_path), "--endpoint", gateway.url, "--resume", "sess_unknown"],
                env,
                "error: session sess_unknown cannot be resumed",
            ),
            "unreadable settings": (
                ["hi"],
                env,
                "error: The settings file",
            ),
        }
        settings = Path(env["XDG_CONFIG_HOME"]) / "Cowork" / "settings.json"
        problems = []
        for name, (args, environ, says) in cases.items():
            if name == "unreadable settings":
                settings.parent.mkdir(parents=True, exist_ok=True)
                settings.write_text("{not json")
            result = run_cowork(args, environ, cwd=tmp_path, timeout=30)
            lines = result.stderr.splitlines()
            if result.returncode != 3 or len(lines) != 1 or not lines[0].startswith(says):
                problems.append(f"{name}: exit {result.returncode}, stderr:\n{result.stderr}")
            if "Traceback" in result.stderr or result.stdout:
                problems.append(f"{name}: stdout {result.stdout!r}, stderr:\n{result.stderr}")
        assert gateway.requests == []
    assert not problems, "\n".join(problems)
