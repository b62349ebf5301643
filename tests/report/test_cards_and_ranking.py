import math

import numpy as np
import pytest

from chemassay.report.cards import MetricCard, card_for
from chemassay.report.ranking import (
    accuracy_at_k,
    mean_reciprocal_rank,
    rank_summary,
    rank_with_ties,
)


def test_card_patterns():
    card = MetricCard("{augmentation}/{direction}_acc@{k}", "robustness", "retrieval accuracy", "higher")
    assert card.matches("explicit_h/o2a_acc@1") and card.matches("canonical/a2o_acc@10")
    assert not card.matches("explicit_h/o2a_acc@x") and not card.matches("a/b/o2a_acc@1")
    literal = MetricCard("S_total", "mechanism", "oMeS total", "higher")
    assert literal.matches("S_total") and not literal.matches("S_totalx")
    assert literal.arrow == "↑" and MetricCard("FCD", "generation", "d", "lower", range=(0, None)).arrow == "↓"
    with pytest.raises(ValueError):
        MetricCard("x", "s", "d", "up")


def test_unknown_suite_has_no_cards():
    assert card_for("mechanism", "surely-not-a-metric-key") is None


def test_ranking_metrics():
    ranks = [1, 3, None, 2]
    assert accuracy_at_k(ranks, [1, 2, 3]) == {1: 0.25, 2: 0.5, 3: 0.75}
    assert mean_reciprocal_rank(ranks) == pytest.approx((1 + 1 / 3 + 0 + 1 / 2) / 4)
    summary = rank_summary(np.array([1, 2, 2, 5]), [1, 5])
    assert summary["acc@1"] == 0.25 and summary["acc@5"] == 1.0 and summary["median_rank"] == 2.0
    assert math.isnan(accuracy_at_k([], [1])[1])
    closer, before, after = np.array([0, 2]), np.array([1, 0]), np.array([2, 1])
    assert rank_with_ties(closer, before, after, "index").tolist() == [2, 3]
    assert rank_with_ties(closer, before, after, "optimistic").tolist() == [1, 3]
    assert rank_with_ties(closer, before, after, "pessimistic").tolist() == [4, 4]
