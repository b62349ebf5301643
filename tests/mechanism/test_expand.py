"""Template expansion: consistent substitution of [*:i] placeholders with RDKit molzip."""

from __future__ import annotations

import json

import pytest
from rdkit import Chem

from chemassay.errors import UserInputError
from chemassay.runtime.files import sha256_file
from chemassay.suites.mechanism.data import omebench_file as bundled_path
from chemassay.suites.mechanism.expand import (
    ExpansionError,
    default_substituents_path,
    expand_templates,
    instantiate,
    load_substituents,
    substitute,
    template_labels,
)
from chemassay.suites.mechanism.records import read_records

GROUPS = {s.name: s for s in load_substituents()}


def canon(smiles: str) -> str:
    return Chem.MolToSmiles(Chem.MolFromSmiles(smiles))


def test_default_substituents_are_valid_r_groups():
    groups = load_substituents(default_substituents_path())
    assert len(groups) >= 20
    assert all(Chem.MolFromSmiles(g.smiles) is not None and g.smiles.count("*") == 1 for g in groups)
    assert GROUPS["phenyl"].core == "c1ccccc1"


def test_substitute_by_hand():
    assignment = {1: GROUPS["methyl"], 2: GROUPS["phenyl"]}
    assert substitute("C([*:1])([*:2])C=O", assignment) == canon("CC(c1ccccc1)C=O")
    # every occurrence of a placeholder gets the same group (aldol product of NR-001)
    assert substitute("C([*:1])([*:2])C(O)C([*:1])([*:2])C=O", assignment) == canon("CC(c1ccccc1)C(O)C(C)(c1ccccc1)C=O")
    assert substitute("C([*:1])([*:2])=C[O-]", {1: GROUPS["hydrogen"], 2: GROUPS["hydrogen"]}) == canon("C=C[O-]")
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
    assert cli("mechanism", "validate", out).stdout.count("unknown_subtype") == 0


def test_cli_expand_bad_substituents(cli, tmp_path):
    bad = tmp_path / "subs.json"
    bad.write_text(json.dumps({"substituents": [{"name": "two points", "smiles": "*CC*"}]}))
    result = cli("mechanism", "expand", "template", "--out", tmp_path / "x.jsonl", "--substituents", bad)
    assert result.code == 2 and "exactly one '*'" in result.stderr
    with pytest.raises(UserInputError):
        load_substituents(tmp_path / "nope.json")
