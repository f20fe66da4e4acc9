"""Cost of a request from the model's price table (USD per million tokens)."""

from __future__ import annotations

from ama.ai.types import Model
from ama.messages import Cost, Usage


def calculate_cost(model: Model, usage: Usage) -> Cost | None:
    """The cost of ``usage`` on ``model``, or None when the model has no price.

    ``usage.input`` excludes cached tokens; cache reads and writes have their own prices.
    """
    price = model.cost
    if price is None:
        return None
    cost = Cost(
        input=usage.input * price.input / 1e6,
        output=usage.output * price.output / 1e6,
        cache_read=usage.cache_read * price.cache_read / 1e6,
        cache_write=usage.cache_write * price.cache_write / 1e6,
    )
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return cost
