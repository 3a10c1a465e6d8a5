"""Programs that run other programs (seed 000 §8.4: every program a line would start is checked), read
option by option as their manuals describe them: env(1), sudo(8), doas(1), time(1), nice(1),
timeout(1), stdbuf(1), ionice(1), setsid(1), chroot(8), caffeinate(8), xargs(1), watch(1), zsh's
``repeat``/``noglob``/``nocorrect``/``-``, the shell builtins ``command``/``builtin``/``exec``, and
Windows' ``sudo``. An option that takes a value must not let its value pass for the command; an option
that runs hidden code, or one the policy does not know, makes the line unverifiable, with the reason."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.policy import Denied, ToolCallFacts, analyse_command
from contracts.enums import ApprovalMode, Capability, OsFamily
from tests.agent_runtime.agent_host.policy.bundles import NOW, enforcer

LINUX, MACOS, WINDOWS = OsFamily.LINUX, OsFamily.MACOS, OsFamily.WINDOWS

# (wrapper, flags without a value, short options with a value, long flags, long options with a value)
MANUALS: list[tuple[str, str, str, list[str], list[str]]] = [
    ("env", "i0v", "uCP", ["--ignore-environment", "--null", "--debug"], ["--unset", "--chdir"]),
    (
        "sudo",
        "AbEHnPSkBN",
        "CDghpRrTtUu",
        [
            "--askpass",
            "--background",
            "--preserve-env",
            "--set-home",
            "--non-interactive",
            "--stdin",
            "--reset-timestamp",
            "--bell",
            "--preserve-groups",
            "--no-update",
        ],
        [
            "--close-from",
            "--chdir",
            "--group",
            "--host",
            "--prompt",
            "--chroot",
            "--role",
            "--type",
            "--command-timeout",
            "--other-user",
            "--user",
        ],
    ),
    ("doas", "n", "u", [], []),
    ("command", "pvV", "", [], []),
    ("exec", "cl", "a", [], []),
    ("time", "apqv", "fo", ["--append", "--portability", "--quiet", "--verbose"], ["--format", "--output"]),
    ("nice", "", "n", [], ["--adjustment"]),
    ("stdbuf", "", "ioe", [], ["--input", "--output", "--error"]),
    ("ionice", "t", "cn", [], []),
    ("setsid", "cfw", "", ["--ctty", "--fork", "--wait"], []),
    ("caffeinate", "dimsu", "tw", [], []),
    (
        "xargs",
        "0prtxo",
        "adEILnPs",
        ["--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "--open-tty"],
        ["--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"],
    ),
]


def _cases() -> list[tuple[str, tuple[str, ...]]]:
    cases = []
    for wrapper, flags, valued, long_flags, long_valued in MANUALS:
        cases += [(f"{wrapper} -{letter} make -j4", (wrapper, "make")) for letter in flags]
        cases += [(f"{wrapper} -{letter} VALUE make -j4", (wrapper, "make")) for letter in valued]
        cases += [(f"{wrapper} -{letter}VALUE make -j4", (wrapper, "make")) for letter in valued]
        cases += [(f"{wrapper} {name} make -j4", (wrapper, "make")) for name in long_flags]
        cases += [(f"{wrapper} {name} VALUE make -j4", (wrapper, "make")) for name in long_valued]
        cases += [(f"{wrapper} {name}=VALUE make -j4", (wrapper, "make")) for name in long_valued]
    return cases


@pytest.mark.parametrize(("command", "programs"), _cases())
def test_each_documented_option_of_a_wrapper_is_skipped_and_the_command_found(
    command: str, programs: tuple[str, ...]
) -> None:
    analysis = analyse_command(command, LINUX)
    assert (analysis.programs, analysis.problems) == (programs, ())


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("env FOO=1 BAR=2 make", ("env", "make")),
        ("env -- make", ("env", "make")),
        ("sudo -u root -g wheel -- make", ("sudo", "make")),
        ("sudo -nEu root make", ("sudo", "make")),  # a cluster ending in a valued option takes the next word
        ("sudo -uroot make", ("sudo", "make")),
        ("SUDO make", ("SUDO", "make")),  # macOS volumes ignore case: SUDO is sudo
        ("nice -10 make", ("nice", "make")),
        ("nice -5 make", ("nice", "make")),
        ("nice -n 5 make", ("nice", "make")),
        ("timeout 10 make", ("timeout", "make")),
        ("timeout -s KILL -k 5 10 make", ("timeout", "make")),
        ("timeout --signal=KILL 10 make", ("timeout", "make")),
        ("timeout -v --preserve-status --foreground --verbose 10 make", ("timeout", "make")),
        ("timeout --kill-after 5 10 make", ("timeout", "make")),
        ("chroot /srv make", ("chroot", "make")),
        ("chroot --userspec=u:g --groups g --skip-chdir /srv make", ("chroot", "make")),
        ("repeat 3 make", ("repeat", "make")),
        ("noglob make *", ("noglob", "make")),
        ("nocorrect make", ("nocorrect", "make")),
        ("- make", ("-", "make")),
        ("builtin cd /", ("builtin", "cd")),
        ("nohup make &", ("nohup", "make")),
        ("xargs", ("xargs", "echo")),  # xargs runs echo when given no command
        ("xargs -0", ("xargs", "echo")),
        ("xargs -I {} make {}", ("xargs", "make")),
        ("xargs -i make", ("xargs", "make")),
        ("xargs -i{} make {}", ("xargs", "make")),
        ("xargs -l make", ("xargs", "make")),
        ("xargs -e make", ("xargs", "make")),
        # -e, -i and -l and their long forms take a value only when it is attached (xargs(1)).
        ("xargs --eof rm x", ("xargs", "rm")),
        ("xargs --eof=END rm x", ("xargs", "rm")),
        ("xargs --replace rm {}", ("xargs", "rm")),
        ("xargs --replace=X rm X", ("xargs", "rm")),
        ("xargs --max-lines rm x", ("xargs", "rm")),
        ("xargs --max-lines=2 rm x", ("xargs", "rm")),
        ("busybox rm x", ("busybox", "rm")),
        ("toybox rm x", ("toybox", "rm")),
        ("watch -n 5 make test", ("watch", "make")),
        ("watch -x make test", ("watch", "make")),
        ("watch --exec make test", ("watch", "make")),
        ("watch -b -c -d -e -g -p -t -w make", ("watch", "make")),
        ("watch --beep --color --differences --errexit --chgexit --precise make", ("watch", "make")),
        ("watch --interval 5 make", ("watch", "make")),
        ("watch --interval=5 make", ("watch", "make")),
        ("watch -q 2 make", ("watch", "make")),
        ("watch 'make && ls'", ("watch", "make", "ls")),
        ("watch", ("watch",)),
    ],
)
def test_wrappers_hand_over_to_the_command_they_run(command: str, programs: tuple[str, ...]) -> None:
    analysis = analyse_command(command, MACOS)
    assert (analysis.programs, analysis.problems) == (programs, ())


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("sudo -l", ("sudo",)),  # list privileges: no command runs
        ("sudo -v", ("sudo",)),
        ("sudo -K", ("sudo",)),
        ("sudo -V", ("sudo",)),
        ("doas -L", ("doas",)),
        ("ionice -p 42", ("ionice",)),
        ("ionice -P 42", ("ionice",)),
        ("ionice -u 1000", ("ionice",)),
        ("timeout 10", ("timeout",)),
        ("env", ("env",)),
        ("env -i", ("env",)),
    ],
)
def test_a_wrapper_option_that_runs_no_command_leaves_nothing_to_check(
    command: str, programs: tuple[str, ...]
) -> None:
    analysis = analyse_command(command, LINUX)
    assert (analysis.programs, analysis.problems) == (programs, ())


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("env -S 'rm -rf /'", "uses env -S, which runs code the policy cannot see"),
        ("env -iS 'rm x'", "uses env -S, which runs code the policy cannot see"),
        ("env --split-string='rm x'", "uses env --split-string, which runs code the policy cannot see"),
        ("sudo -s", "uses sudo -s, which runs code the policy cannot see"),
        ("sudo -i", "uses sudo -i, which runs code the policy cannot see"),
        ("sudo -e /etc/hosts", "uses sudo -e, which runs code the policy cannot see"),
        ("sudo --shell", "uses sudo --shell, which runs code the policy cannot see"),
        ("sudo --login", "uses sudo --login, which runs code the policy cannot see"),
        ("sudo --edit f", "uses sudo --edit, which runs code the policy cannot see"),
        ("doas -s", "uses doas -s, which runs code the policy cannot see"),
        ("doas -C /etc/doas.conf", "uses doas -C, which runs code the policy cannot see"),
        ("env -z make", "passes env an option the policy does not know: -z"),
        ("env --frobnicate make", "passes env an option the policy does not know: --frobnicate"),
        ("sudo -Q make", "passes sudo an option the policy does not know: -Q"),
        ("nice -x make", "passes nice an option the policy does not know: -x"),
        ("chroot /srv", "runs chroot without a command, which starts an interactive shell"),
        ("xargs {}", "has xargs run a command named by its input"),
        ("xargs -I X {}", "has xargs run a command named by its input"),
        ("env FOO=1 PATH=/tmp make", "sets PATH, which can make the shell or a program run other code"),
        (
            "sudo LD_PRELOAD=x.so make",
            "sets LD_PRELOAD, which can make the shell or a program run other code",
        ),
        ("env $CMD", "computes a command name when it runs (a variable, substitution, glob or brace)"),
        ("watch $CMD", "runs watch with a command computed when it runs"),
        ("watch -z make", "passes watch an option the policy does not know: -z"),
    ],
)
def test_a_wrapper_that_hides_its_command_is_refused_with_the_reason(command: str, problem: str) -> None:
    analysis = analyse_command(command, LINUX)
    assert problem in analysis.problems, analysis.problems


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        ("sudo make", ("sudo", "make")),
        ("sudo -E -N make", ("sudo", "make")),
        ("sudo -D C:\\x make", ("sudo", "make")),
        ("sudo --inline make", ("sudo", "make")),
        ("sudo --new-window --disable-input --preserve-env --normal make", ("sudo", "make")),
        ("sudo --chdir C:\\x make", ("sudo", "make")),
        ("sudo --chdir=C:\\x make", ("sudo", "make")),
        ("call make", ("call", "make")),
    ],
)
def test_windows_sudo_and_call_hand_over_to_their_command(command: str, programs: tuple[str, ...]) -> None:
    analysis = analyse_command(command, WINDOWS)
    assert (analysis.programs, analysis.problems) == (programs, ())


def test_windows_sudo_refuses_an_option_it_does_not_have() -> None:
    analysis = analyse_command("sudo -u root make", WINDOWS)
    assert analysis.problems == ("passes sudo an option the policy does not know: -u",)


@pytest.mark.parametrize(
    "command",
    [
        "echo 'rm -rf ~' | xargs -I{} sh -c '{}'",
        "xargs -I X sh -c 'echo X'",  # any replace string is replaced inside the shell's string
        "xargs -i sh -c 'cat {}'",
        "xargs --replace bash -c 'cat {}'",
        "xargs -0 -I{} sh -c 'cp {} /backup'",  # a file named "x; rm -rf ~" runs rm
        "find . -exec sh -c 'cat {}' ';'",  # find substitutes {} inside an argument too
        "find . -execdir bash -c '{}' +",
        "find . -exec su -c 'cat {}' ';'",
    ],
)
def test_a_shell_string_that_xargs_or_find_fills_from_its_input_is_unverifiable(command: str) -> None:
    # With a block list only, "rm" hidden in the input must not pass as a harmless line.
    analysis = analyse_command(command, LINUX)
    assert "runs a command line that xargs or find builds from its input" in analysis.problems


@pytest.mark.parametrize(
    "command",
    [
        "xargs sh -c 'cat \"$@\"' _",  # input arrives as arguments, never as code
        "find . -exec sh -c 'cat \"$1\"' _ {} ';'",
        "xargs -I{} cp {} /backup",
    ],
)
def test_input_passed_as_arguments_keeps_the_line_verifiable(command: str) -> None:
    assert analyse_command(command, LINUX).problems == ()


@pytest.mark.parametrize("command", ["busybox --list", "busybox --help", "toybox --help", "busybox -"])
def test_busybox_and_toybox_options_run_no_applet(command: str) -> None:
    analysis = analyse_command(command, LINUX)
    assert (analysis.programs, analysis.problems) == ((command.split()[0],), ())


def test_busybox_after_a_double_dash_runs_the_applet() -> None:
    assert analyse_command("busybox -- rm x", LINUX).programs == ("busybox", "rm")


@pytest.mark.parametrize(
    "command", ["xargs --eof rm -rf /", "xargs --max-lines rm x", "xargs --replace rm {}"]
)
def test_a_blocked_program_behind_an_xargs_option_is_blocked(command: str) -> None:
    policy = enforcer({"name": "Shell.Exec", "blockedCommands": ["rm"]})
    outcome = policy.check(
        ToolCallFacts("RunCommand", {"command": command}),
        Capability.SHELL_EXEC,
        now=NOW,
        approval_mode=ApprovalMode.NEVER,
    )
    assert outcome == Denied("Command is blocked: rm")


WRAPPERS = [
    "env", "sudo", "doas", "command", "exec", "time", "nice", "timeout", "stdbuf", "ionice", "setsid",
    "chroot", "caffeinate", "repeat", "xargs", "builtin", "nohup", "noglob", "nocorrect", "watch",
]  # fmt: skip


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_an_option_no_manual_lists_is_refused_by_every_wrapper(wrapper: str) -> None:
    analysis = analyse_command(f"{wrapper} -X make", LINUX)
    assert analysis.problems == (f"passes {wrapper} an option the policy does not know: -X",)
    assert analyse_command(f"{wrapper} --x make", LINUX).problems == (
        f"passes {wrapper} an option the policy does not know: --x",
    )


def test_windows_sudo_refuses_an_unknown_short_option_too() -> None:
    assert analyse_command("sudo -X make", WINDOWS).problems == (
        "passes sudo an option the policy does not know: -X",
    )


def test_a_wrapper_named_with_non_ascii_letters_that_fold_to_it_is_still_a_wrapper() -> None:
    # "ſ" (long s) case-folds to "s": on a case-insensitive volume ſudo may well be sudo.
    analysis = analyse_command("ſudo -u root rm x", MACOS)
    assert (analysis.programs, analysis.problems) == (("ſudo", "rm"), ())


def test_watch_runs_its_words_through_a_shell_unless_told_to_exec_them() -> None:
    assert analyse_command("watch ls $X -x", LINUX).problems == (
        "runs watch with a command computed when it runs",
    )
    direct = analyse_command("watch -x ls $X", LINUX)
    assert (direct.programs, direct.problems) == (("watch", "ls"), ())
