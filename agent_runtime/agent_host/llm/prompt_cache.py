"""Prompt caching: the stable prefix of every request and what the session remembers about it.

Seed 002 "Prompt Cache State". Providers reuse the work done on a request's *prefix* when the next
request starts with the same bytes: Anthropic for the blocks up to a ``cache_control`` breakpoint,
OpenAI (and vLLM, DeepSeek, … on their own) for a long enough identical start. Our requests start with
the tool definitions and the system prompt — the **stable prefix** — followed by the conversation, so
the session keeps that prefix byte for byte the same from one request to the next and records:

* the stable system blocks (the system prompt as sent),
* ``stablePrefixHash``: SHA-256 over the provider family, the model, the system blocks and the tool
  definitions, all as the dialect renders them (without cache markers),
* ``toolSchemaHash``: SHA-256 over the tool definitions alone,
* the provider family and the cache mode (how this gateway is asked to cache),
* the latest invalidation reason: why the prefix last changed (``provider_family_changed``,
  ``model_changed``, ``tool_set_changed``, ``system_prompt_changed``, ``cache_mode_changed``).

The state is plain data (:meth:`PromptCacheState.to_wire` / :meth:`PromptCacheState.from_wire`, camelCase
JSON) kept in the checkpoint, so a resumed session knows its prefix and can tell whether a restart
changed it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

__all__ = [
    "CacheMode",
    "InvalidationReason",
    "PromptCacheState",
    "ProviderFamily",
    "StablePrefix",
    "cache_mode",
    "canonical_hash",
    "provider_family",
]

logger = logging.getLogger(__name__)

ProviderFamily = Literal[
    "anthropic", "bedrock_claude", "openai", "azure_openai", "gemini", "openrouter", "generic"
]
"""Seed 002's provider families ("Anthropic-family routes, Bedrock Claude routes, OpenAI routes, Azure
OpenAI routes, Gemini routes, OpenRouter routes, generic fallback"), told apart by the dialect, the
gateway's host and the model's name."""
PROVIDER_FAMILIES: tuple[ProviderFamily, ...] = get_args(ProviderFamily)

CacheMode = Literal["anthropic_cache_control", "openai_prompt_cache_key", "stable_prefix"]
"""How the gateway is asked to cache: Anthropic ``cache_control`` breakpoints; OpenAI's own API, which
caches long prefixes by itself and routes by ``prompt_cache_key``; anything else speaking the OpenAI
dialect (LiteLLM, vLLM, Ollama, OpenRouter…), which gets an unchanged prefix and no extra field — an
unknown field can make a strict server refuse the request."""

InvalidationReason = Literal[
    "provider_family_changed",
    "model_changed",
    "cache_mode_changed",
    "tool_set_changed",
    "system_prompt_changed",
]

_BEDROCK_MODEL = re.compile(r"(^|/)(bedrock/|(?:[a-z]{2}\.)?anthropic\.claude)", re.IGNORECASE)
_OPENAI_MODEL = re.compile(r"(^|/)(gpt-|o\d+($|[-.:_])|chatgpt-)", re.IGNORECASE)


def _host_is(host: str, domain: str) -> bool:
    host = host.lower().rstrip(".")
    return host == domain or host.endswith("." + domain)


def provider_family(dialect: str, host: str, model: str) -> ProviderFamily:
    """The provider family of a route: the gateway's host when it is a provider's own API, else what
    the model's name says (a gateway such as LiteLLM serves every family under one host)."""
    if _host_is(host, "anthropic.com"):
        return "anthropic"
    if _host_is(host, "openai.azure.com"):
        return "azure_openai"
    if _host_is(host, "api.openai.com"):
        return "openai"
    if _host_is(host, "openrouter.ai"):
        return "openrouter"
    name = model.strip().lower()
    if _BEDROCK_MODEL.search(name):
        return "bedrock_claude"
    if "claude" in name or dialect == "anthropic":
        return "anthropic"
    if "gemini" in name:
        return "gemini"
    if _OPENAI_MODEL.search(name):
        return "openai"
    return "generic"


def cache_mode(dialect: str, host: str) -> CacheMode:
    if dialect == "anthropic":
        return "anthropic_cache_control"
    if _host_is(host, "api.openai.com"):
        return "openai_prompt_cache_key"
    return "stable_prefix"


