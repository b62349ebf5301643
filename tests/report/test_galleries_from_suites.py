"""The suites' own evaluate results carry the per-item fields the failure galleries draw:
stoichiometry rows with their three bags, reaction-ood wrong top-1 items, robustness
retrieval misses and mechanism step alignments."""

from __future__ import annotations

from chemassay.report.scorecard.galleries import suite_gallery


def test_stoichiometry_rows_feed_the_alchemy_gallery():
    from chemassay import stoichiometry

    result = stoichiometry.evaluate(["{1}CCSC(C)=O.{1}O", "{1}CCOC(C)=O.{1}O"], ["{1}CCOC(C)=O.{1}O", "{1}CCOC(C)=O.{1}O"],
                                    sources=["{1}CC(=O)O.{1}CCO", "{1}CC(=O)O.{1}CCO"], bootstrap=0)
    rows = result.details.rows
    assert rows[0].prediction == "{1}CCSC(C)=O.{1}O" and rows[0].source == "{1}CC(=O)O.{1}CCO"
    assert rows[1].target == "{1}CCOC(C)=O.{1}O" and rows[0].balance == "DE"
    gallery = suite_gallery("stoichiometry", [result])
    assert gallery.missing is None and len(gallery.items) == 1  # the balanced, correct row is no failure
    assert "S +1" in gallery.items[0].caption
    # without rows there is nothing to draw, and the gallery says which field it needs
    bare = stoichiometry.evaluate(["{1}CCSC(C)=O.{1}O"], ["{1}CCOC(C)=O.{1}O"], sources=["{1}CC(=O)O.{1}CCO"],
                                  bootstrap=0, rows=False)
    assert "details.rows" in suite_gallery("stoichiometry", [bare]).missing


def test_reaction_ood_items_are_the_wrong_top1_predictions():
    from chemassay import reaction_ood

    result = reaction_ood.evaluate([["CC(=O)NC", "CCO"], ["CCO", "CCOC(C)=O"], ["CNC(C)=O"]],
                                   ["CNC(C)=O", "CCOC(C)=O", "CCN"], k=2, bootstrap=0)
    items = result.details.items
    assert [(i.id, i.rank, i.predictions[0]) for i in items] == [("1", 2, "CCO"), ("2", None, "CNC(C)=O")]
    gallery = suite_gallery("reaction-ood", [result])
    assert gallery.missing is None and len(gallery.items) == 2


def test_robustness_misses_name_both_strings_and_the_rank():
    import chemassay.robustness as robustness

    result = robustness.evaluate(model="char-ngram", reference="isomers", augmentations=["canonical"], bootstrap=0)
    misses = result.details.misses
    assert 0 < len(misses) <= 20 and all(m.rank > 1 and m.augmentation == "canonical" for m in misses)
    assert all(m.original != m.augmented for m in misses)
    gallery = suite_gallery("robustness", [result])
    assert gallery.missing is None and gallery.items


def test_mechanism_rows_carry_both_step_lists_for_the_alignment():
    import chemassay.mechanism as mechanism

    result = mechanism.evaluate(model="nearest-neighbour", limit=5, bootstrap=0)
    rows = result.details.reactions
    assert len(rows) == 5
    for row in rows:
        assert len(row.gold_steps) == row.n_gold and len(row.predicted_steps) == row.n_pred
        assert all(step.subtype and step.smiles for step in row.gold_steps)
    gallery = suite_gallery("mechanism", [result])
    assert gallery.missing is None and gallery.items
    # a gold-oracle run has no error to show, and the gallery says so
    oracle = suite_gallery("mechanism", [mechanism.evaluate(model="gold-oracle", limit=5, bootstrap=0)])
    assert not oracle.items and "no reaction with an error" in oracle.missing
