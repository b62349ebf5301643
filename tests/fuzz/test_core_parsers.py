"""Fuzz the chemistry core, the model-spec grammar, the answer parsers and the file readers:
random and adversarial input may only raise the documented error types."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chemassay.chem import (
    BagParseError,
    FormulaError,
    InvalidReaction,
    InvalidSmiles,
    TokenizationError,
    canonical_smiles,
    parse_bag,
    parse_formula,
    parse_reaction,
    parse_smiles,
    tokenize_smiles,
)
from chemassay.contract.errors import UserInputError
from support.fuzz_strategies import FUZZ, adversarial_text, hostile_file_bytes, smiles_like


@FUZZ
@given(adversarial_text)
def test_smiles_parsing(text):
    try:
        mol = parse_smiles(text)
    except InvalidSmiles as exc:
        assert exc.reason
        return
    assert mol.GetNumAtoms() >= 0
    assert isinstance(canonical_smiles(text), str)


@FUZZ
@given(st.one_of(adversarial_text, st.builds(lambda a, b, c: f"{a}>{b}>{c}", smiles_like, smiles_like, smiles_like)))
def test_reaction_parsing(text):
    try:
        reaction = parse_reaction(text)
    except InvalidReaction as exc:
        assert exc.reason
        return
    assert isinstance(reaction.reactants, list)


@FUZZ
@given(st.one_of(adversarial_text, st.text(alphabet="CHNOSPClBrNaFe0123456789+-()", max_size=60)))
def test_formula_parsing(text):
    try:
        parse_formula(text)
    except FormulaError:
        pass


@pytest.mark.parametrize("encoding", ["smiles", "formula"])
@FUZZ
@given(st.one_of(adversarial_text, st.builds(lambda n, s: "{" + n + "}" + s, st.text(alphabet="0123456789", max_size=6000), smiles_like)))
def test_bag_parsing(encoding, text):
    try:
        parse_bag(text, encoding)
    except BagParseError as exc:
        assert exc.args[0]


@FUZZ
@given(adversarial_text)
def test_tokenizer_round_trip_or_error(text):
    try:
        tokens = tokenize_smiles(text)
    except TokenizationError:
        return
    assert "".join(tokens) == text


@FUZZ
@given(adversarial_text)
def test_model_spec_grammar(text):
    from chemassay.models.spec import parse_spec

    try:
        spec = parse_spec(text)
    except UserInputError:
        return
    assert parse_spec(spec.text) == spec


@FUZZ
@given(st.one_of(adversarial_text, st.binary(max_size=300).map(lambda b: b.decode("latin-1"))), st.integers(1, 10))
def test_text_model_answer_parsers_never_raise(text, k):
    from chemassay.chem.answers import ranked_smiles as parse_ranked_smiles
    from chemassay.chem.answers import smiles_lines as parse_smiles_lines
    from chemassay.suites.stoichiometry.protocol import parse_bag_answer

    assert len(parse_ranked_smiles(text, k)) <= k
    assert isinstance(parse_bag_answer(text), str)
    assert all(isinstance(s, str) for s in parse_smiles_lines(text))


@FUZZ
@given(hostile_file_bytes(), st.sampled_from(["in.txt", "in.csv", "in.tsv", "in.txt.gz", "in.smi"]))
def test_file_readers(tmp_path_factory, data, name):
    from chemassay.data.readers import iter_lines, read_smiles_file, read_table

    path = tmp_path_factory.mktemp("fuzz") / name
    path.write_bytes(data)
    for read in (read_smiles_file, lambda p: list(iter_lines(p))):
        try:
            read(path)
        except UserInputError as exc:
            assert str(path) in str(exc) and "\n" not in str(exc)
    if not name.endswith(".gz"):
        try:
            read_table(path)
        except UserInputError as exc:
            assert str(path) in str(exc)
