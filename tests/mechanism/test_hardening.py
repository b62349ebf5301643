"""Issue 18 for the mechanism suite: any model answer is scored (never a crash), unreadable
files give one line, an unreachable endpoint fails fast, partial predictions are said, the
length plot shows every line, an unwritable --out fails before any work."""

from __future__ import annotations

import gzip
import json
import socket
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chemassay.contract.result import read_result
from chemassay.suites.mechanism.parse import (
    ParsedMechanism,
    parse_prediction,
    parse_response,
    parse_steps,
)

ADVERSARIAL = ["{{", "{[", "{{ 2", "{{}}", "[{{}}]", "{[]}", "{{'a'}}", "[" * 1500, '{"a":' * 1500,
               "[" * 100_000, "{" * 50_000 + "}" * 50_000, '[{"subtype": ' * 3000]


@pytest.mark.parametrize("answer", ADVERSARIAL, ids=lambda a: repr(a[:12]) + f"x{len(a)}")
@pytest.mark.parametrize("strict", [False, True])
def test_adversarial_answers_are_parsed_never_raised(answer, strict):
    parsed = parse_response(answer, strict=strict)
    assert isinstance(parsed, ParsedMechanism)
    assert parsed.ok or parsed.error


def test_adversarial_answers_are_scored_by_the_cli(cli, tmp_path, gold_reactions):
    rows = [{"reaction_id": r.reaction_id, "response": answer} for r, answer in zip(gold_reactions, ADVERSARIAL, strict=False)]
    pred = tmp_path / "adversarial.jsonl"
    pred.write_text("".join(json.dumps(row) + "\n" for row in rows))
    for strict in ((), ("--strict",)):
        result = cli("mechanism", "evaluate", pred, "--out", tmp_path / "r.json", *strict)
        assert result.code == 0, result.stderr
        data = read_result(tmp_path / "r.json")
        assert data.metrics["S_total"] == 0.0 and data.metrics["n_scored"] + data.metrics["n_unparsed"] == len(rows)


def test_a_prediction_line_nested_too_deeply_is_a_skipped_line(cli, tmp_path, gold_reactions):
    good = {"reaction_id": gold_reactions[0].reaction_id, "mechanism": []}
    pred = tmp_path / "deep.jsonl"
    pred.write_text(json.dumps(good) + "\n" + '{"reaction_id": "x", "mechanism": ' + "[" * 5000 + "\n")
    result = cli("mechanism", "evaluate", pred, "--out", tmp_path / "r.json")
    assert result.code == 0, result.stderr
    skipped = read_result(tmp_path / "r.json").skipped
    rows = [s for s in skipped if not s.reason.startswith("no prediction:")]  # the 195 gold reactions unanswered
    assert [(s.line, "nested too deeply" in s.reason) for s in rows] == [(2, True)] and len(skipped) == 196


def test_oversized_answers_and_step_lists_score_zero_with_a_reason():
    assert "not parsed" in parse_response("x" * 1_000_001).error
    steps = [{"subtype": "coordination", "intermediate_smiles": "C"}] * 1001
    assert "not scored" in parse_steps(steps).error and "not scored" in parse_steps(steps, strict=True).error
    assert parse_steps(steps[:1000]).ok


# Text made of the pieces JSON repairs look for, nested and repeated at random.
_TOKENS = st.sampled_from(["[", "]", "{", "}", "{{", "[{", '"', "'", ",", ":", "//", "/*", "*/", "```", "```json\n",
                           "[ANSWER]", "[/ANSWER]", "<think>", "</think>", "is :", '"subtype"', '"intermediate"',
                           '"nucleophilic_addition"', "CCO", "null", "True", "1e999", "-", "\\", "\x00", "\ufffd",
                           "\ud800", " ", "\n"])
_FUZZ_TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(_TOKENS, max_size=200).map("".join),
    st.builds(lambda opener, depth, tail: opener * depth + tail, st.sampled_from(["[", "{", '{"a":', "[{", "{["]),
              st.integers(0, 4000), st.text(max_size=20)),
    st.binary(max_size=300).map(lambda b: b.decode("latin-1")),
)


def _check_any_text(text):
    for strict in (False, True):
        parsed = parse_response(text, strict=strict)
        assert parsed.ok or isinstance(parsed.error, str)
        if parsed.ok:
            assert all(step.smiles is None or isinstance(step.smiles, str) for step in parsed.steps)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_FUZZ_TEXT)
def test_fuzz_any_text_gives_steps_or_a_reason(text):
    _check_any_text(text)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_FUZZ_TEXT)
def test_fuzz_any_text_long_run(text):
    _check_any_text(text)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["subtype", "type", "intermediate_smiles", "smiles", "mechanism", "steps", "x"]), children,
        max_size=4),
    max_leaves=30,
)


def _check_record(value, field):
    for strict in (False, True):
        parsed = parse_prediction({"reaction_id": "R", field: value}, strict=strict)
        assert parsed.ok or isinstance(parsed.error, str)


