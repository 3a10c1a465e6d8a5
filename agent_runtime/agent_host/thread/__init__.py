"""The session's message thread, its token counts, budget and context window (seed 000 §5, §6.5).

Importing this package does not load the tokenizer: :class:`TiktokenTokenizer` loads its encoding on
first use or when :meth:`TiktokenTokenizer.start_loading` is called.
"""

from __future__ import annotations

from agent_runtime.agent_host.thread.budget import TokenBudget
from agent_runtime.agent_host.thread.context import (
    DEFAULT_RECENCY_WINDOW,
    ContextSelection,
    truncation_marker_text,
)
from agent_runtime.agent_host.thread.conversation import (
    Clock,
    ConversationThread,
    IdFactory,
    new_message_id,
    render_tool_result,
    utc_now,
)
from agent_runtime.agent_host.thread.errors import (
    BudgetExceeded,
    ContextWindowExceeded,
    ThreadError,
    ThreadOrderError,
    TokenizerUnavailable,
)
from agent_runtime.agent_host.thread.prompt import build_system_prompt
from agent_runtime.agent_host.thread.tokens import (
    DEFAULT_ENCODING,
    TiktokenTokenizer,
    Tokenizer,
    count_message,
    estimate_without_tokenizer,
)

__all__ = [
    "DEFAULT_ENCODING",
    "DEFAULT_RECENCY_WINDOW",
    "BudgetExceeded",
    "Clock",
    "ContextSelection",
    "ContextWindowExceeded",
    "ConversationThread",
    "IdFactory",
    "ThreadError",
    "ThreadOrderError",
    "TiktokenTokenizer",
    "TokenBudget",
    "Tokenizer",
    "TokenizerUnavailable",
    "build_system_prompt",
    "count_message",
    "estimate_without_tokenizer",
    "new_message_id",
    "render_tool_result",
    "truncation_marker_text",
    "utc_now",
]
