import pytest
from hypothesis import given
from hypothesis import strategies as st

from chemassay.contract.errors import UserInputError
from chemassay.models.spec import ModelSpec, check_options, option_bool, option_int, parse_spec


@pytest.mark.parametrize(
    ("text", "kind", "arg", "options"),
    [
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini", {}),
        ("openai:gpt-4o,base_url=http://localhost:8000/v1,temperature=0", "openai", "gpt-4o",
         {"base_url": "http://localhost:8000/v1", "temperature": "0"}),
        ("python:my_pkg.models:make", "python", "my_pkg.models:make", {}),
        ("python:./models.py:make,size=3", "python", "./models.py:make", {"size": "3"}),
        ("fingerprint:radius=3,bits=4096", "fingerprint", "", {"radius": "3", "bits": "4096"}),
        ("nearest-neighbour", "nearest-neighbour", "", {}),
        ("hf:org/name", "hf", "org/name", {}),
        ("predictions:a\\,b.csv", "predictions", "a,b.csv", {}),
        ("HF:./dir", "hf", "./dir", {}),
    ],
)
def test_grammar(text, kind, arg, options):
    spec = parse_spec(text)
    assert (spec.kind, spec.arg, spec.options) == (kind, arg, options)
    assert parse_spec(spec.text) == spec  # the canonical text parses back to the same spec


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "empty spec"), (":x", "not a model kind"), ("openai:m,temperature", "not key=value"),
     ("openai:m,a=1,a=2", "given twice"), ("9x:y", "not a model kind")],
)
def test_errors_say_what_is_wrong(text, message):
    with pytest.raises(UserInputError, match=message):
        parse_spec(text)


def test_option_helpers():
    spec = parse_spec("x:y,n=3,flag=yes,bad=z")
    assert option_int(spec, "n", 1) == 3 and option_int(spec, "m", 7) == 7
    assert option_bool(spec, "flag", False) is True
    with pytest.raises(UserInputError, match="must be an integer"):
        option_int(spec, "bad", 1)
    with pytest.raises(UserInputError, match="unknown option"):
        check_options(spec, {"n", "flag"})


@given(
    kind=st.from_regex(r"[a-z][a-z0-9\-]{0,10}", fullmatch=True),
    arg=st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="=\\"), max_size=20),
    options=st.dictionaries(st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True),
                            st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\\"), max_size=10),
                            max_size=3),
)
def test_round_trip(kind, arg, options):
    spec = ModelSpec(kind, arg.strip(), {k: v.strip() for k, v in options.items()})
    assert parse_spec(spec.text) == spec
