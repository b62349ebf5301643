"""Fixtures of the report tests: metric cards for the keys the tests use (declared for a test,
only where the suites do not declare them yet), a results store in a temporary home, and a
headless Chromium driven over the DevTools protocol on a pipe (no network, no extra package)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chemassay.report.cards import MetricCard, all_cards, card_for, register_cards, unregister_cards

# (suite, an example key, the card to register when no card declares the example)
_TEST_CARDS = [
    ("stoichiometry", "EM", MetricCard("EM", "stoichiometry", "exact match of the product bag", "higher", paper_name="EM", paper_table="Table 4", interval="bootstrap")),
    ("stoichiometry", "JAC", MetricCard("JAC", "stoichiometry", "Jaccard of the product bag", "higher", paper_name="JAC", paper_table="Table 4", interval="bootstrap")),
    ("stoichiometry", "F1", MetricCard("F1", "stoichiometry", "F1 of the product bag", "higher", paper_name="F1", paper_table="Table 4", interval="bootstrap")),
    ("stoichiometry", "ACC", MetricCard("ACC", "stoichiometry", "top-1 accuracy", "higher", paper_name="ACC", paper_table="Table 2", interval="bootstrap")),
    ("reaction-ood", "top1_accuracy", MetricCard("top{k}_accuracy", "reaction-ood", "top-k accuracy", "higher", paper_name="top-k", paper_table="Table S2.2", interval="bootstrap")),
    ("generation", "FCD/Test", MetricCard("FCD/{test}", "generation", "Fréchet ChemNet Distance", "lower", range=(0.0, None), paper_name="FCD", paper_table="Table 3")),
    ("generation", "valid", MetricCard("valid", "generation", "share of valid SMILES", "higher", paper_name="Valid", paper_table="Table 1", interval="bootstrap")),
    ("robustness", "canonical/o2a_acc@1", MetricCard("{augmentation}/{direction}_acc@{k}", "robustness", "retrieval accuracy", "higher", paper_name="Acc@k", paper_table="Table 1", interval="bootstrap")),
    ("robustness", "canonical/o2a_mrr", MetricCard("{augmentation}/{direction}_mrr", "robustness", "mean reciprocal rank", "higher", paper_name="MRR", paper_table="Table 1", interval="bootstrap")),
    ("mechanism", "S_total", MetricCard("S_total", "mechanism", "oMeS total", "higher", paper_name="S_tot", paper_table="Table 3", interval="bootstrap")),
    ("mechanism", "S_partial", MetricCard("S_partial", "mechanism", "oMeS partial", "higher", paper_name="S_part", paper_table="Table 3", interval="bootstrap")),
    ("mechanism", "V", MetricCard("V", "mechanism", "SMILES validity", "higher", paper_name="V", paper_table="Table 3", interval="bootstrap")),
    ("mechanism", "L", MetricCard("L", "mechanism", "logical fidelity", "higher", paper_name="L", paper_table="Table 3", interval="bootstrap")),
]


@pytest.fixture
def test_cards():
    """Cards for the keys the report tests use, declared for the test only and only where the
    suites do not declare them yet (a partial set left behind would make every other test of
    that suite fail the strict-card check)."""
    declared = {(c.suite, c.key) for c in all_cards()}
    missing = [card for suite, example, card in _TEST_CARDS
               if card_for(suite, example) is None and (card.suite, card.key) not in declared]
    register_cards(missing)
    try:
        yield missing
    finally:
        unregister_cards(missing)


@pytest.fixture
def store_home(tmp_path, monkeypatch):
    """An empty ``$CHEMASSAY_HOME`` with the results store switched on."""
    home = tmp_path / "home"
    monkeypatch.setenv("CHEMASSAY_HOME", str(home))
    monkeypatch.delenv("CHEMASSAY_NO_STORE", raising=False)
    monkeypatch.delenv("CHEMASSAY_STORE", raising=False)
    from chemassay.report.store import set_recording

    set_recording(True)
    return home


# --- headless Chromium over the DevTools protocol (--remote-debugging-pipe) -----------------
def write_json(path: Path, data: dict) -> Path:
    """Write ``data`` as JSON (for hand-made result files)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
