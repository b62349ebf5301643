"""Two-round (iterated) evaluation of a live model: round-1 products fed back as reactants.

Bradshaw et al. found that a model that has never seen Grignard additions to esters
predicts the single-addition ketone; fed that ketone with the original reactants, it then
predicts the tertiary alcohol of the double addition that the record shows. This module
runs any reaction predictor (:mod:`chemassay.suites.reaction_ood.protocol`) for two (or more) rounds: round
``r + 1`` gets the round-``r`` top-1 prediction appended to the original reactants
(``feed="append"``) or alone (``feed="alone"``), and every round is scored against the
recorded products with the rules of :mod:`~chemassay.suites.reaction_ood.metrics`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chemassay.contract import Run
from chemassay.contract.errors import UserInputError
from chemassay.models import run
from chemassay.suites.reaction_ood.metrics import ItemScore, product_set, score_all, topk_accuracy
from chemassay.suites.reaction_ood.protocol import REACTION_PREDICTOR

FEED_MODES = ("append", "alone")


@dataclass
class IteratedEvaluation:
    """Predictions and scores of every round, and the summary metrics."""

    inputs: list[list[str | None]]
    predictions: list[list[list[str]]]
    scores: list[list[ItemScore | str]]
    metrics: dict[str, float | int]
    failures: list[dict] = field(default_factory=list)
    """Queries the model failed on (a failed request): ``{"round", "index", "reason"}``."""
    run: Run | None = None
    """The last round's run (:func:`chemassay.models.run`): the model's identity and requests."""


def next_round_inputs(reactants: Sequence[str], predictions: Sequence[Sequence[str]], feed: str) -> list[str | None]:
    """Inputs of the next round: ``None`` where the top-1 prediction is missing or unreadable."""
    if feed not in FEED_MODES:
        raise UserInputError(f"unknown --feed {feed!r}; use one of {', '.join(FEED_MODES)}")
    out: list[str | None] = []
    for original, ranked in zip(reactants, predictions, strict=True):
        top = ranked[0] if ranked else None
        if top is None or product_set(top) is None:
            out.append(None)
        elif feed == "append":
            out.append(f"{original}.{top}")
        else:
            out.append(top)
    return out


def iterated_evaluation(
    model: Any,
    reactants: Sequence[str],
    truths: Sequence[str],
    *,
    k: int = 5,
    rounds: int = 2,
    feed: str = "append",
    context: Mapping[str, Any] | None = None,
    cache: bool = False,
) -> IteratedEvaluation:
    """Run ``rounds`` rounds of ``model`` and score each against ``truths``.

    ``model`` is a spec (loaded once, with ``context``) or an object; every round runs through
    :func:`chemassay.models.run` (``cache``: its response cache), whose last :class:`Run` is
    kept in ``run`` (the model's identity and its request counts over every round).

    Metrics: ``round{r}_top{k}_accuracy`` for each round and the reported k, the top-1
    accuracy of the best round (``any_round_top1_accuracy``), how many reactions wrong at
    round 1 are right at top-1 in round 2 (``recovered_in_round2``, and as a fraction of the
    round-1 errors) and how many right at round 1 are lost in round 2 (``lost_in_round2``).
    """
    if rounds < 1:
        raise UserInputError("--rounds must be at least 1")
    inputs: list[list[str | None]] = [list(reactants)]
    predictions: list[list[list[str]]] = []
    scores: list[list[ItemScore | str]] = []
    failures: list[dict] = []
    done: Run | None = None
    for round_index in range(rounds):
        current = inputs[-1]
        asked = [i for i, text in enumerate(current) if text is not None]
        # the model is loaded by the first round's run and asked again as it is in the next ones
        done = run(model if done is None else done.model_object, REACTION_PREDICTOR, [current[i] for i in asked],
                   {"k": k}, context=context, cache=cache)
        for position, reason in done.failures.items():
            failures.append({"round": round_index + 1, "index": asked[position], "reason": str(reason)})
        ranked: list[list[str]] = [[] for _ in current]
        for i, answer in zip(asked, done.outputs, strict=True):
            ranked[i] = [str(p) for p in answer][:k]
        predictions.append(ranked)
        scores.append(score_all(list(truths), ranked))
        if round_index + 1 < rounds:
            inputs.append(next_round_inputs(reactants, ranked, feed))

    k_values = [v for v in (1, 3, 5, 10) if v <= k] or [k]
    metrics: dict[str, float | int] = {}
    valid = [i for i, s in enumerate(scores[0]) if not isinstance(s, str)]
    for r, round_scores in enumerate(scores, start=1):
        ranks = [round_scores[i].rank for i in valid]
        for kv, acc in topk_accuracy(ranks, k_values).items():
            metrics[f"round{r}_top{kv}_accuracy"] = acc
        flat = [round_scores[i].rank_stereo_agnostic for i in valid]
        metrics[f"round{r}_top1_accuracy_stereo_agnostic"] = topk_accuracy(flat, [1])[1]
    any_round = [any(s[i].rank == 1 for s in scores) for i in valid]
    metrics["any_round_top1_accuracy"] = sum(any_round) / len(valid) if valid else math.nan
    if rounds >= 2:
        first, second = scores[0], scores[1]
        wrong_first = [i for i in valid if first[i].rank != 1]
        recovered = sum(1 for i in wrong_first if second[i].rank == 1)
        lost = sum(1 for i in valid if first[i].rank == 1 and second[i].rank != 1)
        metrics["recovered_in_round2"] = recovered
        metrics["recovered_fraction_of_round1_errors"] = recovered / len(wrong_first) if wrong_first else math.nan
        metrics["lost_in_round2"] = lost
        metrics["n_round2_queries"] = sum(1 for t in inputs[1] if t is not None)
    metrics["n_model_failures"] = len(failures)
    return IteratedEvaluation(inputs, predictions, scores, metrics, failures, done)
