"""Response parsing: messy model outputs, the repairs recorded, strict (published) mode."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from chemassay.suites.mechanism.parse import PredStep, parse_prediction, parse_response, parse_steps
from chemassay.suites.mechanism.taxonomy import TAXONOMY

STEPS = [
    {"step": 1, "type": "proton_transfer", "subtype": "acid_base_proton_transfer", "intermediate_smiles": "[CH2-]C=O"},
    {"step": 2, "type": "addition", "subtype": "nucleophilic_addition", "intermediate_smiles": "CC([O-])CC=O"},
]
EXPECTED = [
    PredStep("acid_base_proton_transfer", "proton_transfer", "[CH2-]C=O"),
    PredStep("nucleophilic_addition", "addition", "CC([O-])CC=O"),
]


def test_clean_json_needs_no_repair():
    parsed = parse_response(json.dumps(STEPS))
    assert parsed.steps == EXPECTED and not parsed.repairs and parsed.error is None


def test_code_fence_with_prose_and_trailing_commas():
    text = "Sure! Here is the mechanism:\n```json\n" + json.dumps(STEPS, indent=2).replace("}\n]", "},\n]") + "\n```\nHope this helps."
    parsed = parse_response(text)
    assert parsed.steps == EXPECTED
    assert parsed.repairs["code_fence"] == 1 and parsed.repairs["trailing_commas"] == 1


def test_answer_tags_wrapping_dict_and_cot_reasoning():
    text = (
        "<think>enolate first, then attack</think>Reasoning: the base removes a proton...\n"
        "[ANSWER]{\"mechanism\": " + json.dumps(STEPS) + "}[/ANSWER]"
    )
    parsed = parse_response(text)
    assert parsed.steps == EXPECTED
    assert {"answer_tags", "unwrapped_dict", "reasoning_removed"} <= set(parsed.repairs)


def test_the_cot_prompts_own_example_missing_comma_is_repaired():
    # prompts/cot.txt shows a step with a missing comma after "rationale" and trailing commas.
    text = (
        '[\n  {\n  "step": 1,\n  "rationale": "Protonation.",\n  "type": "proton_transfer",\n'
        '  "subtype": "acid_base_proton_transfer",\n  "intermediate_smiles": "CC(O)CC=O",\n  },\n'
        '  {\n  "step": 2,\n  "rationale": "Attack."\n  "type": "addition",\n'
        '  "subtype": "nucleophilic_addition",\n  "intermediate_smiles": "CC([O-])CC=O",\n  }\n]'
    )
    parsed = parse_response(text)
    assert [s.subtype for s in parsed.steps] == ["acid_base_proton_transfer", "nucleophilic_addition"]
    assert parsed.repairs["missing_commas"] == 1


def test_label_repairs():
    raw = [
        {"type": "Proton Transfer", "intermediate": "CC"},  # type only, single-subtype type
        {"subtype": "Nucleophilic-Addition", "smiles": "CCO"},  # spelling, subtype only
        {"type": "sigmatropic_rearrangement", "intermediate_smiles": "C=CC"},  # subtype in the type field
        {"type": "addition", "intermediate_smiles": "CC=O"},  # ambiguous type, no subtype
        {"type": "addition", "subtype": "made_up", "intermediate_smiles": "CCC"},  # unknown label kept
        "not a step",
    ]
    parsed = parse_steps(raw)
    assert parsed.steps == [
        PredStep("acid_base_proton_transfer", "proton_transfer", "CC"),
        PredStep("nucleophilic_addition", "addition", "CCO"),
        PredStep("sigmatropic_rearrangement", "pericyclic", "C=CC"),
        PredStep(None, "addition", "CC=O"),
        PredStep("made_up", "addition", "CCC"),
        PredStep(None, None, None),
    ]
    assert parsed.repairs["subtype_inferred_from_type"] == 1
    assert parsed.repairs["subtype_spelling"] == 1
    assert parsed.repairs["subtype_from_type_field"] == 1
    assert parsed.repairs["subtype_missing"] == 1
    assert parsed.repairs["non_object_step"] == 1
    assert parsed.repairs["smiles_key:intermediate"] == 1 and parsed.repairs["smiles_key:smiles"] == 1


def test_python_literal_and_truncated_output():
    assert parse_response(repr(STEPS)).repairs["python_literal"] == 1
    truncated = json.dumps(STEPS)[:-20]
    parsed = parse_response(truncated)
    assert parsed.ok and parsed.repairs["unterminated"] == 1 and parsed.steps[0] == EXPECTED[0]


def test_unparseable_responses_give_reasons():
    for text in ("", "I cannot answer this.", "[1, 2, 3]", "{\"answer\": 42}"):
        parsed = parse_response(text)
        assert not parsed.ok and parsed.error
    assert parse_response(None).error == "response is a NoneType, not text"


def test_strict_mode_is_the_published_pipeline():
    fenced = "```json\n" + json.dumps(STEPS) + "\n```"
    assert parse_response(fenced, strict=True).steps == [PredStep(s["subtype"], s["type"], s["intermediate_smiles"]) for s in STEPS]
    tagged = "blah [ANSWER]" + json.dumps({"mechanism": STEPS}) + "[/ANSWER] blah"
    assert parse_response(tagged, strict=True).ok
    assert parse_response("The mechanism is : " + json.dumps(STEPS), strict=True).ok  # the "is :" clean-up
    # What the published pipeline cannot read, strict mode cannot either.
    assert not parse_response("Here: " + json.dumps(STEPS), strict=True).ok
    assert not parse_steps([{"type": "addition", "intermediate_smiles": "CC"}], strict=True).ok
    assert not parse_steps([{"subtype": "x", "intermediate_smiles": None}], strict=True).ok
    assert not parse_steps([{"subtype": "x", "intermediate_smiles": "CC"}, "junk"], strict=True).ok
    # ...and it never changes labels.
    assert parse_steps([{"subtype": "Nucleophilic Addition", "intermediate_smiles": "CC"}], strict=True).steps[0].subtype == "Nucleophilic Addition"


def test_prediction_records():
    assert parse_prediction({"reaction_id": "x", "mechanism": STEPS}).steps == EXPECTED
    assert parse_prediction({"reaction_id": "x", "response": json.dumps(STEPS)}).steps == EXPECTED
    assert parse_prediction({"reaction_id": "x", "output": STEPS}).steps == EXPECTED  # run.py output files
    assert parse_prediction({"reaction_id": "x", "output": "[ANSWER]" + json.dumps(STEPS)}).ok
    assert not parse_prediction({"reaction_id": "x", "output": "garbled"}, strict=True).ok
    assert "no response" in parse_prediction({"reaction_id": "x", "error": "HTTP 400"}).error
    assert not parse_prediction({"reaction_id": "x"}).ok


SUBTYPES = [entry for entry in TAXONOMY]
smiles_strategy = st.sampled_from(["CC", "CC(=O)O", "c1ccccc1", "[CH2-]C=O", "C=C[O-]", "O=C(O)CCl"])


@settings(max_examples=120, deadline=None)
@given(
    steps=st.lists(st.tuples(st.sampled_from(SUBTYPES), smiles_strategy), min_size=1, max_size=6),
    before=st.sampled_from(["", "Here is my answer.\n", "Let me think step by step. First [the enolate]...\n"]),
    after=st.sampled_from(["", "\nLet me know if you need more.", "\n(end)"]),
    wrapper=st.sampled_from(["plain", "fence", "tags", "dict"]),
    indent=st.sampled_from([None, 2]),
)
def test_any_wrapped_step_list_parses_back(steps, before, after, wrapper, indent):
    data = [
        {"step": i, "type": entry.type, "subtype": entry.subtype, "intermediate_smiles": smiles}
        for i, (entry, smiles) in enumerate(steps, start=1)
    ]
    body = json.dumps({"mechanism": data} if wrapper == "dict" else data, indent=indent)
    if wrapper == "fence":
        body = "```json\n" + body + "\n```"
    elif wrapper == "tags":
        body = "[ANSWER]\n" + body + "\n[/ANSWER]"
    parsed = parse_response(before + body + after)
    assert parsed.ok, parsed.error
    assert [(s.subtype, s.type, s.smiles) for s in parsed.steps] == [
        (entry.subtype, entry.type, smiles) for entry, smiles in steps
    ]
