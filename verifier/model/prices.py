"""What a provider call cost: the price table per model, and the arithmetic over a reply's usage. Pure.

Prices are US dollars per million tokens, input and output, as the providers list them for their
standard tier (no batch, no cache discounts). They change: a steward overrides or adds a model in
config.json (`prices` on the model's block, docs/models.md), and a model in neither table costs
`None` (unknown), never a guess. A model name matches an entry exactly, or as a dated snapshot of
it (`claude-sonnet-4-20250514` matches `claude-sonnet-4`); the longest entry that matches wins, so
`gpt-4o-mini` is not priced as `gpt-4o`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import Field

from verifier.formats.base import Strict


class Price(Strict):
    """USD per million tokens."""

    input_per_mtok: float = Field(ge=0, le=10_000)
    output_per_mtok: float = Field(ge=0, le=10_000)


# As listed by the providers when this table was written; override in config.json when they move.
PRICES: Mapping[str, Price] = {
    "claude-opus-4-1": Price(input_per_mtok=15.0, output_per_mtok=75.0),
    "claude-opus-4": Price(input_per_mtok=15.0, output_per_mtok=75.0),
    "claude-sonnet-4": Price(input_per_mtok=3.0, output_per_mtok=15.0),
    "claude-sonnet-4-5": Price(input_per_mtok=3.0, output_per_mtok=15.0),
    "claude-haiku-4-5": Price(input_per_mtok=1.0, output_per_mtok=5.0),
    "gpt-4o": Price(input_per_mtok=2.5, output_per_mtok=10.0),
    "gpt-4o-mini": Price(input_per_mtok=0.15, output_per_mtok=0.6),
    "gpt-4.1": Price(input_per_mtok=2.0, output_per_mtok=8.0),
    "gpt-4.1-mini": Price(input_per_mtok=0.4, output_per_mtok=1.6),
}


@dataclass(frozen=True)
class Usage:
    """Tokens a reply says it used, and what they cost (None: the model's price is unknown)."""

    input_tokens: int
    output_tokens: int
    usd: float | None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def price_of(model: str, overrides: Mapping[str, Price] | None = None) -> Price | None:
    """The price of `model`: config's entry first, then the table; None when neither knows it."""
    for table in (overrides or {}, PRICES):
        matches = [name for name in table if model == name or model.startswith(name + "-")]
        if matches:
            return table[max(matches, key=len)]
    return None


def usage_of(model: str, input_tokens: int, output_tokens: int,
             overrides: Mapping[str, Price] | None = None) -> Usage:
    price = price_of(model, overrides)
    usd = None if price is None else round(
        (input_tokens * price.input_per_mtok + output_tokens * price.output_per_mtok) / 1_000_000, 6)
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens, usd=usd)
