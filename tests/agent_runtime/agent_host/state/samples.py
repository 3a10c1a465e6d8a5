"""Realistic checkpoints for the store's tests and its benchmark: a thread of user prompts, assistant
turns with tool calls and tool results of the sizes a coding session produces (~300–2,000 chars)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from contracts.approvals import ApprovalDecisionRecord
from contracts.checkpoint import Checkpoint, CheckpointTask
from contracts.enums import ApprovalDecision, CheckpointTaskStatus, Role, SessionStatus, ToolStatus
from contracts.messages import ConversationMessage
from contracts.tools import ToolCall

START = datetime(2026, 2, 21, 15, 0, tzinfo=UTC)
CODE = (
    "def handler(event, context):\n    body = json.loads(event['body'])\n"
    "    if not body.get('ok'):\n        raise ValueError(\"bad request: ünïcode ✓\")\n"
    "    return {'ok': True}\n"
)
PROSE = "I looked at the module and the retry logic needs a bounded backoff with jitter. "


def thread_messages(session_id: str, count: int, *, seed: int = 7) -> list[ConversationMessage]:
    """``count`` messages: a user prompt, then assistant tool calls answered by tool results."""
    rng = random.Random(seed)
    messages: list[ConversationMessage] = []
    step = 0
    while len(messages) < count:
        common: dict[str, Any] = {
            "message_id": f"msg_{len(messages):06d}",
            "session_id": session_id,
            "task_id": "task_001",
            "timestamp": START + timedelta(seconds=len(messages)),
        }
        if len(messages) % 20 == 0:
            text = "Refactor the API client and add tests for the retry logic. " * rng.randint(5, 30)
            messages.append(ConversationMessage(**common, role=Role.USER, content=text))
            continue
        step += 1
        call_id = f"call_{step:05d}"
        common["step_id"] = f"step_{step:03d}"
        if messages[-1].role is not Role.ASSISTANT:
            messages.append(
                ConversationMessage(
                    **common,
                    role=Role.ASSISTANT,
                    content=PROSE * rng.randint(4, 24),
                    token_count=rng.randint(80, 500),
                    tool_calls=[
                        ToolCall(
                            tool_call_id=call_id,
                            tool_name="ReadFile",
                            arguments={"path": f"/Users/dev/project/src/module_{step}.py", "limit": 400},
                        )
                    ],
                )
            )
        else:
            messages.append(
                ConversationMessage(
                    **common,
                    role=Role.TOOL,
                    content=CODE * rng.randint(2, 12),
                    token_count=rng.randint(100, 700),
                    tool_call_id=f"call_{step - 1:05d}",
                    tool_name="ReadFile",
                    tool_status=ToolStatus.SUCCEEDED,
                )
            )
    return messages


def sample_checkpoint(
    session_id: str = "sess_789", *, messages: int = 12, step: int = 3, seed: int = 7
) -> Checkpoint:
    return Checkpoint(
        checkpoint_version="1.0",
        session_id=session_id,
        workspace_id="ws_456",
        tenant_id="tenant_abc",
        user_id="user_123",
        session_status=SessionStatus.SESSION_RUNNING,
        task=CheckpointTask(
            task_id="task_001",
            prompt="Refactor the API client and add tests",
            status=CheckpointTaskStatus.RUNNING,
            step_count=step,
            max_steps=40,
        ),
        step_cursor=f"step_{step:03d}",
        thread=thread_messages(session_id, messages, seed=seed),
        session_tokens_used=12_540 + step,
        policy_bundle_version="2026-02-21.1",
        checkpointed_at=START + timedelta(minutes=step),
        approval_decisions=[
            ApprovalDecisionRecord(
                approval_id="appr_001",
                session_id=session_id,
                task_id="task_001",
                step_id="step_002",
                decision=ApprovalDecision.APPROVED,
                decided_at=START + timedelta(minutes=2),
            )
        ],
    )
