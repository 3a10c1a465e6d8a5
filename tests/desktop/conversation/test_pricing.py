"""Tokens and their estimated cost: usage added up per model from the runtime's figures, priced from
the table (cache tokens at their own rates), and an unknown price said rather than guessed."""

from __future__ import annotations

import math

import pytest

from desktop.conversation.pricing import (
    DEFAULT_PRICES,
    ModelPrice,
    PriceTable,
    PricingError,
    Usage,
    format_cost,
    format_tokens,
)
from desktop.settings.presets import PRESETS


def completed(model: str, inputs: int, outputs: int, **cache: int) -> dict[str, object]:
    return {"model": model, "inputTokens": inputs, "outputTokens": outputs, "latencyMs": 5, **cache}


def test_usage_adds_up_every_kind_of_token_per_model() -> None:
    usage = Usage()
    usage.add_call(completed("claude-sonnet-4-5", 1000, 200, cacheReadTokens=4000, cacheWriteTokens=300))
    usage.add_call(completed("claude-sonnet-4-5", 500, 100, cacheReadTokens=4300))
    usage.add_call(completed("gpt-4.1", 10, 20))
    sonnet = usage.by_model["claude-sonnet-4-5"]
    assert (
        sonnet.input_tokens,
        sonnet.output_tokens,
        sonnet.cache_read_tokens,
        sonnet.cache_write_tokens,
    ) == (
        1500,
        300,
        8300,
        300,
    )
    assert sonnet.calls == 2
    assert usage.total.total == 1500 + 300 + 8300 + 300 + 30
    assert usage.total.calls == 3


def test_the_cost_uses_each_kind_of_tokens_own_price() -> None:
    usage = Usage()
    usage.add_call(
        completed(
            "claude-sonnet-4-5", 1_000_000, 100_000, cacheReadTokens=2_000_000, cacheWriteTokens=400_000
        )
    )
    estimate = usage.estimate(PriceTable())
    # $3 input, $15 output, $0.30 cache read, $3.75 cache write per million tokens.
    assert estimate.known
    assert math.isclose(estimate.cost, 3.0 + 1.5 + 0.6 + 1.5)


def test_a_model_without_a_price_makes_the_estimate_unknown_naming_it() -> None:
    usage = Usage()
    usage.add_call(completed("gpt-4.1", 1_000_000, 0))
    usage.add_call(completed("my-private-model", 1_000_000, 1_000_000))
    estimate = usage.estimate(PriceTable())
    assert not estimate.known
    assert estimate.unpriced == ("my-private-model",)
    assert math.isclose(estimate.cost, 2.0), "the priced share is still counted"


def test_a_dated_release_costs_what_its_family_does_and_cache_defaults_to_the_input_price() -> None:
    table = PriceTable({"claude-sonnet-4-5": ModelPrice(3.0, 15.0, 0.3, 3.75), "gpt-x": ModelPrice(1.0, 2.0)})
    assert table.price_of("claude-sonnet-4-5-20250929") == table.prices["claude-sonnet-4-5"]
    assert table.price_of("claude-sonnet-4") is None
    assert table.price_of("claude-sonnet-4-5-mini") is None, "another model, not a release"
    assert PriceTable().price_of("gpt-4o-mini-2024-07-18") == DEFAULT_PRICES["gpt-4o-mini"]
    usage = Usage()
    usage.add_call(completed("gpt-x", 0, 0, cacheReadTokens=1_000_000, cacheWriteTokens=1_000_000))
    assert math.isclose(usage.estimate(table).cost, 2.0)


def test_every_preset_model_has_a_default_price() -> None:
    assert {preset.model for preset in PRESETS} <= set(DEFAULT_PRICES)


def test_the_table_round_trips_through_its_wire_form() -> None:
    table = PriceTable.of([("a", ModelPrice(1.5, 2.5, 0.1, None)), ("b", ModelPrice(0, 0, 0, 0))])
    assert table.to_wire() == {
        "a": {"input": 1.5, "output": 2.5, "cacheRead": 0.1},
        "b": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0},
    }
    assert PriceTable.from_wire(table.to_wire()) == table


@pytest.mark.parametrize(
    ("wire", "problem"),
    [
        ([], "not an object"),
        ({"m": 3}, "price of m is not an object"),
        ({"m": {"input": "3", "output": 1}}, "input price of m is not a number"),
        ({"m": {"input": 1}}, "output price of m is not a number"),
        ({"m": {"input": -1, "output": 1}}, "from 0 to"),
        ({"m": {"input": 1, "output": 1e9}}, "from 0 to"),
        ({" ": {"input": 1, "output": 1}}, "model name"),
    ],
)
def test_a_bad_table_is_refused_saying_what_is_wrong(wire: object, problem: str) -> None:
    with pytest.raises(PricingError, match=problem):
        PriceTable.from_wire(wire)


def test_a_model_listed_twice_is_refused() -> None:
    with pytest.raises(PricingError, match="listed twice"):
        PriceTable.of([("m", ModelPrice(1, 1)), (" m ", ModelPrice(2, 2))])


def test_figures_are_short_for_the_header() -> None:
    assert [format_tokens(n) for n in (950, 12_345, 4_560_000)] == ["950", "12.3k", "4.56M"]
    assert [format_cost(c) for c in (0, 0.0042, 1.234, 1234.5, 0.00001)] == [
        "$0.00",
        "$0.0042",
        "$1.23",
        "$1,234.50",
        "<$0.0001",
    ]