_FIELDS = st.sampled_from(["mechanism", "response", "output", "error", "other"])


@settings(max_examples=200, deadline=None)
@given(value=_JSON, field=_FIELDS)
def test_fuzz_any_decoded_prediction_record(value, field):
    _check_record(value, field)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None)
@given(value=_JSON, field=_FIELDS)
def test_fuzz_any_decoded_prediction_record_long_run(value, field):
    _check_record(value, field)


_FILE_BYTES = st.one_of(
    st.binary(max_size=400),
    st.lists(_TOKENS, max_size=100).map(lambda parts: "".join(parts).encode("utf-8", "surrogatepass")),
    st.builds(lambda depth, body: (("[" * depth) + body).encode(), st.integers(0, 3000), st.text(max_size=30)),
    st.builds(lambda data: gzip.compress(data)[: max(1, len(data) // 2)], st.binary(min_size=1, max_size=200)),
)


def _check_file(tmp_path_factory, data, suffix):
    from chemassay.contract.errors import UserInputError
    from chemassay.suites.mechanism.records import read_records

    path = tmp_path_factory.mktemp("fuzz") / f"input{suffix}"
    path.write_bytes(data)
    try:
        found = read_records(path)
    except UserInputError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
    else:
        assert all(isinstance(record.data, dict) for record in found.records)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_FILE_BYTES, suffix=st.sampled_from([".jsonl", ".json", ".jsonl.gz"]))
def test_fuzz_the_reaction_file_reader(tmp_path_factory, data, suffix):
    _check_file(tmp_path_factory, data, suffix)


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=_FILE_BYTES, suffix=st.sampled_from([".jsonl", ".json", ".jsonl.gz"]))
def test_fuzz_the_reaction_file_reader_long_run(tmp_path_factory, data, suffix):
    _check_file(tmp_path_factory, data, suffix)


# ------------------------------------------------------------------------- unreadable files


def _bad_files(tmp_path, gold_reactions):
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(json.dumps({"reaction_id": "NR-001", "response": "caf\u00e9"}, ensure_ascii=False).encode("latin-1") + b"\n")
    rows = "".join(json.dumps({"reaction_id": r.reaction_id, "mechanism": []}) + "\n" for r in gold_reactions)
    truncated = tmp_path / "truncated.jsonl.gz"
    truncated.write_bytes(gzip.compress(rows.encode())[:400])
    return {"binary": binary, "latin1": latin, "truncated": truncated}


@pytest.mark.parametrize("kind", ["binary", "latin1", "truncated"])
def test_unreadable_files_give_one_line_naming_them(cli, tmp_path, gold_reactions, kind):
    bad = _bad_files(tmp_path, gold_reactions)[kind]
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"reaction_id": gold_reactions[0].reaction_id, "mechanism": []}) + "\n")
    commands = [
        ("mechanism", "evaluate", bad),
        ("mechanism", "evaluate", good, "--gold", bad),
        ("mechanism", "verify", bad),
    ]
    expected = {"binary": ("binary file", "not UTF-8"), "latin1": ("not UTF-8",), "truncated": ("truncated",)}[kind]
    for command in commands:
        result = cli(*command)
        assert result.code == 2, (command, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and str(bad) in lines[0], (command, result.stderr)
        assert any(word in lines[0] for word in expected), (command, result.stderr)
        assert "Traceback" not in result.stderr


def test_a_binary_predictions_file_to_resume_is_one_line(cli, tmp_path):
    out = tmp_path / "pred.jsonl"
    out.write_bytes(b"\xff\xfe\x00binary")
    result = cli("mechanism", "predict", "gold", "--model", "gold-oracle", "--out", out)
    assert result.code == 2 and str(out) in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_substituents_file_that_is_not_text_is_one_line(cli, tmp_path):
    bad = tmp_path / "subs.json"
    bad.write_bytes(b"\xff\xfe\xfa")
    result = cli("mechanism", "expand", "template", "--out", tmp_path / "x.jsonl", "--substituents", bad)
    assert result.code == 2 and str(bad) in result.stderr and "not UTF-8" in result.stderr


# ------------------------------------------------------------------------ unreachable endpoint


def _refused_url() -> str:
    """A local URL nothing listens on (the port was just free)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("verb", ["predict", "predict --base-url", "evaluate"])
def test_unreachable_endpoint_fails_fast_with_one_line(cli, tmp_path, verb):
    pytest.importorskip("httpx", reason="the llm extra is not installed")
    url = _refused_url()
    out = tmp_path / "pred.jsonl"
    args = {
        "predict": ("mechanism", "predict", "gold", "--model", f"openai:m,base_url={url}", "--out", out),
        "predict --base-url": ("mechanism", "predict", "gold", "--model", "openai:m", "--base-url", url, "--out", out),
        "evaluate": ("mechanism", "evaluate", "--model", "openai:m", "--base-url", url, "--predictions-out", out),
    }[verb]
    started = time.perf_counter()
    result = cli(*args)
    elapsed = time.perf_counter() - started
    assert result.code == 2, result.stderr
    assert elapsed < 15, f"{elapsed:.1f} s"  # was 120 s of silence and 6 tries per reaction
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and url in lines[0] and "connection failed" in lines[0]
    assert not out.exists()  # nothing partial left behind


# ------------------------------------------------------------------------------ partial input


def test_partial_predictions_are_said_on_the_console_and_in_the_result(cli, tmp_path, gold_reactions):
    from chemassay.suites.mechanism.baselines import gold_oracle

    pred = tmp_path / "partial.jsonl"
    pred.write_text("".join(json.dumps(row) + "\n" for row in gold_oracle(gold_reactions[:12])))
    result = cli("mechanism", "evaluate", pred, "--out", tmp_path / "r.json")
    assert result.code == 0
    assert "warning: 184 of 196 gold reactions have no prediction" in result.stderr
    data = read_result(tmp_path / "r.json")
    assert data.metrics["n_missing"] == 184 and data.details.warnings[0].startswith("184 of 196 gold reactions have no prediction")
    quiet = cli("--quiet", "mechanism", "evaluate", pred)
    assert "184 of 196" in quiet.stderr  # a warning is not progress chatter


def test_predictions_for_another_gold_file_are_unusable(cli, tmp_path):
    pred = tmp_path / "other.jsonl"
    pred.write_text(json.dumps({"reaction_id": "X-1", "mechanism": []}) + "\n")
    result = cli("mechanism", "evaluate", pred)
    assert result.code == 2 and str(pred) in result.stderr and "another gold file" in result.stderr


# ---------------------------------------------------------------------------------- plots


def test_length_plot_hides_no_line(tmp_path):
    from chemassay.suites.mechanism.plots import score_by_length_figure

    perfect = {str(n): {"S_total": 1.0, "S_partial": 1.0, "n": 3} for n in (2, 3, 5)}
    runs = {"oracle": perfect, "copy of oracle": perfect, "weak": {"2": {"S_total": 0.1, "S_partial": 0.1, "n": 1}}}
    fig = score_by_length_figure(runs)
    try:
        for ax in fig.axes:
            traces = [tuple(zip(line.get_xdata(), line.get_ydata(), strict=True)) for line in ax.get_lines()]
            assert len(traces) == len(runs)
            points = [point for trace in traces for point in trace]
            assert len(points) == len(set(points)), "two lines share a point: one hides the other"
        assert [ax.get_title().split()[0] for ax in fig.axes[:2]] == ["S_total", "S_partial"]
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


# ----------------------------------------------------------------------------- --out checks


def _unwritable(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    return blocker / "out.json"  # its folder is a file: cannot be created


def test_unwritable_out_fails_before_any_work(cli, tmp_path, openai_server):
    pytest.importorskip("httpx", reason="the llm extra is not installed")
    bad = _unwritable(tmp_path)
    spec = f"openai:m,base_url={openai_server.base_url}"
    pred = tmp_path / "p.jsonl"
    pred.write_text(json.dumps({"reaction_id": "NR-001", "mechanism": []}) + "\n")
    cases = [
        ("mechanism", "evaluate", pred, "--out", bad),
        ("mechanism", "evaluate", "--model", spec, "--limit", "2", "--out", bad),
        ("mechanism", "evaluate", "--model", spec, "--limit", "2", "--predictions-out", bad),
        ("mechanism", "predict", "--model", spec, "--limit", "2", "--out", bad),
        ("mechanism", "evaluate", "--model", spec, "--limit", "2", "--predictions-out", tmp_path / "ok.jsonl", "--out", bad),
        ("mechanism", "verify", "gold", "--out", bad),
        ("mechanism", "expand", "template", "--out", bad),
    ]
    for case in cases:
        result = cli(*case)
        assert result.code == 2, (case, result.stderr)
        assert "cannot write" in result.stderr and str(bad) in result.stderr and "Traceback" not in result.stderr
    assert openai_server.chat_requests() == []  # failed before asking the model anything
    assert not (tmp_path / "ok.jsonl").exists()


# ---------------------------------------------------------------------------------- cache


def test_a_damaged_molecule_cache_is_reported_and_rebuilt(tmp_path, capsys, logged):
    import chemassay.mechanism as mechanism

    from chemassay.runtime.cache import cache_root

    first = mechanism.evaluate(model="gold-oracle", bootstrap=0)
    entries = sorted((cache_root() / "mechanism-molecules").glob("*.npz"))
    assert len(entries) == 1
    entries[0].write_bytes(entries[0].read_bytes()[:100])  # truncated: was a BadZipFile traceback
    capsys.readouterr()
    again = mechanism.evaluate(model="gold-oracle", bootstrap=0)
    warning = logged.read().strip().splitlines()
    assert len(warning) == 1 and "not usable" in warning[0] and "rebuilding" in warning[0]
    assert again.metrics == first.metrics
