"""``cowork``: the Cowork client's command line. With no command it opens the desktop app;
``cowork open DIR`` opens it on a project folder (``--task`` starts a task there at once);
``cowork exec`` runs one task headlessly."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop.settings.rules import ProjectRules

__all__ = ["main"]

EXEC_EPILOG = """\
exit status:
  0  the task completed
  1  the task failed
  2  invalid flags or arguments
  3  configuration: missing workspace, unreachable gateway or backend, unusable settings
  4  the token budget was exceeded
  5  the policy or an approval refused an action the task needed
  6  the session paused (the gateway or backend kept failing); --resume continues it
  7  the agent runtime stopped unexpectedly; --resume continues from its checkpoint
  130  cancelled with Ctrl-C (a second Ctrl-C stops at once)

gateway: --endpoint/--api/--model, else LLM_GATEWAY_ENDPOINT, LLM_GATEWAY_API, LLM_GATEWAY_MODEL and
LLM_GATEWAY_AUTH_TOKEN, else the desktop's saved settings (token in the OS keychain); --demo for the
offline demo model. backend: COWORK_BACKEND_URL and COWORK_BACKEND_TOKEN, else the local backend
(reused if running, else started for the run).
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cowork",
        description="Cowork, the local-first agent. Without a command, the desktop app opens.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    opened = commands.add_parser(
        "open",
        help="open the desktop app on a project folder",
        description="Open the desktop app with a new conversation in a project folder, as choosing the"
        " folder in the window does; with --task, the conversation starts on that task at once.",
    )
    opened.add_argument("folder", nargs="?", type=Path, metavar="DIR", help="the project folder (default: .)")
    opened.add_argument("--task", "-t", metavar="PROMPT", help="the first task to start in the conversation")
    run = commands.add_parser(
        "exec",
        help="run one task without the desktop window",
        description="Run one task in a workspace and print the assistant's answer as it streams "
        "(tool activity and status go to stderr).",
        epilog=EXEC_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("prompt", nargs="?", metavar="PROMPT", help="the task; - reads it from stdin")
    where = run.add_mutually_exclusive_group()
    where.add_argument("--workspace", "-C", type=Path, metavar="DIR", help="the project folder (default: .)")
    where.add_argument("--general", action="store_true", help="a general session, with no project folder")
    run.add_argument(
        "--approval-mode",
        choices=("always", "on_risky_actions", "never"),
        default="on_risky_actions",
        help="when to ask before a tool runs (default: on_risky_actions; never still obeys the policy)",
    )
    run.add_argument("--approve-all", action="store_true", help="without a terminal, approve every request")
    run.add_argument("--max-steps", type=_positive, metavar="N", help="end the task after N steps")
    run.add_argument("--json", action="store_true", help="print every session event as a JSON line")
    run.add_argument("--resume", metavar="SESSION_ID", help="continue a paused or interrupted session")
    run.add_argument("--demo", action="store_true", help="use the offline demo model (not a real LLM)")
    run.add_argument("--endpoint", metavar="URL", help="the LLM gateway's URL")
    run.add_argument("--api", choices=("anthropic", "openai"), help="the gateway's dialect")
    run.add_argument("--model", help="the model to ask for")
    run.set_defaults(exec_parser=run)
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError("must be between 1 and 1000")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or (arguments[0].startswith("-") and arguments[0] not in ("-h", "--help")):
        # The window; what follows is Qt's (-platform, -style …), not ours.
        if (problem := _window_problem(arguments)) is not None:
            return problem
        from desktop.app import run_app

        return run_app(arguments)
    args = parser.parse_args(arguments)
    if args.command == "open":
        return _open(parser, args)
    logging.basicConfig(level=os.environ.get("COWORK_LOG_LEVEL", "WARNING").upper(), stream=sys.stderr)
    return _exec(args.exec_parser, args)


def _open(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    folder = (args.folder or Path.cwd()).expanduser().absolute()
    if not folder.is_dir():
        parser.error(f"open: {folder} is not a folder")
    if args.task is not None and not args.task.strip():
        parser.error("open: --task needs a prompt")
    if (problem := _window_problem([])) is not None:
        return problem
    from desktop.app import OpenRequest, run_app

    return run_app([], opening=OpenRequest(folder=str(folder), task=args.task))


def _window_problem(qt_arguments: Sequence[str]) -> int | None:
    """The exit status when the window cannot open on this system, having said why; None if it can."""
    from desktop.app.platform_check import EXIT_MISSING_LIBRARIES, xcb_problem

    problem = xcb_problem(os.environ, qt_arguments)
    if problem is None:
        return None
    print(problem, file=sys.stderr)
    return EXIT_MISSING_LIBRARIES


def _exec(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from contracts.ipc import eventloop
    from desktop.headless.approvals import Approver, TerminalApprover, UnattendedApprover
    from desktop.headless.elicitations import DefaultsElicitor, Elicitor, TerminalElicitor
    from desktop.headless.render import JsonRenderer, Renderer, TextRenderer
    from desktop.headless.run import ExecOptions, run_exec
    from desktop.headless.terminal import TerminalLines

    prompt = args.prompt
    if prompt == "-":
        prompt = sys.stdin.read()
    if args.resume is None and not (prompt and prompt.strip()):
        parser.error("a PROMPT (or - to read it from stdin) is needed, unless --resume is given")
    if args.resume is not None and prompt is not None:
        parser.error("--resume continues the session's task; it takes no PROMPT")
    workspace = None if args.general else (args.workspace or Path.cwd()).expanduser().absolute()
    if prompt is not None and prompt.lstrip().startswith("/"):
        from desktop.conversation.commands import CommandError, expand_prompt

        try:
            prompt = expand_prompt(prompt, workspace)  # "/name args": a prompt command of the project
        except CommandError as exc:
            parser.error(str(exc))

    renderer: Renderer = (JsonRenderer if args.json else TextRenderer)(sys.stdout, sys.stderr)
    interactive = args.prompt != "-" and sys.stdin.isatty() and sys.stderr.isatty()
    save_rules: Callable[[Any], str] | None = None
    saved_rules: Callable[[], Sequence[dict[str, Any]]] = tuple
    if workspace is not None:
        project = workspace

        def save_rules(suggested: Any) -> str:
            saved = _project_rules().add_wire(project, suggested)
            return ", ".join(rule.describe() for rule in saved)

        def saved_rules() -> Sequence[dict[str, Any]]:
            return _project_rules().wire_for_project(project)

    approver: Approver
    elicitor: Elicitor = DefaultsElicitor()
    lines = TerminalLines(sys.stdin)
    if interactive:
        # An MCP server's question needs an answer even with --approve-all: it is not an approval.
        elicitor = TerminalElicitor(lines, sys.stderr, before_prompt=lambda: renderer.note(""))
    if interactive and not args.approve_all:
        approver = TerminalApprover(
            sys.stdin, sys.stderr, before_prompt=lambda: renderer.note(""), save_rules=save_rules, lines=lines
        )
    else:
        if args.approve_all:
            renderer.note("warning: --approve-all approves every action that asks for approval")
        approver = UnattendedApprover(args.approve_all)
    options = ExecOptions(
        prompt=prompt,
        workspace=workspace,
        approval_mode=args.approval_mode,
        max_steps=args.max_steps,
        permission_rules=saved_rules,
        resume=args.resume,
        demo=args.demo,
        endpoint=args.endpoint,
        api=args.api,
        model=args.model,
    )
    browser = _open_browser if interactive else None
    status = eventloop.run(
        run_exec(options, os.environ, renderer, approver, elicitor=elicitor, open_browser=browser)
    )
    # The answer is printed and the runtime gone: the interpreter's teardown would only delay the
    # prompt of the shell (or the script) that waits for this exit.
    eventloop.exit_now(status)


def _open_browser(url: str) -> None:
    """An MCP server's sign-in page, in the user's browser; on a thread, as the browser may take a while."""
    import threading
    import webbrowser

    threading.Thread(target=webbrowser.open, args=(url,), name="open-browser", daemon=True).start()


def _project_rules() -> ProjectRules:
    # Read while the runtime starts, not before it is spawned: the rules' models import pydantic.
    from desktop.settings.rules import ProjectRules
    from desktop.settings.store import SettingsStore

    return ProjectRules(SettingsStore())


if __name__ == "__main__":
    sys.exit(main())
