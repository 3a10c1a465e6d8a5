"""The agent loop (seed 000 §4): one task, step by step, until the model is done, the task is cancelled
or fails, or the session has to pause."""

from __future__ import annotations

from .agent_loop import AgentLoop
from .context import LoopContext
from .runaway import RunawayGuard
from .task import TaskEnd, TaskOutcome, TaskRecord

__all__ = ["AgentLoop", "LoopContext", "RunawayGuard", "TaskEnd", "TaskOutcome", "TaskRecord"]
