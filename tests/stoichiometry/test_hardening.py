"""Bad inputs and faults get the contract (issue 18): one line naming the file and the fix,
exit code 2, no traceback, checked before any work; and the defects of issue 11 section 7."""

from __future__ import annotations

import gzip
import json

import pytest

from chemassay.contract.errors import UserInputError


def one_line_error(outcome, *fragments: str) -> None:
    """Exit 2 with one line on stderr holding every fragment, and no traceback."""
    assert outcome.code == 2, (outcome.code, outcome.stderr)
    lines = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, outcome.stderr
    assert "Traceback" not in outcome.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture
def bags(tmp_path):
    (tmp_path / "tgt.txt").write_text("{1}C.{2}O\n{2}CCO\n")
    (tmp_path / "pred.txt").write_text("{1}C.{2}O\n{1}CCO\n")
    return tmp_path


# --- inputs with nothing to score exit 2 (they exited 0 with n=0 and null metrics) -------------


def test_score_of_a_jsonl_file_exits_2_naming_it(cli, tmp_path):
    jsonl = tmp_path / "preds.jsonl"
    jsonl.write_text('{"source": "{1}C", "prediction": "{1}C"}\n{"source": "{1}O", "prediction": "{1}O"}\n')
    one_line_error(cli("stoichiometry", "evaluate", jsonl, jsonl), str(jsonl), "JSON lines or a CSV table")


def test_score_of_a_csv_file_exits_2_naming_it(cli, tmp_path, bags):
    table = tmp_path / "targets.csv"
    table.write_text("smiles,name\nCCO,ethanol\nCC,ethane\n")
    predictions = tmp_path / "three.txt"
    predictions.write_text("{1}CCO\n{1}CC\n{1}O\n")
    one_line_error(cli("stoichiometry", "evaluate", predictions, table), str(table), "one true bag per line",
                   "not JSON lines or a CSV table")
    # a CSV of predictions against good targets: named as what it is, not scored as invalid bags
    table.write_text("{1}C.{2}O,first\n{2}CCO,second\n")
    one_line_error(cli("stoichiometry", "evaluate", table, bags / "tgt.txt"), str(table), "CSV", "one predicted bag")


def test_score_of_two_empty_files_exits_2(cli, tmp_path):
    empty_predictions, empty_targets = tmp_path / "p.txt", tmp_path / "t.txt"
    empty_predictions.write_text("")
    empty_targets.write_text("")
    one_line_error(cli("stoichiometry", "evaluate", empty_predictions, empty_targets), str(empty_targets),
                   "nothing to score")


def test_sources_none_of_which_is_a_bag_are_refused(bags):
    from chemassay.stoichiometry import evaluate

    with pytest.raises(UserInputError, match="sources.*none of its lines is a readable bag"):
        evaluate(bags / "pred.txt", bags / "tgt.txt", ['{"a": 1}', '{"b": 2}'])


# --- unreadable inputs: one line naming the file ---------------------------------------------------


@pytest.mark.parametrize("content, fragment", [
    (b"\x00\x01\x02binary\x00", "binary"),
    ("{1}C\u00e9\n".encode("latin-1"), "not UTF-8"),
])
def test_unreadable_files_are_one_line_errors(cli, tmp_path, bags, content, fragment):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    one_line_error(cli("stoichiometry", "evaluate", bad, bags / "tgt.txt"), str(bad), fragment)
    one_line_error(cli("stoichiometry", "evaluate", bags / "pred.txt", bad), str(bad), fragment)
    # balance read reaction files with open(): a UnicodeDecodeError traceback
    one_line_error(cli("stoichiometry", "balance", bad), str(bad), fragment)


