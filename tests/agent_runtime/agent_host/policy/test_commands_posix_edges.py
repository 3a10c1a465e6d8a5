"""Edges of the POSIX shell grammar (POSIX XCU §2.2–2.10, bash manual "Shell Syntax") where a parser
most easily misreads which programs a ``Shell.Exec`` line starts (seed 000 §8.4): a backslash as the
last character of a quoted or substituted text, escapes inside backquotes and ``${…}``, separators
right after a compound command or a literal ``$``, line breaks before ``do``, and the nesting limits.
Each case asserts the programs exactly, in order, or the refusal by its reason."""

from __future__ import annotations

import pytest

from agent_runtime.agent_host.policy import analyse_command
from contracts.enums import OsFamily

LINUX = OsFamily.LINUX
TOO_DEEP = "is nested too deeply"


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        # A separator right after a compound command ends it (XCU 2.9.4): the next command runs too.
        ("(a); b", ("a", "b")),
        ("(a) && b", ("a", "b")),
        ("(a) | b", ("a", "b")),
        ("{ a; } || b", ("a", "b")),
        ("{ a; } & b", ("a", "b")),
        ("if a; then b; fi; c", ("a", "b", "c")),
        ("while a; do b; done | c", ("a", "b", "c")),
        ("case x in y) a;; esac && b", ("a", "b")),
        # A "$" that starts no expansion is a literal "$" (XCU 2.6.2): what follows it keeps its meaning.
        ("echo $;rm x", ("echo", "rm")),
        ("echo $&&rm x", ("echo", "rm")),
        ('echo "$";rm x', ("echo", "rm")),
        ('echo "a$" | rm x', ("echo", "rm")),
        ("ls$ x", ("ls$",)),
        ('"ls$" x', ("ls$",)),
        ("echo ab$=.", ("echo",)),
        # Quoted braces are text, not a brace expansion (bash manual, Brace Expansion).
        ("'{a,b}' x", ("{a,b}",)),
        ('"{ls,rm}" x', ("{ls,rm}",)),
        # for name [in words] then ";" or line breaks, then do (XCU 2.9.4.3: sequential_sep linebreak).
        ("for f in a b;\ndo ls; done", ("ls",)),
        ("for f in a b\n\ndo ls; done", ("ls",)),
        ("for f;\ndo ls; done", ("ls",)),
        ("for f\n\ndo ls; done", ("ls",)),
        ("for f in;\n\ndo ls; done", ("ls",)),
        # Inside ${…} a backslash escapes the next character and quotes nest (XCU 2.6.2): a "}" or ";"
        # escaped or quoted there does not end the expansion, so nothing after it is a new command.
        ("echo ${x:-\\}; rm y}", ("echo",)),
        ("echo ${x:-\\'}", ("echo",)),
        ("echo ${x:-''}; ls", ("echo", "ls")),
        ("echo ${x:-'}; rm y'}", ("echo",)),
        ("echo ${x:-''} ${y:-'a'}", ("echo",)),
        # Inside backquotes a backslash is literal except before $, ` and \ (XCU 2.6.3), and before "
        # only when the backquotes are themselves in double quotes.
        ("echo `'\\X'`", ("\\X", "echo")),
        ("echo `'\\\"'`", ('\\"', "echo")),
        ('echo "`\'\\"\'`"', ('"', "echo")),
        ("echo `'\\$'`", ("$", "echo")),
        ("echo `'\\\\'`", ("\\", "echo")),
        # Inside ${…} double quotes nest too: the "}" in them is text.
        ('echo ${x:-"}"}', ("echo",)),
        ('echo ${x:-"}"}; ls', ("echo", "ls")),
        # A backslash-newline is removed before tokens are read (XCU 2.2.1), wherever it stands.
        ("\\\nls", ("ls",)),
        ("a;\\\nb", ("a", "b")),
        # A backslash quotes the next character even when that is the line's last (XCU 2.2.1).
        ("ls \\x", ("ls",)),
        ("l\\s", ("ls",)),
        # An unquoted here-document delimiter leaves the body's substitutions live, whatever its
        # letters (XCU 2.7.4): only a quote or backslash in it makes the body literal.
        ("cat <<EOX\n$(rm x)\nEOX", ("rm", "cat")),
        # $'\uHHHH' takes one to four hex digits (bash manual, ANSI-C Quoting): a fifth is text.
        ("$'\\u00725' x", ("r5",)),
        ("$'\\x725' x", ("r5",)),
        # A $'…' string ending in a control escape, alone or before an escaped backslash, is one word.
        ("echo $'\\c\\\\'", ("echo",)),
        ("echo $'\\c'", ("echo",)),
    ],
)
def test_the_programs_at_an_edge_of_the_grammar_are_found(command: str, programs: tuple[str, ...]) -> None:
    analysis = analyse_command(command, LINUX)
    assert (analysis.programs, analysis.problems) == (programs, ())


