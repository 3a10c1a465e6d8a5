"""Scripts are validated on load, with errors that name the file and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_runtime.scripted_gateway import (
    ErrorTurn,
    RawTurn,
    ResponseTurn,
    ScriptError,
    load_script,
    parse_script,
)


def test_a_bare_list_is_shorthand_for_the_turns_of_a_script() -> None:
    script = parse_script(
        [{"text": "hi"}, {"kind": "error", "status": 429, "retryAfter": 2}, {"kind": "raw"}]
    )
    assert [type(turn) for turn in script.turns] == [ResponseTurn, ErrorTurn, RawTurn]
    assert not script.repeat_last_turn


def test_text_is_chunked_by_size_or_given_as_chunks() -> None:
    by_size, by_list = parse_script([{"text": "abcdefg", "chunkSize": 3}, {"chunks": ["ab", "", "c"]}]).turns
    assert isinstance(by_size, ResponseTurn)
    assert isinstance(by_list, ResponseTurn)
    assert by_size.text_chunks() == ["abc", "def", "g"]
    assert by_list.text_chunks() == ["ab", "c"]


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ([{"kind": "sing"}], "turns[0]"),
        ([{"toolCalls": [{"arguments": {}}]}], "turns[0].toolCalls[0].name"),
        ([{"text": "a", "chunks": ["b"]}], "turns[0]"),
        ([{"kind": "error", "status": 200}], "turns[0].status"),
        ([{"kind": "error", "status": 429, "retryAfter": -1}], "turns[0]"),
        ([{"text": "a", "chunkSize": 0}], "turns[0].chunkSize"),
        ([{"text": "a", "chunkSize": "4"}], "turns[0].chunkSize"),
        ([{"text": "a", "cutAfterChunks": 1, "streamError": {"afterChunks": 1}}], "turns[0]"),
        ([{"text": "a", "colour": "red"}], "turns[0].colour"),
        ({"turns": [], "repeatLastTurn": True}, "(root)"),
        ({"turn": []}, "turns"),
    ],
)
def test_invalid_scripts_are_refused_naming_the_field(data: Any, field: str) -> None:
    with pytest.raises(ScriptError) as caught:
        parse_script(data, "demo.json")
    message = str(caught.value)
    assert message.startswith("demo.json: ")
    assert f" {field}:" in f" {message.removeprefix('demo.json: ')}"


def test_a_script_file_is_loaded(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": [{"text": "hello"}], "repeatLastTurn": True}))
    script = load_script(path)
    assert script.repeat_last_turn
    assert len(script.turns) == 1


def test_a_file_that_is_not_json_is_refused_with_its_position(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[{"text": "a"},\n  oops]')
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    assert str(path) in str(caught.value)
    assert "line 2" in str(caught.value)


def test_a_missing_file_is_refused_clearly(tmp_path: Path) -> None:
    with pytest.raises(ScriptError) as caught:
        load_script(tmp_path / "absent.json")
    assert "absent.json" in str(caught.value)


def test_raw_headers_must_be_single_lines() -> None:
    with pytest.raises(ScriptError):
        parse_script([{"kind": "raw", "headers": {"x-a": "1\r\nset-cookie: evil"}}])
