"""What the programs of a command line do to its verifiability (seed 000 §8.4): builtins that run text as
code, shells and their options (bash(1), zsh(1), dash(1)), ``su``, ``find -exec``, variables that make
a program load other code (ld.so(8), dyld(1), bash(1), git(1)…), bash's evaluated subscripts, cmd.exe's
switches (``cmd /?``) and Windows programs that run commands given as text. Each refusal is asserted by
its exact reason."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.policy import analyse_command
from contracts.enums import OsFamily

LINUX, WINDOWS = OsFamily.LINUX, OsFamily.WINDOWS

EVAL_LIKE = [
    "eval", "source", ".", "trap", "alias", "fc", "sched", "zpty", "emulate", "autoload", "functions",
    "mapfile", "readarray", "enable", "bind", "complete", "compgen", "zmodload", "zle", "bindkey",
    "declare", "typeset", "local", "readonly", "let", "hash", "shopt", "set", "coproc", "setopt",
]  # fmt: skip


@pytest.mark.parametrize("name", EVAL_LIKE)
def test_a_builtin_that_runs_or_defines_code_is_unverifiable(name: str) -> None:
    # Quoted, so that reserved words (coproc) are read as command names, as bash does.
    analysis = analyse_command(f"ls && '{name}' x", LINUX)
    assert analysis.problems == (f"uses {name}, which runs or defines code the policy cannot see",)


@pytest.mark.parametrize(
    "name", ["powershell", "pwsh", "powershell_ise", "wsl", "cmd", "fish", "nu", "elvish"]
)
def test_a_shell_whose_syntax_is_not_parsed_is_unverifiable_on_posix(name: str) -> None:
    analysis = analyse_command(f"{name} -c 'ls'", LINUX)
    assert analysis.problems == (f"runs {name}, whose commands the policy cannot read",)


SHELLS = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "lksh"]


@pytest.mark.parametrize("shell", SHELLS)
def test_a_posix_shells_command_string_is_read_like_the_line_itself(shell: str) -> None:
    analysis = analyse_command(f"{shell} -c 'rm x | tee y'", LINUX)
    assert (analysis.programs, analysis.problems) == ((shell, "rm", "tee"), ())
    script = analyse_command(f"{shell} build.sh", LINUX)
    assert script.problems == (
        f"runs {shell} on a script or standard input, whose commands the policy cannot read",
    )


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("bash -e -c 'rm x'", ("bash", "rm")),
        ("bash -ec 'rm x'", ("bash", "rm")),
        ("bash -c -e 'rm x'", ("bash", "rm")),  # the string is the first operand after the options
        ("bash -o pipefail -c 'rm x'", ("bash", "rm")),
        ("bash -O extglob -c 'rm x'", ("bash", "rm")),
        ("bash +e -c 'rm x'", ("bash", "rm")),
        ("bash -abCefhimnuvxBHPklpretTVE -c 'rm x'", ("bash", "rm")),
        ("bash --login --noprofile --norc --posix --noediting --verbose -c 'rm x'", ("bash", "rm")),
        ("bash -c 'rm x' name arg", ("bash", "rm")),
        ("sh -c 'sh -c \"rm x\"'", ("sh", "sh", "rm")),
        ("BASH -c 'rm x'", ("BASH", "rm")),
        ("/bin/sh -c 'rm x'", ("sh", "rm")),
    ],
)
def test_shell_options_before_the_command_string_are_skipped(command: str, programs: tuple[str, ...]) -> None:
    analysis = analyse_command(command, LINUX)
    assert (analysis.programs, analysis.problems) == (programs, ())


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("bash", "runs bash on a script or standard input, whose commands the policy cannot read"),
        ("bash -- -c x", "runs bash on a script or standard input, whose commands the policy cannot read"),
        ("bash - -c x", "runs bash on a script or standard input, whose commands the policy cannot read"),
        ("bash +c x", "runs bash on a script or standard input, whose commands the policy cannot read"),
        ("bash -s", "runs bash reading commands from standard input"),
        ("bash -cs x", "runs bash reading commands from standard input"),
        ("bash -c", "runs bash -c without a command"),
        ("bash -c -- $CMD", "runs bash -c with a command computed when it runs"),
        ("bash -c $CMD", "passes bash an option computed when it runs"),
        ("bash $OPT -c x", "passes bash an option computed when it runs"),
        ("bash --rcfile x -c y", "passes bash an option the policy does not know: --rcfile"),
        ("bash -z -c y", "passes bash an option the policy does not know: -z"),
        ("bash -c 'eval x'", "uses eval, which runs or defines code the policy cannot see"),
    ],
)
def test_a_shell_that_hides_its_commands_is_unverifiable(command: str, problem: str) -> None:
    assert analyse_command(command, LINUX).problems[:1] == (problem,)


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("su -c 'rm x'", ("su", "rm")),
        ("su root -c 'rm x'", ("su", "rm")),
        ("su --command 'rm x'", ("su", "rm")),
        ("su --command='rm x'", ("su", "rm")),
        ("runuser -u web -c 'rm x'", ("runuser", "rm")),
    ],
)
def test_su_runs_its_command_string_through_a_shell(command: str, programs: tuple[str, ...]) -> None:
    analysis = analyse_command(command, LINUX)
    assert (analysis.programs, analysis.problems) == (programs, ())


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("su", "runs su, which opens a shell reading standard input"),
        ("su root", "runs su, which opens a shell reading standard input"),
        ("su -c", "runs su, which opens a shell reading standard input"),
        ("su $USER -c x", "passes su an argument computed when it runs"),
        ("runuser -c $CMD", "runs runuser -c with a command computed when it runs"),
    ],
)
def test_su_without_a_readable_command_is_unverifiable(command: str, problem: str) -> None:
    assert analyse_command(command, LINUX).problems == (problem,)


@pytest.mark.parametrize(
    ("command", "programs", "problems"),
    [
        ("find . -exec rm {} ';'", ("find", "rm"), ()),
        ("find . -execdir rm {} +", ("find", "rm"), ()),
        ("find . -ok rm {} ';'", ("find", "rm"), ()),
        ("find . -okdir rm {} ';'", ("find", "rm"), ()),
        ("find . -exec rm {} ';' -exec ls {} +", ("find", "rm", "ls"), ()),
        ("find . -name x -print", ("find",), ()),
        ("find . -fprint -exec rm {} ';'", ("find",), ()),  # -fprint takes the next word as its file
        ("find . -fls -exec -fprint0 -ok -fprintf -okdir ls", ("find",), ()),
        ("find . -exec rm {}", ("find",), ("has find -exec without its terminating ';' or '+'",)),
        ("find . -exec {} ';'", ("find",), ("has find -exec whose command name is a found file",)),
        ("find . -exec ./{}.sh ';'", ("find",), ("has find -exec whose command name is a found file",)),
    ],
)
def test_find_runs_each_exec_command(
    command: str, programs: tuple[str, ...], problems: tuple[str, ...]
) -> None:
    analysis = analyse_command(command, LINUX)
    assert (analysis.programs, analysis.problems) == (programs, problems)


CODE_VARIABLES = [
    "PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "ZDOTDIR",
    "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
    "NODE_OPTIONS", "PYTHONSTARTUP", "PYTHONPATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "LESSOPEN",
    "SUDO_ASKPASS", "SSH_ASKPASS", "BROWSER", "GIT_ASKPASS", "GIT_CONFIG_PARAMETERS", "CDPATH",
    "LD_BIND_NOW", "DYLD_FRAMEWORK_PATH", "BASH_FUNC_ls", "GIT_CONFIG_COUNT",
]  # fmt: skip


@pytest.mark.parametrize("variable", CODE_VARIABLES)
def test_setting_a_variable_that_loads_other_code_is_unverifiable(variable: str) -> None:
    reason = f"sets {variable}, which can make the shell or a program run other code"
    assert analyse_command(f"{variable}=x make", LINUX).problems == (reason,)
    assert analyse_command(f"export {variable}=x", LINUX).problems == (reason,)
    assert analyse_command(f"env {variable}=x make", LINUX).problems == (reason,)


@pytest.mark.parametrize("variable", ["HOME", "LANG", "CC", "MAKEFLAGS", "X_LD_PRELOAD", "LDFLAGS"])
def test_setting_an_ordinary_variable_keeps_the_line_verifiable(variable: str) -> None:
    analysis = analyse_command(f"{variable}=x make", LINUX)
    assert (analysis.programs, analysis.problems) == (("make",), ())


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("a[1]=x make", "assigns to an array element, whose subscript is evaluated as code"),
        ("export a[$(id)]=x", "assigns to an array element, whose subscript is evaluated as code"),
        ("read 'a[$(id)]'", "passes read a name with a subscript, which bash evaluates as code"),
        ("unset 'a[$(id)]'", "passes unset a name with a subscript, which bash evaluates as code"),
        ("test -v 'a[1]'", "passes test a name with a subscript, which bash evaluates as code"),
        ("export 'a[1]'", "passes export a name with a subscript, which bash evaluates as code"),
        ("getopts ab 'o[1]'", "passes getopts a name with a subscript, which bash evaluates as code"),
        ("wait 'a[1]'", "passes wait a name with a subscript, which bash evaluates as code"),
        ("test -v x", "uses test -v, which evaluates a variable name as code"),
        ("[ -R x ]", "uses [ -v, which evaluates a variable name as code"),
        ("printf -v x %s y", "uses printf -v, which evaluates a variable name as code"),
        ("printf -vx %s y", "uses printf -v, which evaluates a variable name as code"),
        ("printf 'a[1]'", None),  # printf's format is not a name
        ("printf %s x -v", None),
        ("wait $pid", "passes wait a computed name"),
        ("getopts ab $name", "passes getopts a computed name"),
        ("read -r line", None),
        ("test -f x", None),
        ("export A=1 B", None),
    ],
)
def test_builtins_that_take_variable_names_refuse_names_bash_would_evaluate(
    command: str, problem: str | None
) -> None:
    problems = analyse_command(command, LINUX).problems
    if problem is None:
        assert problems == ()
    else:
        assert problem in problems


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("ls/", "has a command name that does not name a program with certainty: 'ls/'"),
        ("/", "has a command name that does not name a program with certainty: '/'"),
    ],
)
def test_a_command_name_that_names_no_program_is_unverifiable(command: str, problem: str) -> None:
    assert analyse_command(command, LINUX).problems == (problem,)


# ------------------------------------------------------------------ Windows


WINDOWS_EVAL_LIKE = [
    "if", "for", "goto", "rem", "start", "forfiles", "runas", "schtasks", "at", "wmic", "doskey", "setlocal",
]  # fmt: skip


@pytest.mark.parametrize("name", WINDOWS_EVAL_LIKE)
def test_a_cmd_statement_or_program_that_runs_text_as_commands_is_unverifiable(name: str) -> None:
    analysis = analyse_command(f"dir & {name} x", WINDOWS)
    assert analysis.problems == (f"uses {name}, which runs commands the policy cannot see",)


@pytest.mark.parametrize("name", ["powershell", "pwsh", "powershell_ise", "wsl", "PowerShell.exe"])
def test_powershell_and_wsl_are_unverifiable_on_windows(name: str) -> None:
    folded = name.lower().removesuffix(".exe")
    assert analyse_command(f"{name} -c x", WINDOWS).problems == (
        f"runs {folded}, whose commands the policy cannot read",
    )


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("cmd /c dir", ("cmd", "dir")),
        ("cmd /C dir", ("cmd", "dir")),
        ("cmd /cdir", ("cmd", "dir")),  # whatever follows the switch starts the command
        ("cmd /k dir", ("cmd", "dir")),
        ("cmd /r dir", ("cmd", "dir")),
        ("cmd /q /d /a /u /s /x /y /e:on /e:off /f:on /f:off /v:off /c dir", ("cmd", "dir")),
        ("cmd /t:0a /c dir", ("cmd", "dir")),
        ("cmd /t:f /c dir", ("cmd", "dir")),
        ('cmd /c "dir & del x"', ("cmd", "dir", "del")),
        ('cmd /s /c ""C:\\My Tools\\run.exe" x"', ("cmd", "run")),
        ('cmd /c "C:\\My Tools\\run.exe"', ("cmd", "my", "run")),  # both of cmd's readings
        ('cmd /c "dir"', ("cmd", "dir")),
        ('bash -c "rm x"', ("bash", "rm")),
        ("call dir", ("call", "dir")),
    ],
)
def test_cmd_switches_are_read_as_cmd_documents_them(command: str, programs: tuple[str, ...]) -> None:
    analysis = analyse_command(command, WINDOWS)
    assert (analysis.programs, analysis.problems) == (programs, ())


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("cmd", "runs cmd reading commands from standard input"),
        ("cmd /q", "runs cmd reading commands from standard input"),
        ("cmd /v:on /c dir", "runs cmd with delayed expansion on"),
        ("cmd /v /c dir", "runs cmd with delayed expansion on"),
        ("cmd /z /c dir", "passes cmd an option the policy does not know: /z"),
        ("cmd /t:0g /c dir", "passes cmd an option the policy does not know: /t:0g"),
        ("cmd /t:123 /c dir", "passes cmd an option the policy does not know: /t:123"),
        ("call :label", "calls a batch label"),
        ("a,b", "has a command name that cmd.exe would split differently"),
        ("a;b", "has a command name that cmd.exe would split differently"),
        ("a=b", "has a command name that cmd.exe would split differently"),
        ("dir/w", "has a command name that cmd.exe would split differently"),
        ("PROGRA~1.EXE", "has a command name that does not name a program with certainty: 'PROGRA~1.EXE'"),
        ("x:y", "has a command name that does not name a program with certainty: 'x:y'"),
        ("...", "has a command name that does not name a program with certainty: '...'"),
    ],
)
def test_a_windows_line_that_hides_its_commands_is_unverifiable(command: str, problem: str) -> None:
    assert analyse_command(command, WINDOWS).problems[:1] == (problem,)


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("RM.EXE", "rm"),
        ("rm.com", "rm"),
        ("build.bat", "build"),
        ("build.Cmd", "build"),
        ("a.b.exe", "a.b"),
        ("x.exe.", "x"),
        ("x .exe", "x"),
        (".exe", ".exe"),  # only an extension: the name is the whole word
        ("tool.exe.bat", "tool.exe"),  # one extension is removed
        ('"C:\\Tools\\Ünï.exe"', "ünï"),
        ("C:\\tools\\git", "git"),
        ('"C:\\a,b\\x.exe"', "x"),  # inside quotes a comma is part of the name
    ],
)
def test_windows_program_names_are_folded_to_their_base_name(command: str, program: str) -> None:
    analysis = analyse_command(command, WINDOWS)
    assert analysis.programs == (program,)


def test_a_shell_string_is_read_up_to_the_nesting_limit() -> None:
    from agent_runtime.agent_host.policy.commands.programs import Collector, analyse_into

    within = Collector(windows=False)
    analyse_into("sh -c ls", within, depth=15)
    assert (within.programs, within.problems) == (["sh", "ls"], [])
    beyond = Collector(windows=False)
    analyse_into("sh -c ls", beyond, depth=16)
    assert (beyond.programs, beyond.problems) == (["sh"], ["is nested too deeply"])


def test_an_empty_line_is_refused_as_empty() -> None:
    assert analyse_command("  \t ", LINUX).problems == ("is empty",)
    assert analyse_command("", WINDOWS).problems == ("is empty",)