@pytest.mark.parametrize(
    ("command", "problem"),
    [
        # A backslash as the last character cannot escape anything: the quote or backquote stays open.
        ('echo "\\', "has an unbalanced double quote"),
        ('echo "a\\', "has an unbalanced double quote"),
        ("echo `ls\\", "has an unbalanced backtick"),
        ('echo "`ls\\', "has an unbalanced backtick"),
        # "for" needs a name (XCU 2.9.4.3); anything else is refused before the loop body is read.
        ("for", "has a for loop without a plain variable name"),
        ("for ; do ls; done", "has a for loop without a plain variable name"),
        ("for 1 in a; do ls; done", "has a for loop without a plain variable name"),
        ("for\n", "has a for loop without a plain variable name"),
        # bash reads 2<(…) as one word (the descriptor number glued to a process substitution) where a
        # plain sh reads a redirection: the two disagree about the command, so it is refused.
        ("ls 2<(rm x)", "has a file descriptor number without a redirection"),
        ("ls {fd}>(rm x)", "has a file descriptor number without a redirection"),
        # "$$" is the special parameter $ (XCU 2.5.2): the "(" after it is not a "$(".
        ("echo $$(rm x)", "has unexpected '('"),
        # NAME( starts a function definition whatever the name's first letter.
        ("X() { ls; }", "defines a shell function"),
        # "$(" as the line's last characters opens a substitution that never closes.
        ("echo $(", "expects ')' but has an unexpected end"),
        ('echo "$(', "expects ')' but has an unexpected end"),
        # A line that ends inside a quote or substitution that opened at its very first character.
        ("'ls", "has an unbalanced single quote"),
        ("$(ls", "expects ')' but has an unexpected end"),
        ("${x:-a", "has an unterminated ${…}"),
        ("`ls", "has an unbalanced backtick"),
    ],
)
def test_a_line_at_an_edge_of_the_grammar_is_refused_with_its_reason(command: str, problem: str) -> None:
    assert analyse_command(command, LINUX).problems[:1] == (problem,)


def test_nested_compound_commands_are_read_up_to_the_limit_and_refused_past_it() -> None:
    # Sixty-four levels of commands (subshells, groups, loops) at most: a wall against a line built
    # to exhaust the parser, far above anything written by hand.
    inside = analyse_command("( " * 63 + "ls" + " )" * 63, LINUX)
    assert (inside.programs, inside.problems) == (("ls",), ())
    past = analyse_command("( " * 64 + "ls" + " )" * 64, LINUX)
    assert past.problems == (TOO_DEEP,)
    assert analyse_command("{ " * 64 + "ls" + "; }" * 64, LINUX).problems == (TOO_DEEP,)
    # The limit counts the levels of the substitutions around the commands too ("$( (" with its
    # space: "$((" would open an arithmetic expansion).
    substituted = analyse_command("echo $( " + "( " * 62 + "ls" + " )" * 62 + ")", LINUX)
    assert (substituted.programs, substituted.problems) == (("ls", "echo"), ())
    too_deep = analyse_command("echo $( " + "( " * 63 + "ls" + " )" * 63 + ")", LINUX)
    assert too_deep.problems == (TOO_DEEP,)


def test_backquotes_count_towards_the_nesting_limit_like_dollar_parentheses() -> None:
    # Sixteen levels of substitution at most, whichever spelling each level uses.
    def line(levels: int) -> str:
        return "echo " + "$(echo " * levels + "`ls`" + ")" * levels

    inside = analyse_command(line(15), LINUX)
    assert (len(inside.programs), inside.problems) == (17, ())
    assert inside.programs[0] == "ls"
    assert analyse_command(line(16), LINUX).problems == (TOO_DEEP,)


@pytest.mark.parametrize(
    ("line", "refused"),
    [
        # bash's test takes a unary operator by position: a word computed at run time standing there
        # can become -v, and `test -v 'a[$(id)]'` runs the subscript as code.
        ('test -$x "$y"', True),
        ('test $op "$y"', True),
        ('[ "$op" "$y" ]', True),
        ('[ ! "$op" "$y" ]', True),
        # where no operator can stand, a computed word is only a value
        ('[ -n "$y" ]', False),
        ('[ "$a" = "$b" ]', False),
        ('[ "$x" ]', False),
        ('test ! -z "$a"', False),
    ],
)
def test_a_computed_word_where_test_reads_an_operator_is_refused(line: str, refused: bool) -> None:
    problems = analyse_command(line, OsFamily.LINUX).problems
    if refused:
        assert any("a computed word where -v could stand" in problem for problem in problems), problems
    else:
        assert problems == ()
