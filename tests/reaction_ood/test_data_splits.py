"""Splits and their guarantees: real Schneider reactions, and a hand-built author/document graph."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemassay.contract.errors import UserInputError
from chemassay.suites.reaction_ood.clean import clean_reactions
from chemassay.suites.reaction_ood.io import read_schneider_50k
from chemassay.suites.reaction_ood.split_files import split_file, split_frame_to_dir
from chemassay.suites.reaction_ood.splits import (
    class_matches,
    fill_levels_by_document,
    make_split,
    split_authors,
)
from chemassay.suites.reaction_ood.verify import guarantees, verify_parts, verify_split_dir


@pytest.fixture(scope="module")
def clean_sample():
    raw = read_schneider_50k().iloc[:3000].reset_index(drop=True)
    clean, _ = clean_reactions(raw)
    return clean


def _all_pass(results):
    failed = [(r.description, r.examples) for r in results if not r.passed]
    assert not failed, failed


def test_random_split_sizes_and_guarantees(clean_sample):
    parts = make_split(clean_sample, "random", {"train": 0.8, "valid": 0.1, "test": 0.1}, seed=0)
    n = len(clean_sample)
    assert len(parts["valid"]) == len(parts["test"]) == int(0.1 * n)
    assert len(parts["train"]) == int(0.8 * n)
    _all_pass(verify_parts(parts, "random", {}))
    counts = make_split(clean_sample, "random", {"train": "rest", "valid": 100, "test": 200}, seed=0)
    assert (len(counts["valid"]), len(counts["test"]), len(counts["train"])) == (100, 200, n - 300)


def test_document_split_keeps_documents_apart(clean_sample):
    parts = make_split(clean_sample, "document", {"test_ood": 300, "valid": 150, "test": 300}, seed=4)
    assert len(parts["test_ood"]) == 300 and len(parts["valid"]) == 150 and len(parts["test"]) == 300
    ood_docs = set(parts["test_ood"]["document_id"])
    id_docs = set(pd.concat([parts[p] for p in ("train", "valid", "test")])["document_id"])
    assert not ood_docs & id_docs
    # the ID test set shares documents with training by design (an ID split)
    assert set(parts["test"]["document_id"]) & set(parts["train"]["document_id"])
    _all_pass(verify_parts(parts, "document", parts.meta["config"]))
    meta = parts.meta
    used = sum(len(p) for p in parts.values())
    assert used + meta["left_out_from_truncated_documents"] + meta["reactions_without_document"] == len(clean_sample)


def test_fill_levels_takes_whole_documents_and_truncates_the_last():
    doc_sizes = [3, 2, 2, 3, 2, 2, 3, 2]
    docs = np.repeat(np.arange(len(doc_sizes)), doc_sizes)
    rows = np.arange(len(docs))
    for seed in range(10):
        rng = np.random.default_rng(seed)
        parts, meta = fill_levels_by_document(rows[rng.permutation(len(rows))], docs, [[("a", 4)], [("b", None)]], rng)
        assert len(parts["a"]) == 4
        a_docs, b_docs = set(docs[parts["a"]]), set(docs[parts["b"]])
        assert not a_docs & b_docs
        partial = [d for d in a_docs if (docs[parts["a"]] == d).sum() < doc_sizes[d]]
        assert len(partial) <= 1  # only the last document of a level is cut
        assert len(parts["a"]) + len(parts["b"]) + meta["left_out_from_truncated_documents"] == len(rows)
        assert all((docs[parts["b"]] == d).sum() == doc_sizes[d] for d in b_docs)


def test_not_enough_documents_is_a_clear_error():
    docs = np.repeat(np.arange(3), [5, 5, 5])
    rng = np.random.default_rng(0)
    with pytest.raises(UserInputError, match="short by"):
        fill_levels_by_document(np.arange(15), docs, [[("a", 12)], [("b", 10)]], rng)
    parts, _ = fill_levels_by_document(np.arange(15), docs, [[("a", 12)], [("b", 10)]], rng, leeway=10)
    assert len(parts["b"]) <= 3


def test_time_split(clean_sample):
    config = {"cutoff_years": [2000, 2005, 2010], "test_size": 40, "valid_fraction": 0.1}
    parts = make_split(clean_sample, "time", config, seed=2)
    tests = sorted(p for p in parts if p.startswith("test_"))
    assert tests and all(parts[t]["year"].eq(int(t[5:])).all() for t in tests)
    for cutoff in (2000, 2005, 2010):
        train, valid = parts[f"train_upto_{cutoff}"], parts[f"valid_upto_{cutoff}"]
        assert int(train["year"].max()) <= cutoff and int(valid["year"].max()) <= cutoff
        for t in tests:
            assert not set(parts[t]["rxn_smiles"]) & set(train["rxn_smiles"])
    assert len(parts["train_upto_2000"]) < len(parts["train_upto_2010"])
    _all_pass(verify_parts(parts, "time", parts.meta["config"]))
    fixed = make_split(clean_sample, "time", {**config, "fixed_train_size": True}, seed=2)
    sizes = {len(fixed[f"train_upto_{c}"]) for c in (2000, 2005, 2010)}
    assert sizes == {len(fixed["train_upto_2000"])}


def test_reaction_type_split_holds_out_whole_classes(clean_sample):
    config = {"held_out": ["3.1"], "test_ood": 40, "ood_train": 10, "valid": 100, "test": 100}
    parts = make_split(clean_sample, "reaction-type", config, seed=1)
    assert all(class_matches(c, ["3.1"]) for c in parts["test_ood"]["class_code"])
    assert all(class_matches(c, ["3.1"]) for c in parts["ood_train"]["class_code"])
    for name in ("train", "valid", "test"):
        assert not any(c.startswith("3.1.") for c in parts[name]["class_code"])
    assert not set(parts["test_ood"]["document_id"]) & set(parts["train"]["document_id"])
    assert len(parts["test_ood"]) == 40 and len(parts["ood_train"]) == 10
    _all_pass(verify_parts(parts, "reaction-type", parts.meta["config"]))


def test_class_prefixes_match_level_by_level():
    assert class_matches("3.1.4", ["3.1"]) and class_matches("3.1", ["3.1"])
    assert not class_matches("3.10.1", ["3.1"]) and not class_matches("3", ["3.1"])
    assert class_matches("1.3.7", ["2", "1.3.7"]) and not class_matches(None, ["1"])


def test_bespoke_classes_never_reach_training(clean_sample):
    bespoke = {"classes": ["1.3.7"], "name": "buchwald_hartwig_like"}
    parts = make_split(clean_sample, "bespoke", {"bespoke": bespoke}, seed=0)
    assert len(parts["test_bespoke"]) == int((clean_sample["class_code"] == "1.3.7").sum())
    for name in ("train", "valid", "test"):
        assert not (parts[name]["class_code"] == "1.3.7").any()
    doc = make_split(clean_sample, "document", {"bespoke": ["1.3.7"], "test_ood": 100, "valid": 50, "test": 50}, seed=0)
    assert not any((doc[p]["class_code"] == "1.3.7").any() for p in doc if p != "test_bespoke")
    _all_pass(verify_parts(doc, "document", doc.meta["config"]))


def test_splits_refuse_duplicates_and_bad_configs(clean_sample):
    doubled = pd.concat([clean_sample.iloc[:5], clean_sample.iloc[:5]])
    with pytest.raises(UserInputError, match="clean the table first"):
        make_split(doubled, "random")
    with pytest.raises(UserInputError, match="unknown split kind"):
        make_split(clean_sample, "scaffold")
    with pytest.raises(UserInputError, match="unknown key"):
        make_split(clean_sample, "random", {"trian": 0.5})
    with pytest.raises(UserInputError, match="held_out"):
        make_split(clean_sample, "reaction-type")
    with pytest.raises(UserInputError, match="cutoff_years"):
        make_split(clean_sample, "time")


def test_author_split_refuses_data_without_authors(clean_sample):
    with pytest.raises(UserInputError, match="no authors"):
        make_split(clean_sample, "author")


# --------------------------------------------------------------------------------------
# hand-built author/document graph

GRAPH = [  # document, authors, reactions
    ("D1", "Alice; Bob", 3),
    ("D2", "alice", 2),
    ("D3", "Bob;Carol", 2),
    ("D4", "Dave", 3),
    ("D5", "Erin; Frank", 2),
    ("D6", "Frank", 2),
    ("D7", "Gina", 3),
    ("D8", "Carol; Dave", 2),
    ("D9", "Hank", 3),
    ("D10", "Ivy; Hank", 2),
]


def author_table() -> pd.DataFrame:
    rows = []
    index = 1
    for doc, authors, count in GRAPH:
        for _ in range(count):
            chain = "C" * index
            rows.append({"rxn_smiles": f"{chain}O.CC(=O)O>>CC(=O)O{chain}", "document_id": doc, "authors": authors,
                         "year": 2000 + index % 5, "class_code": "2.1.1"})
            index += 1
    return pd.DataFrame(rows)


def test_author_names_are_normalized():
    assert split_authors(" Alice ;bob; ;ALICE") == ["alice", "bob"]


@pytest.mark.parametrize("seed", range(12))
def test_author_split_is_author_disjoint_and_author_dense(seed):
    table = author_table()
    config = {"test_ood": 5, "test_ood_document": 0, "valid": 0, "test": 2, "author_overbuffer": 0}
    parts = make_split(table, "author", config, seed=seed)
    assert len(parts["test_ood"]) == 5
    _all_pass(verify_parts(parts, "author", parts.meta["config"]))
    ood_authors = {a for cell in parts["test_ood"]["authors"] for a in split_authors(cell)}
    others = pd.concat([parts[p] for p in parts if p != "test_ood"])
    assert not ood_authors & {a for cell in others["authors"] for a in split_authors(cell)}
    assert not set(parts["test_ood"]["document_id"]) & set(others["document_id"])
    sizes = {doc: count for doc, _, count in GRAPH}
    ood_counts = parts["test_ood"]["document_id"].value_counts()
    assert sum(ood_counts[d] < sizes[d] for d in ood_counts.index) <= 1  # whole documents but the last
    # every reaction is accounted for: used, truncated, or left out for sharing an OOD author
    meta = parts.meta
    used = sum(len(p) for p in parts.values())
    assert used <= len(table)
    assert meta["ood_authors"] == len(ood_authors)


def test_reference_author_rule_can_share_coauthors_but_keeps_a_new_author_each():
    table = author_table()
    config = {"test_ood": 5, "test_ood_document": 0, "valid": 0, "test": 2, "author_overbuffer": 0,
              "author_disjoint": "reference"}
    leaked = 0
    for seed in range(25):
        parts = make_split(table, "author", config, seed=seed)
        reference_checks = verify_parts(parts, "author", parts.meta["config"])
        _all_pass(reference_checks)  # documents disjoint + a new author for every OOD reaction
        strict_checks = verify_parts(parts, "author", {**parts.meta["config"], "author_disjoint": "strict"})
        leaked += not all(r.passed for r in strict_checks)
    assert leaked > 0  # the co-author leak the strict default closes


# --------------------------------------------------------------------------------------
# folders, manifests, determinism, tampering


def test_split_folder_round_trip_is_deterministic(clean_sample, tmp_path):
    source = tmp_path / "clean.parquet"
    clean_sample.to_parquet(source, index=False)
    first = split_file(source, tmp_path / "a", "document", {"test_ood": 200}, seed=7)
    again = split_file(source, tmp_path / "b", "document", {"test_ood": 200}, seed=7)
    other = split_file(source, tmp_path / "c", "document", {"test_ood": 200}, seed=8)
    assert {n: e["sha256"] for n, e in first["parts"].items()} == {n: e["sha256"] for n, e in again["parts"].items()}
    assert first["parts"]["test_ood"]["sha256"] != other["parts"]["test_ood"]["sha256"]
    manifest, results = verify_split_dir(tmp_path / "a")
    _all_pass(results)
    assert manifest["input"]["rows"] == len(clean_sample) and manifest["seed"] == 7
    assert manifest["guarantees"] == [c.describe() for c in guarantees("document", manifest["config"], list(manifest["parts"]))]
    test_ood = pd.read_parquet(tmp_path / "a" / "test_ood.parquet")
    assert list(test_ood.columns) == list(clean_sample.columns) and str(test_ood["year"].dtype) == "Int64"
    with pytest.raises(UserInputError, match="already holds a split"):
        split_file(source, tmp_path / "a", "document", {"test_ood": 200}, seed=7)


def test_verify_catches_a_leak(clean_sample, tmp_path):
    folder = tmp_path / "split"
    split_frame_to_dir(clean_sample, folder, "document", {"test_ood": 200}, seed=1)
    train = pd.read_parquet(folder / "train.parquet")
    test_ood = pd.read_parquet(folder / "test_ood.parquet")
    pd.concat([test_ood, train.iloc[:2]]).to_parquet(folder / "test_ood.parquet", index=False)
    _, results = verify_split_dir(folder)
    failed = {r.check for r in results if not r.passed}
    assert failed == {"file", "disjoint_reactions", "disjoint_documents"}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["parts"]["test_ood"]["rows"] == len(test_ood)


def test_shipped_split_definitions_resolve():
    from chemassay.suites.reaction_ood.splits import (
        list_split_definitions,
        resolve_config,
        split_definition,
    )

    names = list_split_definitions()
    assert {"paper_author_document", "paper_time", "paper_reaction_type_suzuki", "schneider_document"} <= set(names)
    for name in names:
        definition = split_definition(name)
        resolved = resolve_config(definition["kind"], definition)
        assert resolved["name"] == definition["name"] and isinstance(definition["seed"], int)
    assert split_definition("paper_reaction_type_heck")["held_out"] == ["3.2"]
    with pytest.raises(UserInputError, match="no shipped split definition"):
        split_definition("nope")


def test_reaction_type_base_split_holds_nothing_out(clean_sample):
    parts = make_split(clean_sample, "reaction-type", {"held_out": [], "ood_train": 0, "valid": 100, "test": 100}, seed=0)
    assert len(parts["test_ood"]) == 0
    assert len(parts["train"]) + 200 == len(clean_sample)


def test_canonical_order_handles_key_collisions():
    from chemassay.suites.reaction_ood.splits import (
        canonical_order,
        colliding_positions,
        reaction_keys,
    )

    keys = np.array([5, 5, 3, 9], dtype=np.uint64)
    assert colliding_positions(keys).tolist() == [0, 1]
    assert canonical_order(keys, {0: "CCO>>CC=O", 1: "CC>>C=C"}).tolist() == [2, 1, 0, 3]
    with pytest.raises(UserInputError, match="more than once"):
        canonical_order(keys, {0: "CC>>C=C", 1: "CC>>C=C"})
    # keys are stable: the split of a set of reactions must not change between runs or machines
    assert reaction_keys(["CC>>C=C"]).tolist() == [int.from_bytes(hashlib.blake2b(b"CC>>C=C", digest_size=8).digest(), "little")]


def test_split_file_refuses_uncleaned_input(clean_sample, tmp_path):
    doubled = pd.concat([clean_sample.iloc[:50], clean_sample.iloc[:10]])
    source = tmp_path / "doubled.parquet"
    doubled.to_parquet(source, index=False)
    with pytest.raises(UserInputError, match="10 reaction"):
        split_file(source, tmp_path / "out", "random")
    # the same rows in another file order give the same split
    source_a, source_b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    clean_sample.iloc[:400].to_parquet(source_a, index=False)
    clean_sample.iloc[:400].iloc[::-1].to_parquet(source_b, index=False)
    a = split_file(source_a, tmp_path / "sa", "random", seed=3)
    b = split_file(source_b, tmp_path / "sb", "random", seed=3)
    test_a = set(pd.read_parquet(tmp_path / "sa" / "test.parquet")["rxn_smiles"])
    test_b = set(pd.read_parquet(tmp_path / "sb" / "test.parquet")["rxn_smiles"])
    assert test_a == test_b and a["parts"]["test"]["rows"] == b["parts"]["test"]["rows"]


@given(
    st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=40),
    st.integers(min_value=0, max_value=30),
    st.integers(min_value=0, max_value=2**32 - 1),
)
@settings(max_examples=60, deadline=None)
def test_document_filling_properties(doc_sizes, first_size, seed):
    docs = np.repeat(np.arange(len(doc_sizes)), doc_sizes)
    rng = np.random.default_rng(seed)
    total = len(docs)
    first = min(first_size, total)
    parts, meta = fill_levels_by_document(rng.permutation(total), docs, [[("a", first)], [("b", None)]], rng,
                                          leeway=total)
    a, b = parts["a"], parts["b"]
    assert len(np.intersect1d(a, b)) == 0 and len(np.unique(a)) == len(a)
    assert not set(docs[a]) & set(docs[b])  # no document on both sides
    assert len(a) <= first
    assert len(a) + len(b) + meta["left_out_from_truncated_documents"] == total
    cut = [d for d in set(docs[a]) if (docs[a] == d).sum() < doc_sizes[d]]
    assert len(cut) <= 1
    if first == 0:
        assert meta["left_out_from_truncated_documents"] == 0 and len(b) == total
    assert all((docs[b] == d).sum() == doc_sizes[d] for d in set(docs[b]))
