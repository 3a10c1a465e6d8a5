"""Starting points for the LLM gateway settings: the services docs/architecture/index.md names, and the
offline demo model.

Endpoints are given the way the runtime takes them (``LLM_GATEWAY_ENDPOINT``: it appends
``/v1/messages`` or ``/chat/completions`` as needed) and ``api`` is its dialect (``LLM_GATEWAY_API``:
``anthropic`` or ``openai``). Everything a preset fills in stays editable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from desktop.i18n import QT_TRANSLATE_NOOP
from desktop.launch.gateway import DEMO_MODEL

__all__ = ["CUSTOM", "DEMO", "PRESETS", "Preset", "accepts_images", "preset_named"]

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
    images: bool = True
    """Whether the preset's model reads images; the desktop refuses images for it when it does not
    (another model typed in is tried, and the gateway's refusal shown)."""


ANTHROPIC = Preset(
    id="anthropic",
    name="Anthropic",
    endpoint="https://api.anthropic.com",
    api="anthropic",
    model="claude-sonnet-4-5",
    token="required",
    description=QT_TRANSLATE_NOOP(
        "Presets",
        "Claude models through Anthropic's API. Needs an API key from console.anthropic.com.",
    ),
)
OPENAI = Preset(
    id="openai",
    name="OpenAI",
    endpoint="https://api.openai.com/v1",
    api="openai",
    model="gpt-4.1",
    token="required",
    description=QT_TRANSLATE_NOOP(
        "Presets",
        "GPT models through OpenAI's API. Needs an API key from platform.openai.com.",
    ),
)
OLLAMA = Preset(
    id="ollama",
    name="Ollama",
    endpoint="http://localhost:11434/v1",
    api="openai",
    model="llama3.1",
    token="none",
    description=QT_TRANSLATE_NOOP(
        "Presets",
        "Models running on this computer with Ollama: no key, nothing leaves the machine. "
        "Choose a model that supports tool calls and that you have pulled.",
    ),
    images=False,  # llama3.1 reads text only
)
LITELLM = Preset(
    id="litellm",
    name="LiteLLM",
    endpoint="http://localhost:4000",
    api="openai",
    model="gpt-4o",
    token="optional",
    description=QT_TRANSLATE_NOOP(
        "Presets",
        "Your LiteLLM proxy, in front of any provider. Use a model name the proxy serves and "
        "its key, if it asks for one.",
    ),
)
DEMO = Preset(
    id="demo",
    name=QT_TRANSLATE_NOOP("Presets", "Offline demo model (not a real LLM)"),
    endpoint="",
    api="anthropic",
    model=DEMO_MODEL,
    token="none",
    description=QT_TRANSLATE_NOOP(
        "Presets",
        "Scripted replies, to try Cowork without an account or a network: it is NOT a real "
        "LLM. It reads a file whose path you type, makes a small edit to a demo file of its own "
        "(cowork-demo.md) and runs a harmless echo command. Cowork starts it itself.",
    ),
)

PRESETS: tuple[Preset, ...] = (ANTHROPIC, OPENAI, OLLAMA, LITELLM, DEMO)


def accepts_images(preset_id: str, model: str) -> bool:
    """Whether ``model`` reads images, as far as the presets know: False only for a preset's own model
    known to read text only; any other model is tried, and the gateway answers for it."""
    preset = preset_named(preset_id)
    return preset is None or preset.images or model != preset.model


def preset_named(preset_id: str) -> Preset | None:
    """The preset with that id; ``None`` for ``custom`` or an unknown id."""
    return next((preset for preset in PRESETS if preset.id == preset_id), None)