def test_truncated_gzip_is_named(cli, tmp_path, bags):
    whole = gzip.compress(b"{1}O=C=O.{4}[H][H]>>{1}C.{2}O\n" * 200)
    truncated = tmp_path / "reactions.txt.gz"
    truncated.write_bytes(whole[: len(whole) // 2])
    # balance printed only "aborted"
    one_line_error(cli("stoichiometry", "balance", truncated), str(truncated), "truncated")
    targets = tmp_path / "tgt.txt.gz"
    targets.write_bytes(gzip.compress(b"{1}C\n" * 2000)[:40])
    one_line_error(cli("stoichiometry", "evaluate", bags / "pred.txt", targets), str(targets), "truncated")


def test_balance_of_a_file_without_reactions_exits_2(cli, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# only a comment\n\n")
    one_line_error(cli("stoichiometry", "balance", empty), str(empty), "no reaction lines")
    jsonl = tmp_path / "reactions.jsonl"
    jsonl.write_text('{"rxn": "CC>>CC"}\n{"rxn": "O>>O"}\n')
    one_line_error(cli("stoichiometry", "balance", jsonl), str(jsonl), "none of its 2 lines is a reaction")


def test_a_5000_digit_coefficient_is_an_invalid_bag_not_a_crash(cli, tmp_path, bags):
    huge = "{" + "9" * 5000 + "}C"
    predictions = tmp_path / "huge.txt"
    predictions.write_text(f"{huge}\n{{2}}CCO\n")
    out = tmp_path / "r.json"
    result = cli("stoichiometry", "evaluate", predictions, bags / "tgt.txt", "--out", out)
    assert result.code == 0, result.stderr
    rows = json.loads(out.read_text())["details"]["rows"]
    assert rows[0]["valid"] is False and "5,000 digits" in rows[0]["reason"]
    # as a target it is skipped with that reason; as a reaction, an invalid line
    reactions = tmp_path / "reactions.txt"
    reactions.write_text(f"{huge}>>{{1}}C\n{{1}}O=C=O.{{4}}[H][H]>>{{1}}C.{{2}}O\n")
    balanced = tmp_path / "b.json"
    assert cli("stoichiometry", "balance", reactions, "--out", balanced).code == 0
    assert "digits" in json.loads(balanced.read_text())["skipped"][0]["reason"]


def test_a_megabyte_smiles_is_skipped_at_once(cli, tmp_path):
    import time

    predictions, targets = tmp_path / "p.txt", tmp_path / "t.txt"
    predictions.write_text("{1}CCO\n" + "{1}" + "C" * 1_000_000 + "\n")
    targets.write_text("{1}" + "C" * 1_000_000 + "\n{1}CCO\n")
    out = tmp_path / "r.json"
    started = time.perf_counter()
    result = cli("stoichiometry", "evaluate", predictions, targets, "--out", out)
    assert result.code == 0 and time.perf_counter() - started < 20
    scored = json.loads(out.read_text())
    assert scored["n"] == 1 and "too long" in scored["skipped"][0]["reason"]
    assert scored["details"]["rows"][0]["valid"] is False and "too long" in scored["details"]["rows"][0]["reason"]


# --- an unwritable --out fails before any work ------------------------------------------------


def test_unwritable_out_fails_before_any_work(cli, tmp_path, bags, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    unwritable = blocker / "result.json"

    def no_work(*args, **kwargs):
        raise AssertionError("work started before --out was checked")

    import chemassay.suites.stoichiometry.prepare as prepare
    import chemassay.suites.stoichiometry.scoring as scoring

    monkeypatch.setattr(scoring, "score_lines", no_work)
    monkeypatch.setattr(prepare, "process_source", no_work)
    one_line_error(cli("stoichiometry", "evaluate", bags / "pred.txt", bags / "tgt.txt", "--out", unwritable),
                   str(unwritable))
    one_line_error(cli("stoichiometry", "balance", "uspto-15k", "--out", unwritable), str(unwritable))
    one_line_error(cli("stoichiometry", "balance", "uspto-15k", "--details", unwritable), str(unwritable))
    one_line_error(cli("stoichiometry", "build", "uspto-15k", "--out", blocker / "dataset"), str(blocker))
    one_line_error(cli("stoichiometry", "predict", "--model", "algebraic:oracle=" + str(bags / "tgt.txt"),
                       "--src", bags / "pred.txt", "--out", unwritable), str(unwritable))
    assert not unwritable.exists()


# --- issue 11 section 7: one balance result, one key ------------------------------------------------


def test_library_and_cli_balance_write_the_same_keys(cli, tmp_path):
    from chemassay.stoichiometry import balance

    library = json.loads(balance("uspto-15k", limit=40).to_json())
    assert "total" not in library["metrics"] and library["metrics"]["reactions"] == 120
    out = tmp_path / "cli-balance.json"
    assert cli("stoichiometry", "balance", "uspto-15k", "--limit", "40", "--out", out).code == 0
    cli_balance = json.loads(out.read_text())
    assert cli_balance["metrics"] == library["metrics"]
    assert cli_balance["details"]["per_split"] == library["details"]["per_split"]


# --- the baselines plot ------------------------------------------------------------------------------


def _scores():
    # the demo's figures: EM of a memorising baseline on unseen reactions is about 0.002
    scores = {}
    for model, em_cross in (("algebraic", 0.73), ("copy-coefficient", 0.0052)):
        for split in ("test_in", "test_cross", "test_out"):
            em = em_cross if split == "test_cross" else 0.0016
            scores[(model, split)] = {"EM": em, "JAC": 0.65, "F1": 0.78, "mol_F1": 0.97}
    return scores


def test_baselines_legend_hides_no_bar():
    from chemassay.suites.stoichiometry.plots import baselines_figure

    figure = baselines_figure(_scores(), "test")
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    legends = [legend for axis in figure.axes for legend in ([axis.get_legend()] if axis.get_legend() else [])]
    legends += list(figure.legends)
    assert legends
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for axis in figure.axes:
            for bar in axis.patches:
                assert not box.overlaps(bar.get_window_extent(renderer)), "the legend covers a bar"


def test_every_bar_carries_its_value_even_near_zero():
    import matplotlib.pyplot as plt

    from chemassay.suites.stoichiometry.plots import baselines_figure

    figure = baselines_figure(_scores(), "test")
    labels = [text.get_text() for axis in figure.axes for text in axis.texts]
    bars = sum(len(axis.patches) for axis in figure.axes)
    assert len(labels) == bars == 3 * 2 * 4
    assert labels.count("0.0016") == 4 and "0.0052" in labels and "0.73" in labels
    plt.close(figure)


def test_baseline_bars_carry_their_intervals_and_never_mix_directions():
    import matplotlib.pyplot as plt

    from chemassay.suites.stoichiometry.plots import baselines_figure

    scores = _scores()
    intervals = {key: {"EM": (0.0, 0.2), "JAC": (0.6, 0.7)} for key in scores}
    figure = baselines_figure(scores, "test", intervals=intervals)
    whiskers = [c.errorbar for axis in figure.axes for c in axis.containers if getattr(c, "errorbar", None)]
    assert len(whiskers) == 3 * 2  # one error-bar set per model and split
    segments = whiskers[0].lines[2][0].get_segments()
    assert [round(float(s[0][1]), 3) for s in segments[:2]] == [0.0, 0.6]  # EM and JAC from their low ends
    plt.close(figure)
    with pytest.raises(ValueError, match="EXC"):
        baselines_figure(scores, "test", keys=("EM", "EXC"))
