"""Starting points for the LLM gateway settings: the services DESIGN.md names, and the offline demo model.

Endpoints are given the way the runtime takes them (``LLM_GATEWAY_ENDPOINT``: it appends
``/v1/messages`` or ``/chat/completions`` as needed) and ``api`` is its dialect (``LLM_GATEWAY_API``:
``anthropic`` or ``openai``). Everything a preset fills in stays editable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from desktop.launch.gateway import DEMO_MODEL

__all__ = ["CUSTOM", "DEMO", "PRESETS", "Preset", "preset_named"]

CUSTOM = "custom"
"""The preset id of settings that follow none of the presets."""


@dataclass(frozen=True)
class Preset:
    id: str
    name: str
    endpoint: str
    api: str
    model: str
    token: Literal["required", "optional", "none"]
    description: str


ANTHROPIC = Preset(
    id="anthropic",
    name="Anthropic",
    endpoint="https://api.anthropic.com",
    api="anthropic",
    model="claude-sonnet-4-5",
    token="required",
    description="Claude models through Anthropic's API. Needs an API key from console.anthropic.com.",
)
OPENAI = Preset(
    id="openai",
    name="OpenAI",
    endpoint="https://api.openai.com/v1",
    api="openai",
    model="gpt-4.1",
    token="required",
    description="GPT models through OpenAI's API. Needs an API key from platform.openai.com.",
)
OLLAMA = Preset(
    id="ollama",
    name="Ollama",
    endpoint="http://localhost:11434/v1",
    api="openai",
    model="llama3.1",
    token="none",
    description="Models running on this computer with Ollama: no key, nothing leaves the machine. "
    "Choose a model that supports tool calls and that you have pulled.",
)
LITELLM = Preset(
    id="litellm",
    name="LiteLLM",
    endpoint="http://localhost:4000",
    api="openai",
    model="gpt-4o",
    token="optional",
    description="Your LiteLLM proxy, in front of any provider. Use a model name the proxy serves and "
    "its key, if it asks for one.",
)
DEMO = Preset(
    id="demo",
    name="Offline demo model (not a real LLM)",
    endpoint="",
    api="anthropic",
    model=DEMO_MODEL,
    token="none",
    description="Scripted replies, to try Cowork without an account or a network: it is NOT a real "
    "LLM. It reads a file whose path you type, makes a small edit to a demo file of its own "
    "(cowork-demo.md) and runs a harmless echo command. Cowork starts it itself.",
)

PRESETS: tuple[Preset, ...] = (ANTHROPIC, OPENAI, OLLAMA, LITELLM, DEMO)


def preset_named(preset_id: str) -> Preset | None:
    """The preset with that id; ``None`` for ``custom`` or an unknown id."""
    return next((preset for preset in PRESETS if preset.id == preset_id), None)
