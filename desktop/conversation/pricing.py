"""Tokens a conversation used and what they cost. Qt-free.

The runtime reports each model call's tokens in ``llm_request_completed`` (``inputTokens``,
``outputTokens`` and, from providers with prompt caching, ``cacheReadTokens`` and
``cacheWriteTokens``, which are not part of ``inputTokens``). :class:`Usage` adds them up per model;
a :class:`PriceTable` (US dollars per million tokens, kept in the settings file) turns them into an
estimate. A model the table does not know has an unknown price: the estimate says so rather than
guessing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from desktop.i18n import translate
from desktop.launch.gateway import DEMO_MODEL

__all__ = [
    "DEFAULT_PRICES",
    "Estimate",
    "ModelPrice",
    "ModelUsage",
    "PriceTable",
    "PricingError",
    "Usage",
    "format_cost",
    "format_tokens",
]

PER = 1_000_000
"""Prices are per this many tokens."""
MAX_PRICE = 10_000.0
"""No model costs more than this per million tokens; a larger figure is a typing mistake."""
MAX_MODEL_CHARS = 200
_RELEASE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)")


class PricingError(ValueError):
    """A price table that cannot be used; ``str()`` says what is wrong, for the user."""


@dataclass(frozen=True)
class ModelPrice:
    """US dollars per million tokens. A cache price of ``None`` costs as much as plain input."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(self, usage: ModelUsage) -> float:
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * cache_read
            + usage.cache_write_tokens * cache_write
        ) / PER

    def to_wire(self) -> dict[str, float]:
        wire = {"input": self.input, "output": self.output}
        if self.cache_read is not None:
            wire["cacheRead"] = self.cache_read
        if self.cache_write is not None:
            wire["cacheWrite"] = self.cache_write
        return wire


DEFAULT_PRICES: dict[str, ModelPrice] = {
    # The providers' list prices for the models the presets name and their close relatives; the
    # user edits them in Settings when theirs differ (a negotiated rate, a proxy's markup).
    "claude-sonnet-4-5": ModelPrice(3.0, 15.0, 0.30, 3.75),
    "claude-opus-4-1": ModelPrice(15.0, 75.0, 1.50, 18.75),
    "claude-haiku-4-5": ModelPrice(1.0, 5.0, 0.10, 1.25),
    "gpt-4.1": ModelPrice(2.0, 8.0, 0.50, None),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60, 0.10, None),
    "gpt-4o": ModelPrice(2.50, 10.0, 1.25, None),
    "gpt-4o-mini": ModelPrice(0.15, 0.60, 0.075, None),
    # Runs on this computer (Ollama) or is no model at all (the demo): nothing to pay.
    "llama3.1": ModelPrice(0.0, 0.0, 0.0, 0.0),
    DEMO_MODEL: ModelPrice(0.0, 0.0, 0.0, 0.0),
}


@dataclass
class ModelUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    calls: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(frozen=True)
class Estimate:
    cost: float
    """What the priced models cost, in US dollars."""
    unpriced: tuple[str, ...]
    """Models used that the price table does not know: their share is not in :attr:`cost`."""

    @property
    def known(self) -> bool:
        return not self.unpriced


@dataclass
class Usage:
    """A conversation's tokens, per model, as the runtime reported them call by call."""

    by_model: dict[str, ModelUsage] = field(default_factory=dict)

    def add_call(self, payload: Mapping[str, Any]) -> None:
        """One ``llm_request_completed`` payload."""
        model = str(payload.get("model") or "")
        if not model:
            return
        used = self.by_model.setdefault(model, ModelUsage())
        used.input_tokens += _count(payload.get("inputTokens"))
        used.output_tokens += _count(payload.get("outputTokens"))
        used.cache_read_tokens += _count(payload.get("cacheReadTokens"))
        used.cache_write_tokens += _count(payload.get("cacheWriteTokens"))
        used.calls += 1

    @property
    def total(self) -> ModelUsage:
        summed = ModelUsage()
        for used in self.by_model.values():
            summed.input_tokens += used.input_tokens
            summed.output_tokens += used.output_tokens
            summed.cache_read_tokens += used.cache_read_tokens
            summed.cache_write_tokens += used.cache_write_tokens
            summed.calls += used.calls
        return summed

    def estimate(self, prices: PriceTable) -> Estimate:
        cost = 0.0
        unpriced: list[str] = []
        for model, used in self.by_model.items():
            price = prices.price_of(model)
            if price is None:
                unpriced.append(model)
            else:
                cost += price.cost(used)
        return Estimate(cost, tuple(sorted(unpriced)))


