"""Mass balance, the by-product library and exact re-balancing."""

from __future__ import annotations

import json

import pytest

from chemassay.chem.bags import element_balance, parse_bag
from chemassay.chem.reactions import Reaction
from chemassay.contract.errors import UserInputError
from chemassay.suites.stoichiometry.balance import (
    AMBIGUOUS,
    BALANCED,
    REBALANCED,
    UNEXPLAINED,
    ByproductSolver,
)
from chemassay.suites.stoichiometry.data import resolve_source
from chemassay.suites.stoichiometry.library import load_library
from chemassay.suites.stoichiometry.prepare import (
    RebalanceConfig,
    assign_roles,
    edit_atoms,
    process_line,
    process_source,
)


@pytest.fixture(scope="module")
def solver():
    return ByproductSolver(load_library())


def names(explanation, library):
    return sorted((library.entries[a.entry].name, a.side, a.count) for a in explanation.additions)


def test_sabatier_is_balanced_in_both_encodings():
    config = RebalanceConfig()
    outcome, _ = process_line("all", 1, "{1}O=C=O.{4}[H][H]>>{1}C.{2}O", config)
    assert outcome.status == BALANCED and outcome.delta == ""
    outcome, _ = process_line("all", 2, "{1}CO2.{4}H2>>{1}CH4.{2}H2O", RebalanceConfig(encoding="formula"))
    assert outcome.status == BALANCED
    # cross-check with the foundation's bag arithmetic
    assert element_balance(parse_bag("{1}O=C=O.{4}[H][H]"), parse_bag("{1}C.{2}O")) == {}


def test_missing_water_is_added_to_the_products(solver):
    # CO2 + 4 H2 -> CH4 written without its water: 2 H2O explain O2 H4 on the products side
    outcome, _ = process_line("all", 1, "{1}O=C=O.{4}[H][H]>>{1}C", RebalanceConfig())
    assert outcome.status == REBALANCED and outcome.delta == "H+4 O+2"
    assert outcome.reason == "products + 2 water"
    assert dict(outcome.reaction.products) == {"C": 1, "O": 2}


def test_unique_ambiguous_and_unexplained_imbalances(solver):
    library = solver.library
    assert names(solver.explain({"H": 1, "Cl": 1}), library) == [("hydrogen chloride", "products", 1)]
    # nitro reduction: O2 missing from the products, H2 from the reactants
    nitro = solver.explain({"O": 2, "H": -2})
    assert names(nitro, library) == [("hydrogen", "reactants", 3), ("water", "products", 2)]
    # Boc removal: CO2 + isobutylene, the only pair of two molecules
    assert names(solver.explain({"C": 5, "H": 8, "O": 2}), library) == [
        ("carbon dioxide", "products", 1), ("isobutylene", "products", 1)]
    ambiguous = solver.explain({"C": 2, "H": 8, "O": 2})  # 2 MeOH or EtOH + H2O
    assert ambiguous.status == AMBIGUOUS and len(ambiguous.alternatives) == 2
    palladium = solver.explain({"Pd": 1})
    assert palladium.status == UNEXPLAINED and "Pd" in palladium.reason
    charged = solver.explain({"Cl": 1}, charge=-1)
    assert charged.status == UNEXPLAINED and "charge" in charged.reason
    assert solver.explain({"C": 40}).status == UNEXPLAINED
    assert solver.explain({}).status == BALANCED


def test_max_byproducts_bounds_the_search():
    small = ByproductSolver(load_library(), max_byproducts=4)
    assert small.explain({"O": 2, "H": -2}).status == UNEXPLAINED  # needs 5 molecules
    with pytest.raises(ValueError):
        ByproductSolver(load_library(), max_byproducts=7)


def test_solver_explanations_balance_exactly(solver):
    library = solver.library
    for delta in ({"H": 1, "Br": 1}, {"C": 7, "H": 6}, {"C": 1, "H": 2}, {"B": 1, "Br": 1, "H": 2, "O": 2}):
        explanation = solver.explain(delta)
        assert explanation.status == REBALANCED
        total: dict[str, int] = {}
        for addition in explanation.additions:
            sign = 1 if addition.side == "products" else -1
            for element, count in library.entries[addition.entry].counts:
                total[element] = total.get(element, 0) + sign * addition.count * count
        assert {e: c for e, c in total.items() if c} == delta


