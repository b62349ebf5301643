"""oMeBench files: reading (JSON array / JSONL, line numbers), the taxonomy derived from
the shipped data, validation (every problem kind), and the step-weight scheme."""

from __future__ import annotations

import json
import statistics

import pytest
from scipy.stats import spearmanr

from chemassay.contract.errors import UserInputError
from chemassay.suites.mechanism.data import omebench_file as bundled_path
from chemassay.suites.mechanism.records import (
    Reaction,
    Step,
    load_reactions,
    read_records,
)
from chemassay.suites.mechanism.taxonomy import (
    SUBTYPE_TO_TYPE,
    TAXONOMY,
    TYPES,
    canonical_subtype,
    derive_taxonomy,
    only_subtype,
)
from chemassay.suites.mechanism.validate import validate_file
from chemassay.suites.mechanism.weights import (
    CLIP_HIGH,
    CLIP_LOW,
    position_modifier,
    raw_weight,
    resolve_weights,
    scheme_weights,
)


def test_bundled_gold_matches_the_paper(gold_reactions):
    assert len(gold_reactions) == 196
    assert sum(len(r.steps) for r in gold_reactions) == 858
    levels = statistics.multimode([r.level for r in gold_reactions])
    assert levels == ["medium"]
    assert {r.level for r in gold_reactions} == {"easy", "medium", "hard"}
    assert sum(r.level == "easy" for r in gold_reactions) == 35
    assert sum(r.level == "hard" for r in gold_reactions) == 23


def test_taxonomy_is_the_one_the_gold_data_uses(gold_reactions):
    records = [r.to_record() for r in gold_reactions]
    pairs = derive_taxonomy(records)
    assert len(pairs) == 30 and sum(pairs.values()) == 858
    # Every Gold pair is in the taxonomy; the taxonomy adds only the prompt's 'migratory insertion'.
    assert set(pairs) == {(e.type, e.subtype) for e in TAXONOMY} - {("rearrangement", "migratory insertion")}
    assert len(TYPES) == 11 and len(TAXONOMY) == 31
    assert pairs[("proton_transfer", "acid_base_proton_transfer")] == 289
    assert pairs[("addition", "nucleophilic_addition")] == 166
    assert all(SUBTYPE_TO_TYPE[sub] == kind for kind, sub in pairs)
    assert canonical_subtype("1,2 Shift") == "1,2-shift" and canonical_subtype("Migratory-Insertion") == "migratory insertion"
    assert only_subtype("proton_transfer") == "acid_base_proton_transfer" and only_subtype("addition") is None


def test_json_array_records_keep_their_line(tmp_path):
    path = tmp_path / "two.json"
    path.write_text('[\n  {"reaction_id": "A", "mechanism": []},\n\n  {"reaction_id": "B",\n "mechanism": []}, 3\n]\n')
    found = read_records(path)
    assert found.format == "json"
    assert [(r.line, r.data["reaction_id"]) for r in found.records] == [(2, "A"), (4, "B")]
    assert found.malformed[0].line == 5 and "int" in found.malformed[0].reason
    gold = read_records(bundled_path("gold"))
    assert gold.records[1].data["reaction_id"] == "NR-002" and gold.records[1].line > gold.records[0].line


def test_jsonl_reports_bad_lines_and_rejects_unusable_files(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"reaction_id": "A", "mechanism": [{"intermediate_smiles": "CC"}]}\nnot json\n[1]\n\n')
    found = read_records(path)
    assert found.format == "jsonl" and len(found.records) == 1
    assert [(m.line, m.reason.split(" (")[0]) for m in found.malformed] == [(2, "not valid JSON"), (3, "a JSON list, not an object")]
    loaded = load_reactions(path)
    assert [r.reaction_id for r in loaded.reactions] == ["A"] and len(loaded.rejected) == 2
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    with pytest.raises(UserInputError, match="empty"):
        read_records(empty)
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("hello\nworld\n")
    with pytest.raises(UserInputError, match="not oMeBench JSON"):
        read_records(garbage)


def test_validate_gold_finds_the_four_numbering_slips():
    report = validate_file(bundled_path("gold"))
    assert report.n_reactions == 196 and report.n_steps == 858
    assert report.counts() == {"step_numbering": 4}
    assert sorted(p.reaction_id for p in report.problems) == ["NR-017", "NR-034", "NR-201", "NR-244"]
    nr201 = next(p for p in report.problems if p.reaction_id == "NR-201")
    assert nr201.message == "steps missing [3], repeated [2]" and nr201.field == "mechanism[].step"


def test_validate_template_reports_its_label_and_smiles_problems():
    report = validate_file(bundled_path("template"))
    counts = report.counts()
    assert counts["unknown_subtype"] == 18 and counts["type_mismatch"] == 3 and counts["unknown_type"] == 2
    assert counts["duplicate_id"] == 1 and counts["weights_sum"] == 56 and counts["invalid_smiles"] == 35
    bad = next(p for p in report.problems if p.kind == "invalid_smiles" and p.reaction_id == "NR-047")
    assert bad.field == "reactants_smiles[0]" and "syntax error" in bad.message


