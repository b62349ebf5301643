"""Template expansion: consistent substitution of [*:i] placeholders with RDKit molzip."""

from __future__ import annotations

import json

import pytest
from rdkit import Chem

from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import sha256_file
from chemassay.suites.mechanism.data import omebench_file as bundled_path
from chemassay.suites.mechanism.expand import (
    LABEL_ALIASES,
    ExpansionError,
    Substituent,
    check_balance,
    default_substituents_path,
    expand_templates,
    has_ring,
    instantiate,
    load_substituents,
    step_balance,
    substitute,
    template_labels,
)
from chemassay.suites.mechanism.records import read_records

GROUPS = {s.name: s for s in load_substituents()}


def canon(smiles: str) -> str:
    return Chem.MolToSmiles(Chem.MolFromSmiles(smiles))


def test_default_substituents_are_valid_r_groups():
    groups = load_substituents(default_substituents_path())
    assert len(groups) == 43 and "hydrogen" not in GROUPS
    assert all(Chem.MolFromSmiles(g.smiles) is not None and g.smiles.count("*") == 1 for g in groups)
    assert GROUPS["phenyl"].core == "c1ccccc1"


def test_substitute_by_hand():
    assignment = {1: GROUPS["methyl"], 2: GROUPS["phenyl"]}
    assert substitute("C([*:1])([*:2])C=O", assignment) == canon("CC(c1ccccc1)C=O")
    # every occurrence of a placeholder gets the same group (aldol product of NR-001)
    assert substitute("C([*:1])([*:2])C(O)C([*:1])([*:2])C=O", assignment) == canon("CC(c1ccccc1)C(O)C(C)(c1ccccc1)C=O")
    hydrogen = Substituent("hydrogen", "*[H]")  # not in the default list (the paper's prompt asks for none)
    assert substitute("C([*:1])([*:2])=C[O-]", {1: hydrogen, 2: hydrogen}) == canon("C=C[O-]")
    assert substitute("c1ccccc1[*:1]", {1: GROUPS["trifluoromethyl"]}) == canon("FC(F)(F)c1ccccc1")
    assert substitute("CCO", {}) == "CCO"


def test_substitute_rejects_what_cannot_be_valid():
    with pytest.raises(ExpansionError, match="placeholder without substituent"):
        substitute("C([*:3])C", {1: GROUPS["methyl"]})
    with pytest.raises(ExpansionError, match="does not parse"):
        substitute("C([*:1])([*:2])(H)O", {1: GROUPS["methyl"], 2: GROUPS["methyl"]})
    with pytest.raises(ExpansionError, match="invalid after substitution") as info:
        substitute("C(C)(C)(C)(C)[*:1]", {1: GROUPS["methyl"]})  # pentavalent carbon
    assert info.value.category == "invalid after substitution"


def test_instantiate_keeps_the_mechanism_consistent():
    template = next(r.data for r in read_records(bundled_path("template")).records if r.data["reaction_id"] == "NR-001")
    assert template_labels(template) == [1, 2]
    record = instantiate(template, {1: GROUPS["cyclohexyl"], 2: GROUPS["ethyl"]})
    assert record["reaction_id"] == "NR-001_1-C1CCCCC1_2-CC"
    assert record["provenance"]["template_id"] == "NR-001"
    assert record["provenance"]["substituents"]["1"] == {"name": "cyclohexyl", "smiles": "*C1CCCCC1"}
    assert record["products_smiles"] == [canon("CCC(C=O)(C1CCCCC1)C(O)C(CC)C1CCCCC1")]
    assert [s["subtype"] for s in record["mechanism"]] == [s["subtype"] for s in template["mechanism"]]
    # the final intermediate is the product, as in the template
    assert record["mechanism"][-1]["intermediate_smiles"] == record["products_smiles"][0]
    assert all("step_weight" not in s for s in record["mechanism"])  # template zeros are not weights
    assert "[*" not in json.dumps(record["mechanism"])


def test_expansion_is_seeded_and_keeps_only_valid_instances():
    templates = [r.data for r in read_records(bundled_path("template")).records[:12]]
    first = expand_templates(templates, list(GROUPS.values()), per_template=3, seed=7)
    again = expand_templates(templates, list(GROUPS.values()), per_template=3, seed=7)
    other = expand_templates(templates, list(GROUPS.values()), per_template=3, seed=8)
    assert [r["reaction_id"] for r in first.records] == [r["reaction_id"] for r in again.records]
    assert [r["reaction_id"] for r in first.records] != [r["reaction_id"] for r in other.records]
    assert len({r["reaction_id"] for r in first.records}) == len(first.records)
    for record in first.records:
        smiles = record["reactants_smiles"] + record["products_smiles"] + [s["intermediate_smiles"] for s in record["mechanism"]]
        assert all(Chem.MolFromSmiles(s) is not None for s in smiles)
    per_template = {}
    for record in first.records:
        per_template[record["provenance"]["template_id"]] = per_template.get(record["provenance"]["template_id"], 0) + 1
    # oMe-Template holds two different records with the id NG-004: 3 instances each
    assert per_template.pop("NG-004") == 6
    assert set(per_template.values()) <= {1, 2, 3} and per_template["NR-001"] == 3


