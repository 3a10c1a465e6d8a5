"""RunCommand (seed 003 §4.4, §6.2, §8.2): a shell command with bounded output and a hard timeout."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
from collections.abc import Mapping

from pydantic import Field

from agent_runtime.tool_runtime.errors import ToolFailure, describe_os_error
from agent_runtime.tool_runtime.output.results import ToolOutput
from agent_runtime.tool_runtime.tools.base import Arguments, Tool, ToolContext
from agent_runtime.tool_runtime.tools.shell.capture import StreamCapture, split_budget_between
from agent_runtime.tool_runtime.tools.shell.process import (
    OutputPump,
    ProcessTree,
    command_environment,
    in_thread,
    process_exit,
    spawn,
    write_stdin,
)
from contracts.enums import Capability, ToolName
from contracts.errors import ErrorCode
from contracts.tools import ToolArtifact

__all__ = ["RunCommand", "RunCommandArguments"]

DEFAULT_TIMEOUT_SECONDS = 300
MAX_TIMEOUT_SECONDS = 600
#: After the shell exits, how long its output may stay open before the holders count as leftovers.
LEFTOVER_GRACE_SECONDS = 1.0
#: After the tree was killed, how long to wait for the pipes to close before giving up on them.
_DRAIN_SECONDS = 5.0

# Kept in a set so that a shielded clean-up survives a second cancellation (asyncio holds tasks
# only weakly).
_cleanups: set[asyncio.Task[None]] = set()


class RunCommandArguments(Arguments):
    command: str = Field(min_length=1, description="Shell command to execute")
    cwd: str | None = Field(
        default=None, description="Working directory (absolute path). Default: workspace root"
    )
    timeout: int = Field(
        default=DEFAULT_TIMEOUT_SECONDS,
        ge=1,
        le=MAX_TIMEOUT_SECONDS,
        description="Timeout in seconds, 1 to 600. Default: 300",
    )
    stdin: str | None = Field(default=None, description="Standard input to pipe to the command")


class RunCommand(Tool[RunCommandArguments]):
    name = ToolName.RUN_COMMAND.value
    capability = Capability.SHELL_EXEC
    description = (
        "Execute a shell command and return stdout, stderr, and exit code. "
        "The command runs non-interactively; on timeout its whole process tree is killed."
    )
    arguments = RunCommandArguments

    def __init__(
        self,
        *,
        kill_grace_seconds: float = 5.0,
        leftover_grace_seconds: float = LEFTOVER_GRACE_SECONDS,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._kill_grace = kill_grace_seconds
        self._leftover_grace = leftover_grace_seconds
        self._environ = environ

    async def run(self, args: RunCommandArguments, context: ToolContext) -> ToolOutput:
        command = args.command
        if not command.strip():
            raise ToolFailure(ErrorCode.INVALID_REQUEST, "arguments.command must not be empty")
        if "\x00" in command:
            raise ToolFailure(ErrorCode.INVALID_REQUEST, "arguments.command must not contain NUL bytes")
        problem = context.platform.command_problem(command)
        if problem is not None:
            raise ToolFailure(ErrorCode.INVALID_REQUEST, f"arguments.command {problem}")
        stdin_data = None if args.stdin is None else _encoded(args.stdin, "arguments.stdin")
        cwd = self._working_directory(args, context)
        shell = context.platform.shell_command(command)
        run_id = secrets.token_hex(16)
        env = command_environment(os.environ if self._environ is None else self._environ, run_id)
        try:
            process = spawn(shell, cwd=cwd, env=env, with_stdin=stdin_data is not None)
        except OSError as exc:
            raise ToolFailure(
                ErrorCode.TOOL_EXECUTION_FAILED,
                f"Could not start the shell {shell.argv[0]}: {describe_os_error(exc)}",
            ) from exc
        assert process.stdout is not None
        assert process.stderr is not None
        stdout = StreamCapture(context.max_output_bytes, spool=context.spool, name="stdout")
        stderr = StreamCapture(context.max_output_bytes, name="stderr")
        loop = asyncio.get_running_loop()
        pump = OutputPump([(process.stdout, stdout), (process.stderr, stderr)])
        pumped = pump.start(loop)
        if stdin_data is not None:
            assert process.stdin is not None
            in_thread(loop, lambda: write_stdin(process.stdin, stdin_data), "cowork-stdin")  # type: ignore[arg-type]
        exited = process_exit(loop, process)
        tree = ProcessTree(process, run_id, context.platform, self._kill_grace)
        timed_out = leftovers = False
        try:
            try:
                async with asyncio.timeout(args.timeout):
                    await asyncio.shield(exited)
                    done, _ = await asyncio.wait({pumped}, timeout=self._leftover_grace)
                    leftovers = not done
            except TimeoutError:
                timed_out = True
            if timed_out or leftovers:
                await tree.terminate()
            await _drain(pumped, pump)
        except asyncio.CancelledError:
            await _stop_on_cancel(tree, pump, pumped)
            stdout.discard()
            raise
        exit_code = process.poll()
        text = _format(exit_code, stdout, stderr, context.max_output_bytes, timed_out, leftovers)
        if timed_out:
            stdout.discard()
            raise ToolFailure(
                ErrorCode.TOOL_EXECUTION_TIMEOUT,
                f"Command timed out after {_seconds(args.timeout)}",
                output_text=text,
            )
        artifact = stdout.artifact()
        artifacts: list[ToolArtifact] = [] if artifact is None else [artifact]
        return ToolOutput(text=text, artifacts=artifacts)

    @staticmethod
    def _working_directory(args: RunCommandArguments, context: ToolContext) -> str:
        if args.cwd is None:
            if context.workspace_root is not None and os.path.isdir(context.workspace_root):
                return context.workspace_root
            return os.getcwd()
        cwd = context.platform.normalize_path(
            args.cwd, field="arguments.cwd", workspace_root=context.workspace_root
        )
        if not os.path.isdir(cwd):
            raise ToolFailure(ErrorCode.INVALID_REQUEST, f"arguments.cwd is not an existing directory: {cwd}")
        return cwd


def _encoded(text: str, field: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolFailure(
            ErrorCode.INVALID_REQUEST, f"{field} is not valid Unicode text (it contains a lone surrogate)"
        ) from exc


async def _drain(pumped: asyncio.Future[None], pump: OutputPump) -> None:
    """Wait (bounded) for the output to end; a writer that escaped the kill does not hold us up."""
    done, _ = await asyncio.wait({pumped}, timeout=_DRAIN_SECONDS)
    if not done:
        pump.stop()
        await asyncio.wait({pumped}, timeout=1.0)


async def _stop_on_cancel(tree: ProcessTree, pump: OutputPump, pumped: asyncio.Future[None]) -> None:
    async def clean_up() -> None:
        await tree.terminate()
        await _drain(pumped, pump)

    task = asyncio.ensure_future(clean_up())
    _cleanups.add(task)
    task.add_done_callback(_cleanups.discard)
    # Shielded: a second cancellation must not stop the kill half-way; it carries on regardless.
    await asyncio.shield(task)


def _format(
    exit_code: int | None,
    stdout: StreamCapture,
    stderr: StreamCapture,
    max_output: int,
    timed_out: bool,
    leftovers: bool,
) -> str:
    """The output of seed 003 §4.4, stdout and stderr sharing ``maxOutputBytes`` (§7.1 truncation)."""
    out_budget, err_budget = split_budget_between(max_output, stdout.total, stderr.total)
    out_text = _without_final_newline(stdout.kept.render(out_budget))
    err_text = _without_final_newline(stderr.kept.render(err_budget))
    if leftovers:
        note = "[background processes that kept the output open were stopped]"
        err_text = f"{err_text}\n{note}" if err_text else note
    exit_line = f"Exit code: {_describe_exit(exit_code, timed_out)}"
    return f"{exit_line}\n--- stdout ---\n{out_text}\n--- stderr ---\n{err_text}"


def _seconds(count: int) -> str:
    return "1 second" if count == 1 else f"{count} seconds"


def _without_final_newline(text: str) -> str:
    return text[:-1] if text.endswith("\n") else text


def _describe_exit(code: int | None, timed_out: bool) -> str:
    if timed_out:
        return "none (killed after the timeout)"
    if code is None:
        return "unknown"
    if code < 0:
        try:
            return f"{code} (killed by {signal.Signals(-code).name})"
        except ValueError:
            return str(code)
    return str(code)
