"""The budget of an assay: what it would ask a model before the run, what it spent after.

Before (``chemassay assay --dry-run``, :func:`estimate`): for every planned task, the items it
would run (all, or the seeded subset ``--limit``/``--precision`` picks: the same choice the run
makes), the requests a model behind an endpoint receives, and for a model that answers with
text the prompt tokens of the real prompts — each task lists its items (``AssayTask.listing``)
and the protocol builds their prompts (:func:`chemassay.models.budget.prompt_budget`; an
``hf:`` model's own tokenizer counts them, an ``openai:`` model's are estimated at 4 characters
a token) — and the bound on answer tokens (requests × the answer budget each carries). With a
:class:`Price` (US$ per million tokens, ``--price in=0.15,out=0.6``) each task's cost is a range:
from the prompts alone to the prompts plus every answer at its full budget.

After (:func:`spent`, in the assay manifest ``assay.json``): the requests and the tokens the
server reported (summed from each result's ``requests``) and their cost at the price given.

>>> price = parse_price("in=0.15,out=0.6")
>>> price.cost(1_000_000, 0), price.cost(2_000_000, 500_000)
(0.15, 0.6)
>>> spent([{"new": 3, "cached": 1, "prompt_tokens": 900, "completion_tokens": 300}, None], price)["cost_usd"]
0.000315
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemassay.contract.assay import ENDPOINT_KINDS, AssayContext
from chemassay.contract.errors import UserInputError
from chemassay.models.budget import prompt_budget
from chemassay.models.spec import parse_spec
from chemassay.report.subsets import task_subset, wilson_half_width

TEXT_KINDS = frozenset({"openai", "hf"})
"""Model kinds that are sent prompts whose tokens ``--dry-run`` counts."""


@dataclass(frozen=True)
class Price:
    """US$ per million tokens: ``prompt`` (input) and ``completion`` (output)."""

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float:
        """US$ for these tokens."""
        return ((prompt_tokens or 0) * self.prompt + (completion_tokens or 0) * self.completion) / 1_000_000

    def __str__(self) -> str:
        return f"in={self.prompt:g},out={self.completion:g} US$/M tokens"


def parse_price(text: str) -> Price:
    """``in=X,out=Y`` (US$ per million prompt and completion tokens) as a :class:`Price`."""
    values: dict[str, float] = {}
    for part in str(text).split(","):
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        try:
            number = float(value)
        except ValueError:
            number = -1.0
        if not sep or key not in {"in", "out"} or number < 0 or key in values:
            raise UserInputError(f"--price {text!r}: give in=X,out=Y, US$ per million prompt (in) and completion "
                                 "(out) tokens, e.g. --price in=0.15,out=0.6")
        values[key] = number
    if set(values) != {"in", "out"}:
        raise UserInputError(f"--price {text!r}: give both in= and out= (US$ per million tokens), e.g. in=0.15,out=0.6")
    return Price(values["in"], values["out"])


def as_price(value: Price | str | None) -> Price | None:
    """A :class:`Price`, ``in=X,out=Y`` text, or ``None``."""
    if value is None or isinstance(value, Price):
        return value
    return parse_price(value)


def spent(requests: Sequence[Mapping[str, Any] | None], price: Price | None = None) -> dict[str, Any]:
    """What the results' request summaries (``Result.requests`` as dicts; ``None``: no endpoint
    asked) add up to: requests sent and answered from the cache, the tokens the server
    reported, and their cost in US$ at ``price`` (``None`` without one)."""
    asked = [r for r in requests if r]
    prompt = sum(int(r.get("prompt_tokens") or 0) for r in asked)
    completion = sum(int(r.get("completion_tokens") or 0) for r in asked)
    reported = any(r.get("prompt_tokens") is not None or r.get("completion_tokens") is not None for r in asked)
    return {
        "requests": sum(int(r.get("new") or 0) for r in asked),
        "cached": sum(int(r.get("cached") or 0) for r in asked),
        "failed": sum(int(r.get("failed") or 0) for r in asked),
        "prompt_tokens": prompt if reported else None,
        "completion_tokens": completion if reported else None,
        "price": None if price is None else {"in": price.prompt, "out": price.completion, "unit": "US$ per million tokens"},
        "cost_usd": None if price is None or not reported else round(price.cost(prompt, completion), 9),
    }


@dataclass
class TaskBudget:
    """What one planned task would ask (see the module docstring)."""

    suite: str
    task: str
    title: str
    spec: str
    protocol: str
    items: int
    """Items it runs (the subset's size with ``--limit``/``--precision``)."""
    requests: int
    """Requests a model behind an endpoint receives (the first round, for a generator)."""
    of: int | None = None
    """Items of the whole task, where it was listed."""
    prompt_tokens: int | None = None
    answer_tokens: int | None = None
    """At most this many answer tokens (requests × each request's answer budget)."""
    counted_by: str = ""
    half_width: float | None = None
    """With a subset: the widest 95 % interval of a proportion on ``items`` items (Wilson, ``p = 0.5``)."""
    endpoint: bool = False
    """Whether the model answers over the network (its requests are what an endpoint receives)."""

    def cost(self, price: Price | None) -> tuple[float, float] | None:
        """US$ from the prompts alone to the prompts plus every answer at its full budget."""
        if price is None or self.prompt_tokens is None:
            return None
        low = price.cost(self.prompt_tokens, 0)
        return low, (low + price.cost(0, self.answer_tokens) if self.answer_tokens is not None else float("inf"))


def estimate(model: str | Mapping[str, str] | None = None, *, suites: Sequence[str] | None = None,
             quick: bool = False, limit: int | None = None, precision: float | None = None, seed: int = 0,
             base_url: str | None = None, tokens: bool = True) -> tuple[list[Any], list[TaskBudget]]:
    """The plan of :func:`chemassay.assaying.assay` with each task's budget: per-suite outcomes
    (skips) and one :class:`TaskBudget` per task. ``tokens=False`` leaves the prompts unbuilt
    (no data is prepared)."""
    from chemassay.assaying import plan, subset_size

    size = subset_size(limit, precision, quick=quick)
    outcomes, planned = plan(model, suites=suites, quick=quick, base_url=base_url, limit=limit, precision=precision)
    context: dict[str, Any] = {"base_url": base_url} if base_url else {}
    budgets = []
    with tempfile.TemporaryDirectory(prefix="chemassay-dry-run-") as scratch:
        for entry in planned:
            task = entry.task
            kind = parse_spec(entry.spec).kind
            found = TaskBudget(entry.suite, task.key, task.title, entry.spec, task.protocol, task.items,
                               task.request_count, endpoint=kind in ENDPOINT_KINDS)
            if tokens and kind in TEXT_KINDS and task.listing is not None:
                ctx = AssayContext(spec=entry.spec, out_dir=Path(scratch) / entry.suite, quick=quick, seed=seed,
                                   model_context=dict(context), limit=size, precision=precision)
                ctx.out_dir.mkdir(parents=True, exist_ok=True)
                listing = task.listing(ctx)
                ids, _subset = task_subset(ctx, listing.ids, listing.strata, method=listing.method)
                chosen = listing.chosen(ids)
                counted = prompt_budget(entry.spec, task.protocol, chosen.items, chosen.options,
                                        {**context, **chosen.context}, texts=chosen.texts)
                found.items, found.of = len(chosen.ids), len(listing.ids)
                if counted is not None:
                    found.prompt_tokens, found.answer_tokens = counted.prompt_tokens, counted.answer_tokens
                    found.counted_by = counted.counted_by
                    found.requests = counted.requests  # the requests built for the items chosen
            if size is not None:
                found.half_width = wilson_half_width(found.items) if found.items else None
            budgets.append(found)
    return outcomes, budgets
