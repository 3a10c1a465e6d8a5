"""How a POSIX command line is read for ``Shell.Exec`` (seed 000 §8.4), rule by rule from the shell's
grammar (POSIX XCU §2, with the bash and zsh forms an agent meets): quote removal, escapes, ``$'…'``
strings, expansions that compute a command name, command substitution in every position, compound
commands, here-documents and redirections. The programs are asserted exactly, in order; a refusal by
its exact reason."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.policy import analyse_command
from agent_runtime.agent_host.policy.commands.posix import parse_posix
from agent_runtime.agent_host.policy.commands.words import SimpleCommand, Unparseable
from contracts.enums import OsFamily

LINUX = OsFamily.LINUX


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        # quote removal and escapes: every spelling of rm is rm
        ("r''m x", ("rm",)),
        ('r""m x', ("rm",)),
        ("\\rm x", ("rm",)),
        ("r\\m x", ("rm",)),
        ("'rm' x", ("rm",)),
        ('"rm" x', ("rm",)),
        ('"r\\m" x', ("r\\m",)),  # inside double quotes a backslash before m stays
        ('"\\$x" y', ("$x",)),
        ('"a\\"b" c', ('a"b',)),
        ('"a\\\\b" c', ("a\\b",)),
        ('"a\\`b" c', ("a`b",)),
        ('"a\\\nb" c', ("ab",)),  # an escaped line break inside double quotes vanishes
        ("r\\\nm x", ("rm",)),  # and outside them
        ("ls \\\n -l", ("ls",)),
        ("$'rm' x", ("rm",)),
        ("$'\\x72m' x", ("rm",)),
        ("$'\\x72\\x6d' x", ("rm",)),
        ("$'\\162m' x", ("rm",)),  # octal
        ("$'\\0162m' x", ("\x0e2m",)),  # at most three octal digits after the backslash
        ("$'\\u0072m' x", ("rm",)),
        ("$'\\U00000072m' x", ("rm",)),
        ("$'\\x7' x", ("\x07",)),
        ("$'\\ue000' x", ("\ue000",)),  # the first code point after the surrogates
        ("$'\\ud7ff' x", ("\ud7ff",)),
        ("$'\\U0010ffff' x", ("\U0010ffff",)),
        ("$'r\\qm' x", ("r\\qm",)),  # an unknown escape stays as written
        ("$'\\xg' x", ("\\xg",)),  # \x without hex digits stays too
        ("$'\\cA' x", ("\x01",)),
        ("$'\\a\\b\\e\\E\\f\\n\\r\\t\\v' x", ("\a\b\x1b\x1b\f\n\r\t\v",)),
        ("$'\\\\\\'\\\"\\?' x", ("\\'\"?",)),
        ("$'a\\'b' x", ("a'b",)),
        ('$"rm" x', ("rm",)),  # a locale string is a double-quoted string
        ("echo $", ("echo",)),
        ("echo a$ b", ("echo",)),
        ("echo $=", ("echo",)),
        ("[ -f x ]", ("[",)),
        ("ls {}", ("ls",)),
        ("ls\u00a0-l", ("ls\u00a0-l",)),  # a no-break space does not split words
        ("ls\x0b-l x", ("ls\x0b-l",)),
        # separators and comments
        ("a; b", ("a", "b")),
        ("a & b", ("a", "b")),
        ("a && b || c", ("a", "b", "c")),
        ("a | b |& c", ("a", "b", "c")),
        ("a\nb", ("a", "b")),
        ("a # b; c", ("a",)),
        ("# only a comment\na", ("a",)),
        ("a&&\n\nb", ("a", "b")),
        ("a |\n b", ("a", "b")),
        ("! a", ("a",)),
        # substitutions, in every position
        ("echo $(rm x)", ("rm", "echo")),
        ("echo `rm x`", ("rm", "echo")),
        ('echo "$(rm x)"', ("rm", "echo")),
        ('echo "`rm x`"', ("rm", "echo")),
        ("echo `echo \\`rm x\\``", ("rm", "echo", "echo")),
        ('echo "`echo \\"a\\"`"', ("echo", "echo")),
        ("diff <(ls a) >(tee b)", ("ls", "tee", "diff")),
        ("echo ${x:-$(rm y)}", ("rm", "echo")),
        ('echo "${x:-"$(rm y)"}"', ("rm", "echo")),
        ("echo ${x:-`rm y`}", ("rm", "echo")),
        ("echo ${x:-'a}b'}", ("echo",)),
        ("echo ${x:-a\\}b}", ("echo",)),
        ("echo ${#x} ${#} ${#1} ${x} ${1} ${@} ${x%.*} ${x##*/} ${x//a/b} ${x^^} ${x,,}", ("echo",)),
        ("echo ${x:=a} ${x:+a} ${x:?a} ${x-a} ${x=a} ${x+a} ${x?a}", ("echo",)),
        ("echo $x $1 $@ $* $# $? $$ $! $-", ("echo",)),
        ("echo $((1 + 2)) $(( (1) * 3 ))", ("echo",)),
        ("echo $(echo $(ls))", ("ls", "echo", "echo")),
        ("x=$(rm a) ls", ("rm", "ls")),
        ("ls > $(rm a)", ("rm", "ls")),
        ("for f in $(rm a); do ls; done", ("rm", "ls")),
        ("case $(rm a) in x) ls;; esac", ("rm", "ls")),
        # compound commands
        ("(a; b)", ("a", "b")),
        ("(a) > out", ("a",)),
        ("{ a; b; }", ("a", "b")),
        ("{ a; } 2> err", ("a",)),
        ("if a; then b; elif c; then d; else e; fi", ("a", "b", "c", "d", "e")),
        ("if a\nthen b\nfi > out", ("a", "b")),
        ("while a; do b; done", ("a", "b")),
        ("until a; do b; done < in", ("a", "b")),
        ("for f in a b c; do ls $f; done", ("ls",)),
        ("for f; do ls; done", ("ls",)),
        ("for f do ls; done", ("ls",)),
        ("for f in a\ndo ls\ndone", ("ls",)),
        ("for f\nin a; do ls; done", ("ls",)),
        ("select f in a b; do ls; done", ("ls",)),
        ("case x in a) b;; (c|d) e;& f) g;;& *) h; esac", ("b", "e", "g", "h")),
        ("case x in\n a) b\n ;;\nesac", ("b",)),
        ("case x in a) b; esac > out", ("b",)),
        ("case x in esac", ()),
        # redirections
        ("a > out", ("a",)),
        ("a >> out 2>&1 < in", ("a",)),
        ("a 2> err", ("a",)),
        ("a &> out", ("a",)),
        ("a &>> out", ("a",)),
        ("a <> f", ("a",)),
        ("a <&3", ("a",)),
        ("a >&2", ("a",)),
        ("a >| f", ("a",)),
        ("a <<< word", ("a",)),
        ("a {fd}> f", ("a",)),
        ("> out a", ("a",)),
        ("> out", ()),
        ("a 2>x", ("a",)),
        ("a x2>y", ("a",)),
        # here-documents
        # (a body's substitutions run before the command that reads it)
        ("cat <<EOF\n$(rm x)\nEOF", ("rm", "cat")),
        ("cat <<EOF\n`rm x`\nEOF", ("rm", "cat")),
        ("cat <<EOF\n\\$(rm x)\nEOF", ("cat",)),
        ("cat <<'EOF'\n$(rm x)\nEOF", ("cat",)),
        ('cat <<"EOF"\n$(rm x)\nEOF', ("cat",)),
        ("cat <<\\EOF\n$(rm x)\nEOF", ("cat",)),
        ("cat <<-EOF\n\t$(rm x)\n\tEOF\nls", ("rm", "cat", "ls")),
        ("cat <<EOF\n\tEOF\nEOF\nls", ("cat", "ls")),  # without "-" a tab-indented line is body
        ("cat <<A <<B\n$(rm a)\nA\n$(rm b)\nB\nls", ("rm", "rm", "cat", "ls")),
        ("cat <<EOF; ls\nbody\nEOF", ("cat", "ls")),
        ("cat <<EOF\nEOF", ("cat",)),
        ("cat <<EOF\n${x:-$(rm y)}\nEOF", ("rm", "cat")),
    ],
)
def test_every_program_of_a_posix_line_is_found(command: str, programs: tuple[str, ...]) -> None:
    analysis = analyse_command(command, LINUX)
    assert analysis.problems == ()
    assert analysis.programs == programs


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        ("ls\x00", "contains a NUL character"),
        ("$'\\0' x", "has a NUL character in a $'…' string"),
        ("$'\\x00' x", "has a NUL character in a $'…' string"),
        ("$'\\ud800' x", "has an invalid \\u escape in a $'…' string"),
        ("$'\\U00110000' x", "has an invalid \\u escape in a $'…' string"),
        ("$'\\udfff' x", "has an invalid \\u escape in a $'…' string"),
        ("$'abc", "has an unbalanced $'…' string"),
        ("$'ab\\'", "has an unbalanced $'…' string"),
        ("ls 'x", "has an unbalanced single quote"),
        ('ls "x', "has an unbalanced double quote"),
        ('ls "x\\"', "has an unbalanced double quote"),
        ("ls `x", "has an unbalanced backtick"),
        ("ls \\", "ends with a lone backslash"),
        ("echo ${x:-'a}", "has an unbalanced single quote"),
        (
            "echo \"${x:-'a'}\"",
            "has a single quote inside a double-quoted ${…}, which shells read differently",
        ),
        ("echo ${x:-a", "has an unterminated ${…}"),
        ("echo ${!x}", "uses indirect expansion ${!…}, which can evaluate code"),
        ("echo ${x[$(id)]}", "uses a ${…} form (substring, subscript or flags) that can evaluate code"),
        ("echo ${x:1:2}", "uses a ${…} form (substring, subscript or flags) that can evaluate code"),
        ("echo ${(f)x}", "uses a ${…} form that is not supported"),
        ("echo $[1+1]", "uses $[ … ] arithmetic, which evaluates variables as code"),
        ("echo $((x))", "uses $(( … )) arithmetic on something other than plain numbers"),
        ("echo $((1)", "uses $(( … )) arithmetic on something other than plain numbers"),
        ("echo $(((1) + a))", "uses $(( … )) arithmetic on something other than plain numbers"),
        ("echo $((1) )", "uses $(( … )) arithmetic on something other than plain numbers"),
        ("((x++))", "uses an arithmetic command (( … )), which evaluates variables as code"),
        (
            "for ((i=0; i<3; i++)); do ls; done",
            "uses an arithmetic for loop, which evaluates variables as code",
        ),
        ("for $x in a; do ls; done", "has a for loop without a plain variable name"),
        ("for 'f' in a; do ls; done", "has a for loop without a plain variable name"),
        ("echo =ls", None),
        ("=ls", "uses zsh's =command expansion"),
        ("echo $=x", "uses the zsh expansion $=…"),
        ("echo $~x", "uses the zsh expansion $~…"),
        ("echo $^x", "uses the zsh expansion $^…"),
        ("echo $+x", "uses the zsh expansion $+…"),
        ("echo $={x}", "uses the zsh expansion $=…"),
        ("f() { ls; }", "defines a shell function"),
        ("function f { ls; }", "defines a shell function"),
        ("coproc ls", "starts a coprocess"),
        ("[[ -f x ]]", "uses [[ … ]], whose arithmetic operators evaluate variables as code"),
        ("ls ]]", None),
        ("]] ls", "has a stray ]]"),
        ("foreach x (a) ls; end", "uses zsh's foreach loop"),
        ("then ls", "has 'then' where a command should be"),
        ("fi", "has 'fi' where a command should be"),
        ("end", "has 'end' where a command should be"),
        ("always", "has 'always' where a command should be"),
        ("case x in a\n) ls;; esac", "expects ')' but has a line break"),
        ("if a; then b", "expects 'fi' but has an unexpected end"),
        ("if a; b; fi", "has 'fi' where a command should be"),
        ("if a; then b; else", "expects 'fi' but has an unexpected end"),
        ("while a; b; done", "has 'done' where a command should be"),
        ("while a; do b", "expects 'done' but has an unexpected end"),
        ("for f in a; ls; done", "expects 'do' but has 'ls'"),
        ("{ ls", "expects '}' but has an unexpected end"),
        ("(ls", "expects ')' but has an unexpected end"),
        ("case", "has a case statement without a word"),
        ("case x", "expects 'in' but has an unexpected end"),
        ("case x in a b) ls;; esac", "expects ')' but has 'b'"),
        ("case x in ;; esac", "has a case pattern that is not a word"),
        ("case x in a) ls )", "has unexpected ')' in a case statement"),
        ("ls ;; x", "has unexpected ';;'"),
        ("ls; ;", "has ';' where a command should be"),
        ("ls >", "has a redirection > without a target"),
        ("ls < ;", "has a redirection < without a target"),
        ("ls 2 >x", None),
        ("ls 2", None),
        ("cat <<EOF\nbody", "has a here-document that never reaches 'EOF'"),
        ("cat <<EOF", "has a here-document that is never terminated"),
        ("echo $(cat <<EOF)", "has a here-document that is never terminated"),
        ("echo $(ls", "expects ')' but has an unexpected end"),
        ("echo $(ls))", "has unexpected ')'"),
    ],
)
def test_a_posix_line_the_policy_cannot_read_for_sure_is_refused_with_its_reason(
    command: str, problem: str | None
) -> None:
    analysis = analyse_command(command, LINUX)
    if problem is None:
        assert analysis.problems == ()
    else:
        assert analysis.problems[:1] == (problem,)


@pytest.mark.parametrize(
    "command",
    [
        "ls $x",
        "ls ${x}",
        'ls "$x"',
        "ls *.py",
        "ls a?",
        "ls [ab]",
        "ls {a,b}",
        "ls {1..3}",
        "ls `x`",
        "ls $(x)",
    ],
)
def test_an_argument_computed_at_run_time_leaves_the_program_checkable(command: str) -> None:
    analysis = analyse_command(command, LINUX)
    assert analysis.programs[-1] == "ls"
    assert analysis.problems == ()


@pytest.mark.parametrize(
    "command",
    [
        "$x",
        "${x}",
        '"$x"',
        "l*",
        "l?",
        "[l]s",
        "{ls,rm}",
        "l{1..2}",
        "`echo ls`",
        "$(echo ls)",
        "$'l'$x",
        "<(echo ls)",
    ],
)
def test_a_command_name_computed_at_run_time_is_unverifiable(command: str) -> None:
    analysis = analyse_command(command, LINUX)
    assert (
        "computes a command name when it runs (a variable, substitution, glob or brace)" in analysis.problems
    )


def test_nesting_is_refused_past_the_limit_and_read_within_it() -> None:
    inside = analyse_command("echo " + "$(echo " * 16 + "ls" + ")" * 16, LINUX)
    assert (len(inside.programs), inside.problems) == (17, ())
    too_deep = analyse_command("echo " + "$(echo " * 17 + "ls" + ")" * 17, LINUX)
    assert too_deep.problems == ("is nested too deeply",)
    assert analyse_command("echo " + "`" * 2, LINUX).programs == ("echo",)


def test_a_parser_called_past_the_depth_limit_refuses_at_once() -> None:
    sink: list[SimpleCommand] = []
    with pytest.raises(Unparseable, match="nested too deeply"):
        parse_posix("ls", 17, sink)
    parse_posix("ls", 16, sink)
    assert [c.words[0].text for c in sink] == ["ls"]


def test_words_keep_their_raw_text_and_assignments() -> None:
    sink: list[SimpleCommand] = []
    parse_posix("A=1 B+=2 c[1]=3 'D=4' ls \"x y\"", 0, sink)
    (command,) = sink
    texts = [w.text for w in command.words]
    assert texts == ["A=1", "B+=2", "c[1]=3", "D=4", "ls", "x y"]
    assert [w.assignment for w in command.words] == ["A", "B", None, None, None, None]
    assert [w.subscript for w in command.words] == [False, False, True, False, False, False]
    assert command.words[5].raw == '"x y"'
    fast: list[SimpleCommand] = []
    parse_posix("A=1 ls -l", 0, fast)
    assert [(w.text, w.assignment, w.literal) for w in fast[0].words] == [
        ("A=1", "A", True),
        ("ls", None, True),
        ("-l", None, True),
    ]


def test_a_refusal_carries_its_reason_as_its_text() -> None:
    from agent_runtime.agent_host.policy.commands.words import Word

    assert str(Unparseable("has a reason")) == "has a reason"
    assert Unparseable("has a reason").reason == "has a reason"
    assert Word("ls", True).raw == ""
