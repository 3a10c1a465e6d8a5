"""Counting on demand: with the runtime's tokenizer (``TiktokenTokenizer(on_demand=True)``) the thread
estimates until exact counts could change a decision — three times the estimated request reaching the
window or the budget left — then loads the tokenizer and counts every estimated message again, so
what is sent is exactly what exact counting from the start would have sent."""

from __future__ import annotations

from agent_runtime.agent_host.thread import (
    ConversationThread,
    TiktokenTokenizer,
    TokenBudget,
    TokenizerUnavailable,
    estimate_without_tokenizer,
)
from tests.agent_runtime.agent_host.thread.support import Clock, WordTokenizer, call, ids, result

WORDS = "alpha beta gamma delta epsilon " * 20  # 100 words, 620 bytes


class OnDemandWords:
    """One token per word, loaded only when asked (counts the loads and the background starts)."""

    on_demand = True
    encoding = "words"

    def __init__(self, *, fails: bool = False) -> None:
        self.loaded = False
        self.loads = 0
        self.background_starts = 0
        self._fails = fails

        self.failed = False

    @property
    def settled(self) -> bool:
        return self.loaded or self.failed

    def start_loading(self) -> None:
        self.background_starts += 1

    def load(self) -> None:
        if self.loaded:
            return
        self.loads += 1
        if self._fails:
            self.failed = True
            raise TokenizerUnavailable("no data", encoding="words", cause="data file missing")
        self.loaded = True

    def count(self, text: str) -> int:
        self.load()
        return len(text.split())


def thread_of(tokenizer: object, limit: int = 1_000_000) -> ConversationThread:
    return ConversationThread("sess_1", tokenizer, Clock(), ids(), budget=TokenBudget(limit))  # type: ignore[arg-type]


def conversation(thread: ConversationThread, steps: int = 4) -> None:
    thread.add_user_message(WORDS, task_id="task_1")
    for step in range(steps):
        thread.add_assistant_message(
            WORDS, task_id="task_1", step_id=f"step_{step}", tool_calls=[call(f"c{step}", path=f"/p/{step}")]
        )
        thread.add_tool_result(result(f"c{step}", output=WORDS))
    thread.add_assistant_message("done", task_id="task_1", step_id="step_end")


def test_a_short_conversation_is_estimated_and_never_loads_the_tokenizer() -> None:
    tokenizer = OnDemandWords()
    thread = thread_of(tokenizer)
    conversation(thread)
    selection = thread.select_context(200_000, system_tokens=500, tools_tokens=500)
    assert tokenizer.loads == 0
    assert tokenizer.background_starts == 0
    assert selection.dropped_count == 0
    first = thread.messages[0]
    assert first.token_count == 4 + estimate_without_tokenizer(WORDS)  # the estimate, leaning high
    assert thread.counted_with is None, "estimated counts are not claimed as the encoding's"


def test_half_way_to_mattering_the_tokenizer_starts_loading_in_the_background() -> None:
    tokenizer = OnDemandWords()
    thread = thread_of(tokenizer)
    conversation(thread)
    total = thread.thread_token_count + 1000
    thread.select_context(total * 5, system_tokens=500, tools_tokens=500)  # 3× total < window ≤ 6× total
    assert (tokenizer.background_starts, tokenizer.loads) == (1, 0)


def test_once_estimates_could_matter_every_message_is_counted_exactly() -> None:
    tokenizer = OnDemandWords()
    thread = thread_of(tokenizer)
    exact = thread_of(WordTokenizer())
    conversation(thread)
    conversation(exact)
    refreshed: list[bool] = []
    thread.on_exact_counts = lambda: refreshed.append(True)
    window = thread.thread_token_count  # the estimate alone fills it: exact counts decide
    selection = thread.select_context(window, system_tokens=10, tools_tokens=10)
    expected = exact.select_context(window, system_tokens=10, tools_tokens=10)
    assert tokenizer.loads == 1
    assert refreshed == [True]
    assert [m.token_count for m in thread.messages] == [m.token_count for m in exact.messages]
    assert thread.thread_token_count == exact.thread_token_count
    assert thread.counted_with == "words"
    assert selection.dropped_count == expected.dropped_count == 0
    # And with a window that only fits the end: the same units are kept, calls with their results.
    tight = exact.thread_token_count // 2
    kept = thread.select_context(tight, system_tokens=10, tools_tokens=10).messages
    kept_exactly = exact.select_context(tight, system_tokens=10, tools_tokens=10).messages
    assert [m.message_id for m in kept] == [m.message_id for m in kept_exactly]
    assert len(kept) < len(thread.messages)
    thread.add_user_message("next task", task_id="task_2")
    assert thread.messages[-1].token_count == 4 + 2, "counted exactly from then on"


def test_a_small_budget_left_decides_like_a_small_window() -> None:
    tokenizer = OnDemandWords()
    thread = thread_of(tokenizer, limit=3000)
    conversation(thread)
    thread.select_context(200_000, system_tokens=10, tools_tokens=10)
    assert tokenizer.loads == 1
    assert thread.counted_with == "words"


def test_a_tokenizer_that_loaded_in_the_background_meanwhile_is_used_at_the_next_selection() -> None:
    tokenizer = OnDemandWords()
    thread = thread_of(tokenizer)
    conversation(thread, steps=1)
    tokenizer.loaded = True  # the background load finished
    thread.select_context(200_000, system_tokens=10, tools_tokens=10)
    assert thread.messages[0].token_count == 4 + 100
    assert thread.counted_with == "words"


def test_a_tokenizer_that_cannot_load_leaves_the_estimates_and_says_so() -> None:
    tokenizer = OnDemandWords(fails=True)
    thread = thread_of(tokenizer)
    conversation(thread, steps=1)
    estimated = [m.token_count for m in thread.messages]
    thread.select_context(10_000_000, system_tokens=10, tools_tokens=thread.thread_token_count * 5_000)
    assert [m.token_count for m in thread.messages] == estimated
    assert thread.tokenizer_failure is not None
    assert thread.counted_with is None
    thread.select_context(10_000_000, system_tokens=10, tools_tokens=thread.thread_token_count * 5_000)
    assert tokenizer.loads == 1, "one failed attempt, not one per selection"


def test_the_runtime_tokenizer_does_not_load_for_a_short_thread() -> None:
    tokenizer = TiktokenTokenizer(on_demand=True)
    thread = thread_of(tokenizer)
    conversation(thread, steps=2)
    thread.select_context(200_000, system_tokens=3000, tools_tokens=3000)
    assert not tokenizer.loaded
    assert not tokenizer.settled