@dataclass(frozen=True)
class PriceTable:
    prices: Mapping[str, ModelPrice] = field(default_factory=lambda: dict(DEFAULT_PRICES))

    def price_of(self, model: str) -> ModelPrice | None:
        """The model's price: by its exact name, else a dated release of a known model
        (``claude-sonnet-4-5-20250929``, ``gpt-4o-2024-08-06``) costs what that model does — but
        ``gpt-4o-mini`` is not ``gpt-4o``."""
        exact = self.prices.get(model)
        if exact is not None:
            return exact
        for name, price in self.prices.items():
            if model.startswith(name) and _RELEASE_SUFFIX.fullmatch(model[len(name) :]):
                return price
        return None

    def to_wire(self) -> dict[str, dict[str, float]]:
        return {model: price.to_wire() for model, price in sorted(self.prices.items())}

    @classmethod
    def from_wire(cls, data: object) -> PriceTable:
        """The settings file's ``prices`` object; :class:`PricingError` naming what is wrong."""
        if not isinstance(data, dict):
            raise PricingError(translate("Prices", "prices that are not an object of models"))
        return cls.of((str(model), _price_from_wire(str(model), value)) for model, value in data.items())

    @classmethod
    def of(cls, rows: Iterable[tuple[str, ModelPrice]]) -> PriceTable:
        """A table from ``(model, price)`` rows, checked: names given once, prices from 0 to
        :data:`MAX_PRICE`."""
        prices: dict[str, ModelPrice] = {}
        for model, price in rows:
            name = model.strip()
            if not name or len(name) > MAX_MODEL_CHARS:
                raise PricingError(
                    translate("Prices", "a model name must be 1 to {count} characters").format(
                        count=MAX_MODEL_CHARS
                    )
                )
            if name in prices:
                raise PricingError(
                    translate("Prices", "the model {model} is listed twice").format(model=name)
                )
            for figure in (price.input, price.output, price.cache_read, price.cache_write):
                if figure is not None and not (math.isfinite(figure) and 0 <= figure <= MAX_PRICE):
                    raise PricingError(
                        translate(
                            "Prices",
                            "the prices of {model} must be numbers from 0 to {most} dollars per million"
                            " tokens",
                        ).format(model=name, most=f"{MAX_PRICE:g}")
                    )
            prices[name] = price
        return cls(prices)


def format_tokens(count: int) -> str:
    """``950``, ``12.3k``, ``4.56M``: short enough for a header."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.2f}M"


def format_cost(dollars: float) -> str:
    """``$0.0042``, ``$1.23``: small amounts keep two significant digits."""
    if dollars == 0:
        return "$0.00"
    if dollars < 0.01:
        return f"${dollars:.2g}" if dollars >= 0.0001 else "<$0.0001"
    return f"${dollars:,.2f}"


def _price_from_wire(model: str, value: object) -> ModelPrice:
    if not isinstance(value, dict):
        raise PricingError(translate("Prices", "the price of {model} is not an object").format(model=model))

    def figure(key: str, *, required: bool) -> float | None:
        raw = value.get(key)
        if raw is None and not required:
            return None
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise PricingError(
                translate("Prices", "the {kind} price of {model} is not a number").format(
                    kind=key, model=model
                )
            )
        return float(raw)

    return ModelPrice(
        input=figure("input", required=True) or 0.0,
        output=figure("output", required=True) or 0.0,
        cache_read=figure("cacheRead", required=False),
        cache_write=figure("cacheWrite", required=False),
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