def test_validate_every_problem_kind(tmp_path):
    good_step = {"step": 1, "type": "addition", "subtype": "nucleophilic_addition", "intermediate_smiles": "CCO", "step_weight": 1.0}
    records = [
        {"reaction_id": "ok", "level": "easy", "reactants_smiles": ["CC=O"], "products_smiles": ["CCO"], "mechanism": [good_step]},
        {"reaction_id": "ok", "level": "easy", "reactants_smiles": ["CC=O"], "products_smiles": ["CCO"], "mechanism": [good_step]},
        {
            "reaction_id": "bad", "level": "expert", "reactants_smiles": ["C1CC"], "products_smiles": [],
            "mechanism_step_nums": 5,
            "mechanism": [
                {"step": 1, "type": "addition", "subtype": "proton_elimination", "intermediate_smiles": "CC", "step_weight": 0.5},
                {"step": 3, "type": "shuffle", "subtype": "wiggle", "intermediate_smiles": "C(C)(C)(C)(C)C", "step_weight": 0.2},
                {"step": 3, "intermediate_smiles": 7, "step_weight": -1},
            ],
        },
        {"reaction_id": "part", "level": "hard", "reactants_smiles": ["C"], "products_smiles": ["C"],
         "mechanism": [dict(good_step), {**good_step, "step": 2, "step_weight": None}]},
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "{broken\n")
    report = validate_file(path)
    kinds = report.counts()
    for kind in ("duplicate_id", "unknown_level", "invalid_smiles", "missing_field", "step_count", "type_mismatch",
                 "unknown_type", "unknown_subtype", "step_numbering", "weight_invalid", "weights_partial", "malformed"):
        assert kind in kinds, kind
    bad = [p for p in report.problems if p.reaction_id == "bad"]
    fields = {p.field for p in bad}
    assert {"reactants_smiles[0]", "products_smiles", "mechanism[1].subtype", "mechanism[2].type",
            "mechanism[2].intermediate_smiles", "mechanism[3].type", "mechanism[3].step_weight"} <= fields
    assert next(p for p in bad if p.kind == "step_numbering").message == "steps missing [2], repeated [3]"
    assert {p.severity for p in report.problems if p.kind in ("unknown_level", "step_count")} == {"warning"}
    # weights summing to 0.7 are reported when every step has one
    path2 = tmp_path / "sum.jsonl"
    path2.write_text(json.dumps({**records[0], "mechanism": [{**good_step, "step_weight": 0.7}]}) + "\n")
    assert validate_file(path2).counts() == {"weights_sum": 1}


# ------------------------------------------------------------------------------ weights


def _steps(*subtypes: str, smiles: str = "CC") -> tuple[Step, ...]:
    return tuple(Step(i, SUBTYPE_TO_TYPE[s], s, smiles) for i, s in enumerate(subtypes, start=1))


def test_data_weights_are_used_when_present(gold_reactions):
    reaction = gold_reactions[0]
    resolved = resolve_weights(reaction)
    assert resolved.source == "data"
    assert resolved.weights == tuple(s.step_weight for s in reaction.steps)


def test_scheme_used_without_weights_and_normalized():
    reaction = Reaction("x", "hard", None, ("CC=O",), ("CCO",), "", _steps(
        "acid_base_proton_transfer", "nucleophilic_addition", "sigmatropic_rearrangement", "acid_base_proton_transfer"))
    resolved = resolve_weights(reaction)
    assert resolved.source == "fitted"
    assert sum(resolved.weights) == pytest.approx(1.0)
    # hand-computed: base x modifier x position x difficulty (hard 1.37), clipped, normalized
    raw = [0.95 * 1.0 * 1.0 * 1.37, 2.3 * 1.0 * 1.07 * 1.37, 5.0 * 1.1 * 1.0 * 1.37, 0.95 * 0.83 * 1.37]
    raw = [min(CLIP_HIGH, max(CLIP_LOW, x)) for x in raw]
    assert resolved.weights == pytest.approx(tuple(x / sum(raw) for x in raw))
    assert raw[2] == CLIP_HIGH  # 7.535 is clipped to 6.0


def test_placeholder_zero_weights_fall_back_to_the_scheme():
    steps = tuple(Step(i, "addition", "nucleophilic_addition", "CC", 0.0) for i in (1, 2))
    reaction = Reaction("t", "easy", None, (), (), "", steps)
    assert resolve_weights(reaction).source == "fitted"


def test_position_and_stereo_modifiers():
    assert [position_modifier(i, 8) for i in range(8)] == [1.0, 1.0, 1.0, 1.07, 1.0, 1.0, 0.93, 0.83]
    assert position_modifier(0, 1) == 1.0
    plain = raw_weight(Step(1, "addition", "nucleophilic_addition", "CC(O)C"), 0, 3, "easy")
    stereo = raw_weight(Step(1, "addition", "nucleophilic_addition", "C[C@H](O)C"), 0, 3, "easy")
    assert stereo == pytest.approx(plain * 1.1)
    assert scheme_weights((), "easy") == []


def test_scheme_reproduces_the_shipped_gold_weights_closely(gold_reactions):
    errors, correlations = [], []
    for reaction in gold_reactions:
        predicted = scheme_weights(reaction.steps, reaction.level)
        shipped = [s.step_weight for s in reaction.steps]
        errors += [abs(a - b) for a, b in zip(predicted, shipped, strict=True)]
        if len(set(shipped)) > 1:
            correlations.append(spearmanr(predicted, shipped).statistic)
    uniform = [abs(1 / len(r.steps) - s.step_weight) for r in gold_reactions for s in r.steps]
    assert statistics.fmean(errors) < 0.0065  # uniform weights: 0.075
    assert statistics.fmean(uniform) > 0.07
    assert statistics.fmean(correlations) > 0.9
