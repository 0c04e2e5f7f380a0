"""What a run spent: tokens, cost and time, per step and in all.

The figures are the log's own (the readers carry them on :class:`~trajcheck.schemas.records.Usage` and a step's
``wall_seconds``); nothing is estimated. A cost the log does not record is computed only from a price list the
user gives (``score --prices FILE``), only where the log gives the tokens and the model, and the run's
``cost_source`` says which of the two a cost is:

| the log records | prices given | step ``cost_usd`` | run ``cost_usd`` | ``cost_source`` |
|---|---|---|---|---|
| a cost (on any step, or for the run) | either | as recorded | the run's recorded total, else the steps' sum | ``log`` |
| tokens and the model, no cost | a price for the model | tokens x price | the steps' sum (null when a step with tokens has no price) | ``prices`` |
| tokens, no cost, no model (or no price for it) | either | null | null | null |
| no tokens | either | null | null | null |

A run's token counts and seconds are its recorded totals where the log keeps them for the whole run, else the
sums over its steps (null where no step has the figure: null, never 0, when the log holds nothing).
"""  # noqa: E501  (the table above is Markdown: one row a line)

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Sequence

from ..base.reasons import CostSource
from ..schemas.records import Usage

#: Token prices are per this many tokens (the vendors' price lists are per million).
PER = 1_000_000


@dataclass(frozen=True)
class Price:
    """A model's price in USD per million tokens: input, output and, optionally, cached input (read from a
    cache; without a price of its own it costs the input price). ``model`` is a model name, compared without
    regard to case, or an ``fnmatch`` pattern (``claude-3-5-sonnet-*``)."""

    model: str
    input: float
    output: float
    cached: float | None = None

    def cost(self, u: Usage) -> float | None:
        """The cost of ``u``'s tokens at this price; None unless the usage gives both input and output."""
        if u.tokens_input is None or u.tokens_output is None:
            return None
        cached = min(u.tokens_cached or 0, u.tokens_input)
        cached_price = self.input if self.cached is None else self.cached
        return ((u.tokens_input - cached) * self.input + cached * cached_price + u.tokens_output * self.output) / PER


def price_of(model: str | None, prices: Sequence[Price]) -> Price | None:
    """The price of ``model``: the entry of that exact name (case aside), else the first pattern that matches
    it; None without a model or a price. A name is never matched by its prefix: ``gpt-4o`` is not
    ``gpt-4o-mini``."""
    if not model:
        return None
    name = model.casefold()
    exact = next((p for p in prices if p.model.casefold() == name), None)
    if exact is not None:
        return exact
    return next((p for p in prices if any(c in p.model for c in "*?[")
                 and fnmatch.fnmatchcase(name, p.model.casefold())), None)


@dataclass(frozen=True)
class StepSpend:
    """A step's columns: its tokens, its cost (recorded, or from the price list) and its elapsed seconds."""

    tokens_input: int | None = None
    tokens_output: int | None = None
    tokens_cached: int | None = None
    tokens_reasoning: int | None = None
    cost_usd: float | None = None
    wall_seconds: float | None = None


@dataclass(frozen=True)
class RunSpend(StepSpend):
    """A run's columns: a step's, as totals, and where its cost comes from. ``unpriced`` names the models whose
    tokens have no cost, with a price list given ("" for tokens of no known model): what the score call says
    once."""

    cost_source: CostSource | None = None
    unpriced: tuple[str, ...] = ()


def _has_tokens(u: Usage | None) -> bool:
    return u is not None and (u.tokens_input is not None or u.tokens_output is not None)


def _count(values: Sequence[int | None]) -> int | None:
    """The sum of the counts that are known; None when none is."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _total(values: Sequence[float | None]) -> float | None:
    """The sum of the amounts that are known; None when none is."""
    known = [v for v in values if v is not None]
    return float(sum(known)) if known else None


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 9)  # a cost to a billionth of a dollar: sums print the same everywhere


def assess(usages: Sequence[Usage | None], seconds: Sequence[float | None], run_usage: Usage | None,
           run_seconds: float | None, run_model: str | None,
           prices: Sequence[Price] = ()) -> tuple[list[StepSpend], RunSpend]:
    """Each step's spend and the run's, from the steps' usages and seconds (in step order), the run's recorded
    totals (None where the log keeps none), the run's model (a step's usage may name its own) and the price
    list (empty: no cost is ever computed)."""
    logged = any(u is not None and u.cost_usd is not None for u in [*usages, run_usage])
    step_costs: list[float | None] = []
    unpriced: list[str] = []
    for u in usages:
        cost = u.cost_usd if u is not None else None
        if not logged and prices and _has_tokens(u):
            assert u is not None  # _has_tokens
            price = price_of(u.model or run_model, prices)
            cost = price.cost(u) if price is not None else None
            if cost is None:
                unpriced.append(u.model or run_model or "")
        step_costs.append(cost)
    steps = [StepSpend(u.tokens_input, u.tokens_output, u.tokens_cached, u.tokens_reasoning, _round(c), w)
             if u is not None else StepSpend(cost_usd=_round(c), wall_seconds=w)
             for u, c, w in zip(usages, step_costs, seconds)]
    run = run_usage or Usage()
    known = [u for u in usages if u is not None]

    def tokens(recorded: int | None, each: list[int | None]) -> int | None:
        return recorded if recorded is not None else _count(each)

    source: CostSource | None
    if logged:
        cost, source = run.cost_usd if run.cost_usd is not None else _total(step_costs), CostSource.LOG
    elif prices and _has_tokens(run_usage):  # the log keeps totals for the run only: they are priced
        price = price_of(run.model or run_model, prices)
        cost = price.cost(run) if price is not None else None
        unpriced = [] if cost is not None else [run.model or run_model or ""]
        source = CostSource.PRICES if cost is not None else None
    elif prices and any(_has_tokens(u) for u in usages) and not unpriced:
        cost, source = _total(step_costs), CostSource.PRICES
    else:
        cost, source = None, None
    wall = run_seconds if run_seconds is not None else _total(seconds)
    return steps, RunSpend(tokens(run.tokens_input, [u.tokens_input for u in known]),
                           tokens(run.tokens_output, [u.tokens_output for u in known]),
                           tokens(run.tokens_cached, [u.tokens_cached for u in known]),
                           tokens(run.tokens_reasoning, [u.tokens_reasoning for u in known]),
                           _round(cost), None if wall is None else round(wall, 6), source, tuple(sorted(set(unpriced))))
