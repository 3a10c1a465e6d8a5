"""SettledScanner: where streamed Markdown can be cut for good — after a blank line outside a code
fence — however the text was split into chunks."""

from __future__ import annotations

import pytest

from desktop.conversation.streaming import SettledScanner

TEXT = (
    "# Plan\n\nFirst paragraph.\n\n```python\nx = 1\n\ny = 2\n```\n\n- one\n- two\n\n"
    "~~~~\nnot closed by ```\n~~~~\n\nLast words"
)


def settled_all_at_once(text: str) -> int:
    return SettledScanner().feed(text)


def test_blocks_settle_after_a_blank_line_and_never_inside_a_code_fence() -> None:
    scanner = SettledScanner()
    assert scanner.feed("# Plan\n") == 0
    assert scanner.feed("# Plan\n\nFirst") == len("# Plan\n\n")
    text = "# Plan\n\nFirst paragraph.\n\n```python\nx = 1\n\ny"
    assert scanner.feed(text) == len("# Plan\n\nFirst paragraph.\n\n")
    assert scanner.in_code_block
    text += " = 2\n```\n\n- one"
    assert scanner.feed(text) == text.index("- one")
    assert not scanner.in_code_block


def test_a_fence_closes_only_with_its_own_character_and_length() -> None:
    text = "~~~~\nnot closed by ```\n~~~\n\nstill code\n~~~~\n\nafter"
    assert SettledScanner().feed(text) == text.index("after")


@pytest.mark.parametrize("size", [1, 2, 3, 7, 16, 1000])
def test_chunking_never_changes_where_the_text_settles(size: int) -> None:
    scanner = SettledScanner()
    for end in range(size, len(TEXT) + size, size):
        prefix = TEXT[:end]
        assert scanner.feed(prefix) == settled_all_at_once(prefix), prefix


def test_reset_starts_over_for_a_replaced_text() -> None:
    scanner = SettledScanner()
    scanner.feed("```\ncode\n\n")
    scanner.reset()
    assert scanner.feed("plain\n\nnext") == len("plain\n\n")
