"""From parsed simple commands to the programs they run: through assignments, wrappers (``env``,
``sudo``, ``xargs``, ``find -exec`` …) and nested shells (``sh -c``, ``cmd /c``), to base names.

Every program that would start is recorded, the wrappers themselves included (``sudo`` is a program
an administrator may well want to list). Anything that would run code this module cannot see — a
command name computed at run time, ``eval``, a shell reading a script or standard input, an unknown
option of a wrapper — is recorded as a problem, and the command line as a whole is then unparseable.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from agent_runtime.agent_host.policy.commands.posix import parse_posix
from agent_runtime.agent_host.policy.commands.windows import parse_cmd
from agent_runtime.agent_host.policy.commands.words import MAX_DEPTH, SimpleCommand, Unparseable, Word

__all__ = ["Collector", "ProgramCall", "analyse_into"]

# ---------------------------------------------------------------------------------------- tables

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "lksh"})
"""POSIX shells whose ``-c`` string is parsed like the command line itself."""

EVAL_LIKE = frozenset(
    {"eval", "source", ".", "trap", "alias", "fc", "sched", "zpty", "emulate", "autoload", "functions"}
    | {"mapfile", "readarray", "enable", "bind", "complete", "compgen", "zmodload", "zle", "bindkey"}
    | {"declare", "typeset", "local", "readonly", "let", "hash", "shopt", "set", "coproc", "setopt"}
)
"""Builtins that run text as code, define commands, or change how later names resolve."""

OPAQUE_INTERPRETERS = frozenset(
    {"powershell", "pwsh", "powershell_ise", "wsl", "cmd", "fish", "nu", "elvish"}
)
"""Shells whose syntax is not parsed here (``cmd`` only on macOS/Linux, where it is not cmd.exe)."""

WINDOWS_EVAL_LIKE = frozenset(
    {"if", "for", "goto", "rem", "start", "forfiles", "runas", "schtasks", "at", "wmic", "doskey", "setlocal"}
)
"""cmd.exe statements and Windows programs that run commands given as text or later."""

CODE_VARIABLES = frozenset(
    {"PATH", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "ZDOTDIR"}
    | {"NODE_OPTIONS", "PYTHONSTARTUP", "PYTHONPATH", "PERL5OPT", "PERL5LIB", "RUBYOPT", "GIT_SSH_COMMAND"}
    | {"GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "LESSOPEN"}
    | {"SUDO_ASKPASS", "SSH_ASKPASS", "BROWSER", "GIT_ASKPASS", "CDPATH"}
)
"""Variables that make a shell or a program load or run other code (or find another program); the
dynamic loaders' (LD_PRELOAD, DYLD_INSERT_LIBRARIES…) and git's GIT_CONFIG_* by their prefixes."""

_CODE_VARIABLE_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG_")

MODIFIERS = frozenset({"command", "builtin", "exec", "noglob", "nocorrect", "-", "time", "nohup"})
"""Words that only change how the next command runs; not programs an allowlist needs to name."""


@dataclass(frozen=True, slots=True)
class _Wrapper:
    """How a program that runs another program takes its options (POSIX getopt style)."""

    flags: str = ""
    """Short options without a value."""
    valued: str = ""
    """Short options with a value (attached or in the next word)."""
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    """Long options with a value, as ``--name=value`` or ``--name value``."""
    operands: int = 0
    """Arguments between the options and the command (``timeout DURATION``, ``chroot DIR``)."""
    assignments: bool = False
    """``NAME=value`` words may come before the command (``env``, ``sudo``)."""
    hidden: str = ""
    """Short options that make it run code the parser cannot see (``sudo -s``, ``env -S``)."""
    long_hidden: frozenset[str] = frozenset()
    no_command: str = ""
    """Short options after which no command runs (``sudo -l``)."""
    optional_valued: str = ""
    """Short options whose value, if any, is attached (``xargs -i{}``)."""
    long_optional_valued: frozenset[str] = frozenset()
    """Long options whose value, if any, is attached with ``=`` (``xargs --replace[=R]``)."""
    numeric_flags: bool = False
    """``-10`` style options (``nice``)."""
    default: str | None = None
    """The program run when no command is given (``xargs`` runs ``echo``)."""
    needs_command: bool = False
    """Without a command it starts an interactive shell (``chroot``)."""


def _longs(*names: str) -> frozenset[str]:
    return frozenset(names)


POSIX_WRAPPERS: dict[str, _Wrapper] = {
    "env": _Wrapper(
        flags="i0v",
        valued="uCP",
        long_flags=_longs("--ignore-environment", "--null", "--debug"),
        long_valued=_longs("--unset", "--chdir"),
        assignments=True,
        hidden="S",
        long_hidden=_longs("--split-string"),
    ),
    "sudo": _Wrapper(
        flags="AbEHnPSkBN",
        valued="CDghpRrTtUu",
        long_flags=_longs(
            "--askpass", "--background", "--preserve-env", "--set-home", "--non-interactive", "--stdin",
            "--reset-timestamp", "--bell", "--preserve-groups", "--no-update",
        ),
        long_valued=_longs(
            "--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot", "--role", "--type",
            "--command-timeout", "--other-user", "--user",
        ),
        assignments=True,
        hidden="eis",
        long_hidden=_longs("--edit", "--login", "--shell"),
        no_command="lvKV",
    ),
    "doas": _Wrapper(flags="n", valued="u", hidden="sC", no_command="L"),
    "command": _Wrapper(flags="pvV"),
    "builtin": _Wrapper(),
    "exec": _Wrapper(flags="cl", valued="a"),
    "nohup": _Wrapper(),
    "noglob": _Wrapper(),
    "nocorrect": _Wrapper(),
    "-": _Wrapper(),
    "time": _Wrapper(
        flags="apqv",
        valued="fo",
        long_flags=_longs("--append", "--portability", "--quiet", "--verbose"),
        long_valued=_longs("--format", "--output"),
    ),
    "nice": _Wrapper(valued="n", long_valued=_longs("--adjustment"), numeric_flags=True),
    "timeout": _Wrapper(
        flags="v",
        valued="ks",
        long_flags=_longs("--preserve-status", "--foreground", "--verbose"),
        long_valued=_longs("--kill-after", "--signal"),
        operands=1,
    ),
    "stdbuf": _Wrapper(valued="ioe", long_valued=_longs("--input", "--output", "--error")),
    "ionice": _Wrapper(flags="t", valued="cn", no_command="pPu"),
    "setsid": _Wrapper(flags="cfw", long_flags=_longs("--ctty", "--fork", "--wait")),
    "chroot": _Wrapper(
        long_valued=_longs("--userspec", "--groups"),
        long_flags=_longs("--skip-chdir"),
        operands=1,
        needs_command=True,
    ),
    "caffeinate": _Wrapper(flags="dimsu", valued="tw"),
    "repeat": _Wrapper(operands=1),
    "xargs": _Wrapper(
        flags="0prtxo",
        valued="adEILnPs",
        optional_valued="eil",
        long_flags=_longs(
            "--null", "--no-run-if-empty", "--verbose", "--interactive", "--exit", "--open-tty",
        ),
        long_valued=_longs(
            "--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var",
        ),
        long_optional_valued=_longs("--eof", "--replace", "--max-lines"),
        default="echo",
    ),
    "busybox": _Wrapper(),
    "toybox": _Wrapper(),
}  # fmt: skip

WINDOWS_WRAPPERS: dict[str, _Wrapper] = {
    "call": _Wrapper(),
    "sudo": _Wrapper(
        flags="EN",
        valued="D",
        long_flags=_longs("--inline", "--new-window", "--disable-input", "--preserve-env", "--normal"),
        long_valued=_longs("--chdir"),
    ),
}

SHELL_FLAGS = "abCefhimnuvxBHPklpretTVEs"
"""Single-letter options of sh/bash/zsh that take no value; ``-o``/``-O`` take one, ``-c`` is special."""

# ---------------------------------------------------------------------------------------- names

_NO_COMMAND = -1

_WINDOWS_EXTENSIONS = (".exe", ".com", ".bat", ".cmd")
_SHORT_NAME = re.compile(r"~[0-9]")


def base_name(path: str, *, windows: bool) -> str | None:
    """The program a command word names: ``/bin/rm`` and ``./rm`` are ``rm``; on Windows also
    ``C:\\bin\\RM.EXE`` → ``rm``. None when the word cannot name a program with certainty."""
    if windows:
        name = re.split(r"[\\/]", path)[-1].rstrip(". ")
        if not name or ":" in name or _SHORT_NAME.search(name):
            return None
        folded = name.casefold()
        for extension in _WINDOWS_EXTENSIONS:
            if folded.endswith(extension) and len(folded) > len(extension):
                folded = folded[: -len(extension)].rstrip(". ")
                break
        return unicodedata.normalize("NFC", folded) or None
    name = path.rsplit("/", 1)[-1]
    return name or None


def _replace_option(text: str) -> bool:
    """Whether an xargs option word turns on replace mode (-I R, -i[R], --replace[=R])."""
    if text.startswith("--"):
        return text.split("=", 1)[0] == "--replace"
    return text.startswith("-") and ("I" in text or "i" in text)


def _lookup_key(name: str) -> str:
    # macOS volumes are case-insensitive by default, so "SUDO" runs sudo: recognise wrappers and
    # shells whatever their case, on every POSIX system (a false match only makes us stricter).
    if name.isascii():
        return name.lower()
    return unicodedata.normalize("NFC", name.casefold())


# ---------------------------------------------------------------------------------------- analysis


@dataclass(frozen=True, slots=True)
class ProgramCall:
    """One program the line would start, with the words it would receive (its name first)."""

    name: str
    words: tuple[Word, ...]
    extended: bool = False
    """More arguments are added when it runs (``xargs``, ``find -exec``), so ``words`` is a prefix."""
    assigned: bool = False
    """``NAME=value`` words came before it: it runs with a changed environment."""


@dataclass(slots=True)
class Collector:
    windows: bool
    programs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    calls: list[ProgramCall] = field(default_factory=list)
    """The programs again, with their words: saved permission rules match on these."""


def analyse_into(source: str, collector: Collector, *, depth: int = 0, windows: bool | None = None) -> None:
    """Parse ``source`` as a command line of the collector's platform (or of ``windows``) and record
    its programs and problems."""
    is_windows = collector.windows if windows is None else windows
    sink: list[SimpleCommand] = []
    try:
        (parse_cmd if is_windows else parse_posix)(source, depth, sink)
    except Unparseable as exc:
        collector.problems.append(exc.reason)
    except RecursionError:
        collector.problems.append("is nested too deeply")
    for command in sink:
        _Resolver(collector, depth, windows=is_windows).resolve(list(command.words))


class _Resolver:
    def __init__(self, collector: Collector, depth: int, *, windows: bool) -> None:
        self.out = collector
        self.depth = depth
        self.windows = windows
        self.extended = False
        self.substitutes: str | None = None
        """What xargs -I or find -exec replaces with its input in the command's words ("" when the
        replace string is not known, so any text may be replaced)."""

    def problem(self, reason: str) -> None:
        self.out.problems.append(reason)

    def resolve(self, words: list[Word]) -> None:
        given = len(words)
        while words and (words[0].assignment is not None or words[0].subscript) and not self.windows:
            self.assignment(words.pop(0))
        if not words:
            return
        head = words[0]
        if not head.literal:
            self.problem("computes a command name when it runs (a variable, substitution, glob or brace)")
            return
        if not self.windows and head.text.startswith("="):
            self.problem("uses zsh's =command expansion")
            return
        if self.windows and re.search(r"[,;=/]", "".join(head.raw.split('"')[::2])):
            self.problem("has a command name that cmd.exe would split differently")
            return
        name = base_name(head.text, windows=self.windows)
        if name is None:
            self.problem(f"has a command name that does not name a program with certainty: {head.text!r}")
            return
        self.out.programs.append(name)
        self.out.calls.append(ProgramCall(name, tuple(words), self.extended, len(words) != given))
        key = _lookup_key(name)
        arguments = words[1:]
        if self.windows:
            self.windows_program(key, arguments)
        else:
            self.posix_program(key, arguments)

    def assignment(self, word: Word) -> None:
        if word.subscript:
            self.problem("assigns to an array element, whose subscript is evaluated as code")
            return
        name = word.assignment or ""
        if name in CODE_VARIABLES or name.startswith(_CODE_VARIABLE_PREFIXES):
            self.problem(f"sets {name}, which can make the shell or a program run other code")

    # ------------------------------------------------------------------ POSIX

    def posix_program(self, key: str, arguments: list[Word]) -> None:
        if key in EVAL_LIKE:
            self.problem(f"uses {key}, which runs or defines code the policy cannot see")
        elif key in OPAQUE_INTERPRETERS:
            self.problem(f"runs {key}, whose commands the policy cannot read")
        elif key in SHELLS:
            self.shell(key, arguments)
        elif key == "find":
            self.find(arguments)
        elif key in ("su", "runuser"):
            self.su(key, arguments)
        elif key == "watch":
            self.watch(arguments)
        elif key in POSIX_WRAPPERS:
            self.wrapper(key, POSIX_WRAPPERS[key], arguments)
        elif key in ("export", "unset", "read", "test", "[", "printf", "getopts", "wait"):
            self.variable_builtin(key, arguments)

    def variable_builtin(self, key: str, arguments: list[Word]) -> None:
        # bash evaluates a subscript in a variable name as arithmetic, which runs $(…) inside it:
        # read 'a[$(id)]', test -v 'a[$(id)]', printf -v 'a[$(id)]' x.
        if any("[" in word.text for word in arguments) and key != "printf":
            self.problem(f"passes {key} a name with a subscript, which bash evaluates as code")
        if key in ("test", "[") and any(word.text in ("-v", "-R") for word in arguments):
            self.problem(f"uses {key} -v, which evaluates a variable name as code")
        if key in ("test", "[") and _computed_unary_operator(arguments[:-1] if key == "[" else arguments):
            self.problem(f"passes {key} a computed word where -v could stand, which evaluates a name as code")
        if key == "printf" and any(word.text.startswith("-v") for word in arguments[:2]):
            self.problem("uses printf -v, which evaluates a variable name as code")
        if key in ("wait", "getopts") and any(not word.literal for word in arguments):
            self.problem(f"passes {key} a computed name")
        if key == "export":
            for word in arguments:
                if word.assignment is not None or word.subscript:
                    self.assignment(word)

    def shell(self, key: str, arguments: list[Word]) -> None:
        # -c is a flag: the command string is the first operand after all the options, so in
        # "bash -c -e 'rm x'" it is 'rm x', not "-e".
        i = 0
        string_flag = False
        while i < len(arguments):
            word = arguments[i]
            text = word.text
            if not word.literal:
                self.problem(f"passes {key} an option computed when it runs")
                return
            if text in ("--", "-"):
                i += 1
                break
            if text.startswith("--"):
                if text in ("--login", "--noprofile", "--norc", "--posix", "--noediting", "--verbose"):
                    i += 1
                    continue
                self.problem(f"passes {key} an option the policy does not know: {text}")
                return
            if text[:1] in "-+" and len(text) > 1:
                letters = text[1:]
                if letters in ("o", "O"):
                    i += 2
                    continue
                if set(letters) - set(SHELL_FLAGS) - {"c"}:
                    self.problem(f"passes {key} an option the policy does not know: {text}")
                    return
                if "s" in letters:
                    self.problem(f"runs {key} reading commands from standard input")
                    return
                string_flag |= "c" in letters and text[0] == "-"
                i += 1
                continue
            break
        if not string_flag:
            self.problem(f"runs {key} on a script or standard input, whose commands the policy cannot read")
            return
        if i >= len(arguments):
            self.problem(f"runs {key} -c without a command")
            return
        command = arguments[i]
        if not command.literal:
            self.problem(f"runs {key} -c with a command computed when it runs")
            return
        self.nested(command.text, windows=False)

    def nested(self, source: str, *, windows: bool) -> None:
        if self.substitutes is not None and self.substitutes in source:
            # "xargs -I{} sh -c 'cp {} x'": a file named "a; rm -rf ~" becomes code.
            self.problem("runs a command line that xargs or find builds from its input")
        if self.depth + 1 > MAX_DEPTH:
            self.problem("is nested too deeply")
            return
        analyse_into(source, self.out, depth=self.depth + 1, windows=windows)

    def su(self, key: str, arguments: list[Word]) -> None:
        for i, word in enumerate(arguments):
            if not word.literal:
                self.problem(f"passes {key} an argument computed when it runs")
                return
            if word.text in ("-c", "--command") and i + 1 < len(arguments):
                target = arguments[i + 1]
                if not target.literal:
                    self.problem(f"runs {key} -c with a command computed when it runs")
                    return
                self.nested(target.text, windows=False)
                return
            if word.text.startswith("--command="):
                self.nested(word.text.split("=", 1)[1], windows=False)
                return
        self.problem(f"runs {key}, which opens a shell reading standard input")

    def watch(self, arguments: list[Word]) -> None:
        spec = _Wrapper(
            flags="bcdegptwx",
            valued="nq",
            long_flags=_longs(
                "--beep", "--color", "--differences", "--errexit", "--chgexit", "--precise", "--exec"
            ),
            long_valued=_longs("--interval"),
        )
        rest = self.options("watch", spec, arguments)
        if rest is None:
            return
        direct = any(word.text in ("-x", "--exec") for word in arguments[: len(arguments) - len(rest)])
        if not rest:
            return
        if direct:
            self.resolve(rest)
        elif all(word.literal for word in rest):
            # watch hands its arguments, joined by spaces, to sh -c.
            self.nested(" ".join(word.text for word in rest), windows=False)
        else:
            self.problem("runs watch with a command computed when it runs")

    def find(self, arguments: list[Word]) -> None:
        i = 0
        while i < len(arguments):
            text = arguments[i].text
            if text in ("-exec", "-execdir", "-ok", "-okdir"):
                end = next(
                    (j for j in range(i + 1, len(arguments)) if arguments[j].text in (";", "+")),
                    None,
                )
                if end is None:
                    self.problem(f"has find {text} without its terminating ';' or '+'")
                    return
                command = arguments[i + 1 : end]
                if command and "{}" in command[0].text:
                    self.problem(f"has find {text} whose command name is a found file")
                else:
                    self.extended = True  # "{}" and "+" add the found files to its arguments
                    self.substitutes = "{}"  # GNU find replaces it inside words too
                    self.resolve(command)
                    self.substitutes = None
                i = end + 1
                continue
            if text in ("-fls", "-fprint", "-fprint0", "-fprintf"):
                i += 1
            i += 1

    def options(self, key: str, spec: _Wrapper, arguments: list[Word]) -> list[Word] | None:
        """The words after the wrapper's options and operands; None after recording a problem."""
        i = 0
        while i < len(arguments):
            word = arguments[i]
            text = word.text
            if not word.literal:
                break
            if text == "--":
                i += 1
                break
            if spec.assignments and word.assignment is not None:
                self.assignment(word)
                i += 1
                continue
            if text.startswith("--") and len(text) > 2:
                name = text.partition("=")[0]
                if name in spec.long_hidden:
                    self.problem(f"uses {key} {name}, which runs code the policy cannot see")
                    return None
                if (
                    name in spec.long_flags
                    or name in spec.long_optional_valued
                    or (name in spec.long_valued and "=" in text)
                ):
                    i += 1
                    continue
                if name in spec.long_valued:
                    i += 2
                    continue
                self.problem(f"passes {key} an option the policy does not know: {name}")
                return None
            if text.startswith("-") and len(text) > 1 and key != "-":
                if spec.numeric_flags and text[1:].isdigit():
                    i += 1
                    continue
                consumed = self.short_options(key, spec, text[1:])
                if consumed is None:
                    return None
                if consumed == _NO_COMMAND:
                    return []
                i += 1 + consumed
                continue
            break
        rest = arguments[i:]
        if spec.operands:
            if len(rest) < spec.operands:
                return []
            rest = rest[spec.operands :]
        return rest

    def short_options(self, key: str, spec: _Wrapper, letters: str) -> int | None:
        """How many following words the option cluster consumes; ``_NO_COMMAND`` when it means no
        command runs; None after recording a problem."""
        for position, letter in enumerate(letters):
            if letter in spec.hidden:
                self.problem(f"uses {key} -{letter}, which runs code the policy cannot see")
                return None
            if letter in spec.no_command:
                return _NO_COMMAND
            if letter in spec.valued:
                return 0 if position + 1 < len(letters) else 1
            if letter in spec.optional_valued:
                return 0
            if letter not in spec.flags:
                self.problem(f"passes {key} an option the policy does not know: -{letter}")
                return None
        return 0

    def wrapper(self, key: str, spec: _Wrapper, arguments: list[Word]) -> None:
        first = arguments[0].text if arguments else ""
        if key in ("busybox", "toybox") and first.startswith("-") and first != "--":
            # --list, --help, --install…: an option in the applet's place runs no applet; after "--"
            # (the end of options, read below) the applet is checked.
            return
        rest = self.options(key, spec, arguments)
        if rest is None:
            return
        if key == "xargs":
            self.extended = True  # its input becomes more arguments of the command
            given = arguments[: len(arguments) - len(rest)]
            if any(_replace_option(word.text) for word in given):
                self.substitutes = ""  # the replace string may be any text: every word may change
        if not rest:
            if spec.default:
                self.out.programs.append(spec.default)
                default = Word(spec.default, True, spec.default)
                self.out.calls.append(ProgramCall(spec.default, (default,), True))
            elif spec.needs_command:
                self.problem(f"runs {key} without a command, which starts an interactive shell")
            return
        if key == "xargs" and "{" in rest[0].text:  # "{}" or any brace: a name the input fills in
            self.problem("has xargs run a command named by its input")
            return
        self.resolve(rest)

    # ------------------------------------------------------------------ Windows

    def windows_program(self, key: str, arguments: list[Word]) -> None:
        if key in WINDOWS_EVAL_LIKE:
            self.problem(f"uses {key}, which runs commands the policy cannot see")
        elif key in ("powershell", "pwsh", "powershell_ise", "wsl"):
            self.problem(f"runs {key}, whose commands the policy cannot read")
        elif key == "cmd":
            self.cmd(arguments)
        elif key in SHELLS:
            self.shell(key, arguments)
        elif key == "call":
            if arguments and arguments[0].text.startswith(":"):
                self.problem("calls a batch label")
            else:
                self.resolve(arguments)
        elif key in WINDOWS_WRAPPERS:
            rest = self.options(key, WINDOWS_WRAPPERS[key], arguments)
            if rest:
                self.resolve(rest)

    def cmd(self, arguments: list[Word]) -> None:
        for i, word in enumerate(arguments):
            option = word.text.casefold()
            if option[:2] in ("/c", "/k", "/r"):
                # "/cdir" is "/c dir": whatever follows the switch is the start of the command.
                # (An empty rest of the switch only adds a leading space, which cmd_string strips.)
                self.cmd_string(
                    " ".join([word.raw[2:], *(following.raw for following in arguments[i + 1 :])])
                )
                return
            if option in ("/v:on", "/v"):
                self.problem("runs cmd with delayed expansion on")
                return
            if option in (
                "/q",
                "/d",
                "/a",
                "/u",
                "/s",
                "/x",
                "/y",
                "/e:on",
                "/e:off",
                "/f:on",
                "/f:off",
                "/v:off",
            ):
                continue
            if re.fullmatch(r"/t:[0-9a-f]{1,2}", option):
                continue
            self.problem(f"passes cmd an option the policy does not know: {word.text}")
            return
        self.problem("runs cmd reading commands from standard input")

    def cmd_string(self, text: str) -> None:
        """cmd /c strips the first and last quote of its command unless there are exactly two quotes,
        with whitespace and no special character between them, around the name of a program file
        (``cmd /?``). Whether that file exists is unknown here, so in that case both readings are
        analysed, and whichever cmd picks has been checked."""
        text = text.strip()
        readings: list[str] = []
        if text.startswith('"'):
            last = text.rfind('"')  # 0 when the opening quote is the only one: inner is then empty
            inner = text[1:last]
            readings.append(inner + text[last + 1 :])
            if text.count('"') == 2 and re.search(r"\s", inner) and not re.search(r"[&<>()@^|]", inner):
                readings.append(text)
        else:
            readings.append(text)
        for reading in readings:
            self.nested(reading, windows=True)


def _computed_unary_operator(operands: list[Word]) -> bool:
    """Whether a word computed at run time stands where ``test`` reads a unary operator: a word such as
    ``-$x``, the first of two operands (``test "$op" "$name"``), or the one after ``!`` in three. Such a
    word can become ``-v``, and ``test -v 'a[$(id)]'`` runs the subscript as code."""
    if any(not word.literal and word.text.startswith("-") for word in operands):
        return True
    if len(operands) == 2:
        return not operands[0].literal
    return len(operands) == 3 and operands[0].text == "!" and operands[0].literal and not operands[1].literal
