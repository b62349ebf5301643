"""The numbers the suite gave before it moved onto the library API (``chemassay stoichiometry
balance/build/predict/score`` on the bundled USPTO-15K, recorded with the pre-contract code)
are the numbers the API and the new CLI verbs give now."""

from __future__ import annotations

import pytest

from chemassay import stoichiometry

# chemassay stoichiometry balance uspto-15k --limit 400 [--method reference --limit 200]
BALANCE_400 = {"reactions": 1200, "balanced": 33, "rebalanced": 960, "ambiguous": 58, "unexplained": 149,
               "invalid": 0, "balanced_pct": 2.75, "rebalanced_pct": 80.0, "usable_pct": 82.75}
REFERENCE_200 = {"reactions": 600, "balanced": 18, "rebalanced": 237, "ambiguous": 0, "unexplained": 345,
                 "invalid": 0, "balanced_pct": 3.0, "rebalanced_pct": 39.5, "usable_pct": 42.5}

# build uspto-15k --limit 400 --seed 3, then predict --baseline B --train DIR and score --src
# (n, EM, JAC, F1, BAL) per (variant, model, split); "oracle" is algebraic with --oracle TGT
SCORES = {
    ("smiles", "t1", "algebraic", "test_cross"): (334, 1.0, 1.0, 1.0, 1.0),
    ("smiles", "t1", "copy-coefficient", "test_cross"):
        (334, 0.7574850299401198, 0.9459125039963364, 0.968804117197038, 0.7574850299401198),
    ("smiles", "t1", "algebraic", "test_in"): (335, 0.0029850746268656717, 0.2626873209709033, 0.37934537757628145, 1.0),
    ("smiles", "t1", "oracle", "test_out"): (335, 0.9134328358208955, 0.9390358812000602, 0.9509275862173142, 1.0),
    ("formula", "t2", "algebraic", "test_cross"): (334, 0.7215568862275449, 0.9203964732781347, 0.9500505797804104, 1.0),
    ("formula", "t2", "copy-coefficient", "test_cross"):
        (334, 0.008982035928143712, 0.45994216164899926, 0.5967687134135263, 0.014970059880239521),
    ("formula", "t2", "algebraic", "test_out"): (335, 0.005970149253731343, 0.4124183550482178, 0.5618034498756774, 1.0),
    ("formula", "t2", "oracle", "test_out"): (335, 0.6119402985074627, 0.8792819133286164, 0.9212781341632799, 1.0),
}


def test_balance_counts_are_unchanged():
    assert stoichiometry.balance("uspto-15k", limit=400).metrics == BALANCE_400
    assert stoichiometry.balance("uspto-15k", limit=200, method="reference").metrics == REFERENCE_200


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    root = tmp_path_factory.mktemp("parity")
    for encoding, task in (("smiles", "t1"), ("formula", "t2")):
        stoichiometry.build("uspto-15k", root / f"{encoding}_{task}", encoding=encoding, task=task, seed=3, limit=400)
    return root


@pytest.mark.parametrize("key", sorted(SCORES))
def test_baseline_scores_are_unchanged(variants, key):
    encoding, task, model, split = key
    folder = variants / f"{encoding}_{task}"
    spec = f"algebraic:oracle={folder / f'tgt-{split}.txt'}" if model == "oracle" else f"{model}:{folder}"
    result = stoichiometry.evaluate(model=spec, sources=folder / f"src-{split}.txt",
                                    reference=folder / f"tgt-{split}.txt", bootstrap=0, rows=False)
    n, em, jac, f1, bal = SCORES[key]
    assert result.n == n
    assert (result.metrics["EM"], result.metrics["JAC"], result.metrics["F1"], result.metrics["BAL"]) == pytest.approx(
        (em, jac, f1, bal), abs=1e-12)
    assert result.config["encoding"] == encoding


def test_reference_compat_is_unchanged(variants, tmp_path):
    folder = variants / "formula_t2"
    predictions = tmp_path / "pred.txt"
    predictions.write_text("".join(b + "\n" for b in stoichiometry.predict(f"copy-coefficient:{folder}",
                                                                          folder / "src-test_cross.txt")))
    result = stoichiometry.evaluate(predictions, folder / "tgt-test_cross.txt", compat="reference", bootstrap=0)
    assert (result.n, result.metrics["EM"], result.metrics["JAC"]) == pytest.approx(
        (334, 0.008982035928143712, 0.45994216164899926), abs=1e-12)