def test_library_validation(tmp_path):
    default = load_library()
    assert default.entries[0].name == "water" and len(default.sha256) == 64
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{")
    with pytest.raises(UserInputError, match="not valid JSON"):
        load_library(bad_json)
    for entry, message in (
        ({"name": "x", "smiles": "C1CC"}, "unclosed|syntax|invalid"),
        ({"name": "ion", "smiles": "[Na+]"}, "net charge"),
        ({"name": "w", "smiles": "O", "sides": ["left"]}, "sides"),
    ):
        path = tmp_path / "lib.json"
        path.write_text(json.dumps({"byproducts": [entry]}))
        with pytest.raises(UserInputError, match=message):
            load_library(path)
    with pytest.raises(UserInputError, match="no such"):
        load_library(tmp_path / "missing.json")


def test_custom_library_changes_the_outcome(tmp_path):
    path = tmp_path / "water-only.json"
    path.write_text(json.dumps({"name": "water-only", "byproducts": [{"name": "water", "smiles": "O"}]}))
    line = "[CH3:1][C:2](=[O:3])[Cl:4].[CH3:5][OH:6]>>CC(=O)OC 2;;2-4-1.0;2-6-1.0"
    default, _ = process_line("all", 1, line, RebalanceConfig())
    custom, _ = process_line("all", 1, line, RebalanceConfig(library_path=str(path)))
    assert default.status == REBALANCED and default.reason == "products + 1 hydrogen chloride"
    assert custom.status == UNEXPLAINED and "Cl" in custom.reason


def test_edit_atoms_reads_both_uspto_formats():
    assert edit_atoms("29;;29-30-2.0,30-31-1.0;29-30-3.0") == {29, 30, 31}
    assert edit_atoms("15-6;6-8") == {15, 6, 8}
    assert edit_atoms(";;;") == set() and edit_atoms(None) == set()


def test_roles_from_edits_on_a_real_uspto15k_reaction():
    # train.txt line 2: an O-alkylation; K2CO3 and water are reagents (no edited atom)
    line = next(text for number, text in resolve_source("uspto-15k").split("train").lines() if number == 2)
    outcome, _ = process_line("train", 2, line, RebalanceConfig())
    assert outcome.roles == "edits"
    reagents = dict(outcome.reaction.reagents)
    assert reagents == {"[K+]": 2, "O=C([O-])[O-]": 1, "O": 1}
    assert outcome.status == REBALANCED and outcome.reason == "products + 1 hydrogen bromide"


def test_roles_from_product_atom_maps_and_unchanged_products():
    mapped = Reaction(["[CH3:1][OH:2]", "[Na+:3].[OH-:4]", "[CH3:5][C:6](=[O:7])[Cl:8]"], [],
                      ["[CH3:5][C:6](=[O:7])[O:2][CH3:1]"])
    reactants, reagents, method = assign_roles(mapped, None)
    assert method == "maps" and len(reactants) == 2 and reagents == ["[Na+:3].[OH-:4]"]
    salt = Reaction(["CCN.Cl", "Cl"], [], ["CCN.Cl"])
    reactants, reagents, method = assign_roles(Reaction(["CCN", "Cl"], [], ["CCN"]), None)
    assert method == "unchanged" and reactants == ["CCN"] and reagents == ["Cl"]
    assert salt.products == ["CCN.Cl"]


def test_invalid_lines_are_reported_with_reasons():
    config = RebalanceConfig()
    for text, fragment in (("CC>>", "no products"), ("C1CC>>CC", "SMILES"), ("CC>C", "'>'"),
                           ("{0}C>>C", "bad bag item"), ("CC.[Xx]>>CC", "SMILES")):
        outcome, _ = process_line("all", 7, text, config)
        assert outcome.status == "invalid" and fragment in outcome.reason, (text, outcome.reason)


def test_uspto15k_slice_counts(uspto_slice):
    # the first 120 reactions of each split, shipped library: nothing invalid, most usable, all balanced
    counts = uspto_slice.counts()
    assert sum(counts.values()) == 360
    assert counts["invalid"] == 0
    assert counts["balanced"] + counts["rebalanced"] >= 280
    for outcomes in uspto_slice.outcomes.values():
        for outcome in outcomes:
            if outcome.reaction is not None:
                left = parse_bag(".".join(f"{{{m}}}{k}" for k, m in outcome.reaction.reactants))
                right = parse_bag(".".join(f"{{{m}}}{k}" for k, m in outcome.reaction.products))
                assert element_balance(left, right) == {}, outcome


def test_parallel_and_serial_processing_agree(uspto_slice):
    source = resolve_source("uspto-15k")
    parallel = process_source(source, RebalanceConfig(keep_original=True), limit=120, n_jobs=2)
    for split in uspto_slice.outcomes:
        assert [(o.line, o.status, o.reason) for o in parallel.outcomes[split]] == [
            (o.line, o.status, o.reason) for o in uspto_slice.outcomes[split]]


def test_reference_method_reproduces_the_authors_leftover_molecule():
    from chemassay.suites.stoichiometry.balance import reference_leftover, reference_rebalance

    # HCl: the left-over chain [Cl][H] is a valid molecule
    assert reference_rebalance(["CC(=O)Cl", "CN"], ["CC(=O)NC"]) == ("rebalanced", ["Cl"], [])
    # water: heavy atoms come first and hydrogens last, [O][H][H] is not a molecule
    assert reference_rebalance(["CC(=O)O", "CN"], ["CC(=O)NC"]) == ("unexplained", [], [])
    assert reference_leftover(["O", "H", "H"]) is None and reference_leftover(["H", "O", "H"]) == "O"
    # charged atoms count apart: a zwitterion and its neutral form differ for the authors
    status, to_products, to_reactants = reference_rebalance(["[NH3+]CC(=O)[O-]"], ["NCC(=O)O"])
    assert status == "rebalanced" and to_products and to_reactants
    outcome, _ = process_line("all", 1, "{1}[NH3+]CC(=O)[O-]>>{1}NCC(=O)O", RebalanceConfig())
    assert outcome.status == BALANCED  # same elements and net charge
    assert reference_rebalance(["CCO"], ["OCC"]) == ("balanced", [], [])


def test_reference_method_through_process_line():
    line = "[CH3:1][C:2](=[O:3])[Cl:4].[CH3:5][NH2:6]>>CC(=O)NC 2;;2-4-1.0;2-6-1.0"
    outcome, used = process_line("all", 1, line, RebalanceConfig(method="reference"))
    assert outcome.status == REBALANCED and outcome.reason == "left-over molecule(s): products + Cl"
    assert dict(outcome.reaction.products) == {"CNC(C)=O": 1, "Cl": 1}
    assert "Cl" in {s.smiles for s in used}
