"""Intervals by the method each metric's card declares: Wilson for proportions (never zero-wide,
0 of 40 reaching 8.8 %), the percentile bootstrap for other means, and never a zero-wide
interval from a bootstrap whose items all agree."""

from __future__ import annotations

import math

import pytest

from chemassay.contract.result import Result
from chemassay.report.cards import all_cards
from chemassay.report.intervals import (
    attach_intervals,
    metric_interval,
    percentile_interval,
    wilson_interval,
)


def _result(suite: str, task: str, scores: dict[str, list[float | None]]) -> Result:
    n = len(next(iter(scores.values())))
    metrics = {k: sum(v for v in values if v is not None) / max(1, sum(v is not None for v in values))
               for k, values in scores.items()}
    return Result(suite=suite, task=task, metrics=metrics, n=n, item_ids=[f"i{i}" for i in range(n)],
                  item_scores=scores)


def test_wilson_interval_matches_the_closed_form_and_is_never_zero_wide():
    low, high = wilson_interval(0, 40)
    assert low == 0.0 and high == pytest.approx(1.96**2 / (40 + 1.96**2), abs=2e-4)  # 8.76 %
    assert high > 0.08
    low, high = wilson_interval(50, 50)
    assert high == 1.0 and low == pytest.approx(50 / (50 + 1.959964**2), abs=1e-4) and low < 0.93
    low, high = wilson_interval(20, 40)
    assert low == pytest.approx(0.3519, abs=1e-4) and high == pytest.approx(0.6481, abs=1e-4)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError):
        wilson_interval(5, 4)


def test_a_quick_run_with_every_answer_wrong_gets_a_wilson_interval_not_zero():
    """A served LLM's quick reaction-ood run: 0 of 40 right. The bootstrap printed [0, 0]."""
    result = attach_intervals(_result("reaction-ood", "evaluate", {"top1_accuracy": [0.0] * 40}))
    interval = result.intervals["top1_accuracy"]
    assert result.metrics["top1_accuracy"] == 0.0
    assert interval.method == "wilson" and interval.low == 0.0 and 0.085 < interval.high < 0.09


def test_every_molecule_found_under_a_rewrite_is_not_a_certainty():
    """An encoder's AMORE Acc@1 of 50 of 50 (the quick run): Wilson, not [1, 1]."""
    result = attach_intervals(_result("robustness", "evaluate", {"cycle_renumber_amore/o2a_acc@1": [1.0] * 50}))
    interval = result.intervals["cycle_renumber_amore/o2a_acc@1"]
    assert interval.method == "wilson" and interval.high == 1.0 and interval.low < 0.93


def test_bootstrap_metrics_keep_their_bootstrap_and_their_point_values():
    jac = [0.25, 1.0, 0.5, 0.0, 0.75, 1.0, 0.5, 0.2]
    result = attach_intervals(_result("stoichiometry", "evaluate", {"JAC": list(jac), "EM": [1, 0, 0, 1, 0, 1, 0, 0]}),
                              resamples=300, seed=2)
    assert result.metrics["JAC"] == sum(jac) / len(jac) and result.metrics["EM"] == 3 / 8
    jac_interval, em_interval = result.intervals["JAC"], result.intervals["EM"]
    assert jac_interval.method == "bootstrap" and (jac_interval.resamples, jac_interval.seed) == (300, 2)
    assert (jac_interval.low, jac_interval.high) == percentile_interval(jac, resamples=300, seed=2)
    assert em_interval.method == "wilson" and (em_interval.low, em_interval.high) == wilson_interval(3, 8)


def test_a_bootstrap_metric_whose_items_all_agree_gets_no_zero_wide_interval():
    """The nearest-neighbour mechanism baseline repeats the product as every intermediate: V = 1
    on every reaction, which the bootstrap printed as [1, 1]."""
    result = attach_intervals(_result("mechanism", "evaluate", {"V": [1.0] * 30, "S_partial": [0.5] * 30,
                                                                "L": [0.0] * 30}))
    v, s_partial, logic = result.intervals["V"], result.intervals["S_partial"], result.intervals["L"]
    assert v.method == "wilson (every item at a bound)" and v.high == 1.0 and (v.low, v.high) == wilson_interval(30, 30)
    assert logic.low == 0.0 and logic.high == wilson_interval(0, 30)[1]
    assert s_partial.low is None and s_partial.high is None and s_partial.method.startswith("none")


def test_a_proportion_card_refuses_a_value_other_than_0_or_1():
    with pytest.raises(ValueError, match="0 or 1"):
        metric_interval([1.0, 0.5, 0.0], suite="stoichiometry", key="EM")


def test_items_the_metric_does_not_apply_to_are_left_out():
    interval = metric_interval([1.0, None, 0.0, None, 1.0], suite="stoichiometry", key="BAL")
    assert (interval.low, interval.high) == wilson_interval(2, 3)
    assert metric_interval([None, None], suite="stoichiometry", key="BAL").low is None


def test_every_card_names_a_known_interval_method_and_proportions_are_bounded_0_1():
    cards = all_cards()
    assert {c.interval for c in cards} <= {"wilson", "bootstrap", "bootstrap-molecules", "none"}
    wilson = [c for c in cards if c.interval == "wilson"]
    assert {c.suite for c in wilson} == {"stoichiometry", "reaction-ood", "robustness", "generation"}
    assert all(c.range == (0.0, 1.0) for c in wilson)