def canonical_hash(value: Any) -> str:
    """SHA-256 (hex) of ``value``'s canonical JSON: sorted keys, no spaces, UTF-8."""
    data = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(data.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class StablePrefix:
    """The stable prefix of one request, as the dialect renders it."""

    provider_family: ProviderFamily
    mode: CacheMode
    model: str
    system_blocks: tuple[str, ...]
    tool_schema_hash: str
    stable_prefix_hash: str

    @classmethod
    def of(
        cls,
        *,
        provider_family: ProviderFamily,
        mode: CacheMode,
        model: str,
        system_blocks: Sequence[str],
        rendered_system: Any,
        rendered_tools: Any,
    ) -> StablePrefix:
        """``rendered_system`` / ``rendered_tools``: the body's system part and tool list exactly as the
        dialect sends them, minus cache markers."""
        tool_hash = canonical_hash(rendered_tools)
        prefix_hash = canonical_hash(
            {"family": provider_family, "model": model, "system": rendered_system, "tools": rendered_tools}
        )
        return cls(provider_family, mode, model, tuple(system_blocks), tool_hash, prefix_hash)

    @property
    def cache_key(self) -> str:
        """OpenAI's ``prompt_cache_key``: requests with one prefix share a key, so the provider routes
        them to the machine that holds it. Derived from the hash: it carries no user data."""
        return f"cowork-{self.stable_prefix_hash[:32]}"


@dataclass(slots=True)
class PromptCacheState:
    """The session's prompt-cache bookkeeping (seed 002's ``promptCache`` bucket); see the module
    docstring. Empty until the first request."""

    provider_family: ProviderFamily | None = None
    mode: CacheMode | None = None
    model: str | None = None
    system_blocks: list[str] = field(default_factory=list)
    stable_prefix_hash: str | None = None
    tool_schema_hash: str | None = None
    invalidation_reason: InvalidationReason | None = None
    """Why the prefix last changed; ``None`` while it never has."""
    epoch: int = 0
    """How many distinct prefixes the session has sent, one after another (1 after the first request)."""

    def observe(self, prefix: StablePrefix) -> list[InvalidationReason] | None:
        """Record the prefix of the request about to be sent. Returns ``None`` when it is the one the
        session sent last (or the first ever), else every reason it changed — the first is kept as
        :attr:`invalidation_reason`."""
        if self.stable_prefix_hash == prefix.stable_prefix_hash:
            return None
        first = self.stable_prefix_hash is None
        reasons: list[InvalidationReason] = []
        if not first:
            if self.provider_family != prefix.provider_family:
                reasons.append("provider_family_changed")
            if self.model != prefix.model:
                reasons.append("model_changed")
            if self.mode != prefix.mode:
                reasons.append("cache_mode_changed")
            if self.tool_schema_hash != prefix.tool_schema_hash:
                reasons.append("tool_set_changed")
            if list(prefix.system_blocks) != self.system_blocks:
                reasons.append("system_prompt_changed")
            if not reasons:
                # Same parts, other bytes: the dialect renders them differently than before (an update).
                reasons.append("system_prompt_changed")
            self.invalidation_reason = reasons[0]
        self.provider_family = prefix.provider_family
        self.mode = prefix.mode
        self.model = prefix.model
        self.system_blocks = list(prefix.system_blocks)
        self.stable_prefix_hash = prefix.stable_prefix_hash
        self.tool_schema_hash = prefix.tool_schema_hash
        self.epoch += 1
        return None if first else reasons

    def to_wire(self) -> dict[str, Any]:
        return {
            "providerFamily": self.provider_family,
            "mode": self.mode,
            "model": self.model,
            "systemBlocks": list(self.system_blocks),
            "stablePrefixHash": self.stable_prefix_hash,
            "toolSchemaHash": self.tool_schema_hash,
            "invalidationReason": self.invalidation_reason,
            "epoch": self.epoch,
        }

    @classmethod
    def from_wire(cls, data: Mapping[str, Any] | None) -> PromptCacheState:
        """Tolerant of missing or foreign fields: a value that is not what this version writes is
        dropped (the next request simply records the prefix afresh), never an error."""
        if not isinstance(data, Mapping):
            return cls()
        family = data.get("providerFamily")
        mode = data.get("mode")
        reason = data.get("invalidationReason")
        blocks = data.get("systemBlocks")
        epoch = data.get("epoch")
        return cls(
            provider_family=family if family in PROVIDER_FAMILIES else None,
            mode=mode if mode in get_args(CacheMode) else None,
            model=_text(data.get("model")),
            system_blocks=[b for b in blocks if isinstance(b, str)] if isinstance(blocks, list) else [],
            stable_prefix_hash=_text(data.get("stablePrefixHash")),
            tool_schema_hash=_text(data.get("toolSchemaHash")),
            invalidation_reason=reason if reason in get_args(InvalidationReason) else None,
            epoch=epoch if isinstance(epoch, int) and not isinstance(epoch, bool) and epoch >= 0 else 0,
        )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def log_invalidation(session_id: str, prefix: StablePrefix, reasons: Sequence[str]) -> None:
    """One structured line when the prefix changes (the provider's cache starts over); the fields are
    the JSON line's own (``extra``)."""
    logger.info(
        "prompt cache prefix changed: %s",
        ", ".join(reasons),
        extra={
            "event": "prompt_cache_invalidated",
            "sessionId": session_id,
            "reason": reasons[0],
            "reasons": list(reasons),
            "providerFamily": prefix.provider_family,
            "model": prefix.model,
            "stablePrefixHash": prefix.stable_prefix_hash,
            "toolSchemaHash": prefix.tool_schema_hash,
        },
    )