def test_cli_expand_writes_records_and_manifest(cli, tmp_path):
    subset = tmp_path / "templates.jsonl"
    records = read_records(bundled_path("template")).records[:6]
    subset.write_text("".join(json.dumps(r.data) + "\n" for r in records))
    out = tmp_path / "silver.jsonl"
    result = cli("mechanism", "expand", subset, "--out", out, "--per-template", "2", "--seed", "3")
    assert result.code == 0, result.stderr
    lines = out.read_text().splitlines()
    manifest = json.loads((tmp_path / "silver.jsonl.manifest.json").read_text())
    assert manifest["files"]["silver.jsonl"] == {"sha256": sha256_file(out), "records": len(lines)}
    assert manifest["seed"] == 3 and manifest["config"]["per_template"] == 2
    assert manifest["inputs"]["substituents"]["sha256"] == sha256_file(default_substituents_path())
    first = out.read_bytes()
    assert cli("mechanism", "expand", subset, "--out", out, "--per-template", "2", "--seed", "3").code == 0
    assert out.read_bytes() == first  # byte for byte reproducible
    # the expanded file is itself a valid input of the scorer's gold side
    assert cli("mechanism", "verify", out).stdout.count("unknown_subtype") == 0


def test_cli_expand_bad_substituents(cli, tmp_path):
    bad = tmp_path / "subs.json"
    bad.write_text(json.dumps({"substituents": [{"name": "two points", "smiles": "*CC*"}]}))
    result = cli("mechanism", "expand", "template", "--out", tmp_path / "x.jsonl", "--substituents", bad)
    assert result.code == 2 and "exactly one '*'" in result.stderr
    with pytest.raises(UserInputError):
        load_substituents(tmp_path / "nope.json")


def _template(rid):
    return next(r.data for r in read_records(bundled_path("template")).records if r.data["reaction_id"] == rid)


def test_step_balance_of_a_template_and_its_check():
    template = _template("NR-001")  # aldol addition: deprotonation, addition, protonation
    levels = step_balance(template)
    assert len(levels) == len(template["mechanism"])
    record = instantiate(template, {1: GROUPS["methyl"], 2: GROUPS["phenyl"]}, balance=levels)
    assert record["provenance"]["balance_checked"] == [level or "none" for level in levels]
    # step 2 joins the enolate and the second aldehyde: balanced only with both reactants
    made_up = {"reactants_smiles": ["CC=O"], "mechanism": [{"intermediate_smiles": "CCC=O"}]}
    assert step_balance(made_up) == [None]
    same = {"reactants_smiles": ["CC=O"], "mechanism": [{"intermediate_smiles": "C=CO"}]}
    assert step_balance(same) == ["full"]
    broken = {"reactants_smiles": ["CC=O"], "mechanism": [{"intermediate_smiles": "C=C[O-]"}]}
    assert step_balance(broken) == ["heavy"]  # a proton left: heavy atoms balanced, H and charge not
    with pytest.raises(ExpansionError, match="step not atom balanced") as info:
        check_balance(broken, ["full"])
    assert info.value.category == "step not atom balanced"
    check_balance(broken, ["heavy"])  # no error
    # placeholders count as pseudo-elements: one R group lost is an imbalance
    assert step_balance({"reactants_smiles": ["C([*:1])C=O"], "mechanism": [{"intermediate_smiles": "CC=O"}]}) == [None]


def test_template_labels_are_mapped_onto_the_taxonomy_or_rejected():
    template = _template("NR-046")  # has a lewis_acid_base_coordination step
    assert any(step["subtype"] in LABEL_ALIASES for step in template["mechanism"])
    result = expand_templates([template], list(GROUPS.values()), per_template=2, seed=0)
    assert result.records and result.label_repairs == len(result.records)
    for record in result.records:
        assert all(step["subtype"] not in LABEL_ALIASES for step in record["mechanism"])
        assert any("coordination/coordination" in repair for repair in record["provenance"]["label_repairs"])
    refused = expand_templates([_template("NR-227")], list(GROUPS.values()), per_template=2, seed=0)
    assert not refused.records and refused.rejected == {"step label outside the taxonomy": 1}
    assert "dehydration" in refused.templates_rejected["NR-227"]


def test_ring_rule_keeps_ring_groups_out_of_ring_templates():
    ring_templates = [r.data for r in read_records(bundled_path("template")).records[:40] if has_ring(r.data)]
    assert ring_templates
    result = expand_templates(ring_templates, list(GROUPS.values()), per_template=3, seed=1)
    assert result.records
    for record in result.records:
        assert all(not GROUPS[s["name"]].has_ring for s in record["provenance"]["substituents"].values())
    free = expand_templates(ring_templates, list(GROUPS.values()), per_template=3, seed=1, ring_rule=False)
    assert any(GROUPS[s["name"]].has_ring for r in free.records for s in r["provenance"]["substituents"].values())


@pytest.mark.slow
def test_silver_scale_expansion_counts_what_it_rejects():
    from chemassay.mechanism import expand

    result = expand("template", seed=0)  # per_template 18: oMe-Silver's scale
    assert 2400 <= len(result.records) <= 2600
    assert len({r["reaction_id"] for r in result.records}) == len(result.records)
    assert result.rejected["template SMILES does not parse"] == 17
    assert result.rejected["step label outside the taxonomy"] >= 1
    assert "step not atom balanced" not in result.rejected  # every balanced template step stays balanced
    assert result.balance_checks["full"] > 1000 and result.balance_checks["heavy"] > 1000
    assert set(result.templates_without_instance) == set(result.templates_rejected)
    for record in result.records:
        smiles = record["reactants_smiles"] + record["products_smiles"] + [s["intermediate_smiles"] for s in record["mechanism"]]
        assert all(Chem.MolFromSmiles(s) is not None for s in smiles)
