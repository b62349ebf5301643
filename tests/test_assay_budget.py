"""A budget before the run (``chemassay assay --limit / --precision / --dry-run --price``):

* ``--limit N`` gives two different models the same seeded items in every suite where that is
  cheap (the toy sixth suite, stoichiometry's twelve variant splits, oMe-Gold stratified by
  difficulty), each result recording its subset, and the scorecard marks such results;
* ``--precision 0.05`` runs 385 items per task (all of a smaller task), and every headline
  interval comes out at ±5 points or less;
* ``--dry-run --price`` prints requests, prompt tokens and the cost range per task, counted from
  the very prompts the server then receives; after the run the manifest holds the tokens the
  server reported and their cost.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from chemassay.assaying import assay
from chemassay.contract.result import read_result
from chemassay.report.subsets import items_for_precision, subset_sha256, wilson_half_width

ROOT = Path(__file__).resolve().parents[1]


def _results(folder: Path, suite: str) -> dict[str, object]:
    return {path.stem: read_result(path) for path in sorted((folder / suite).glob("*.json"))}


def test_limit_gives_two_models_the_same_items_and_the_scorecard_marks_them(toy_suite, cli, tmp_path):
    from support.toy_suite import CountingModel

    CountingModel.calls = []
    runs = {}
    for name in ("CountingModel", "CarbonOnlyModel"):
        out = tmp_path / name
        outcome = cli("assay", "--model", f"python:support.toy_suite:{name}", "--suites", "formula", "--limit", "5",
                      "--seed", "3", "--out", out)
        assert outcome.code == 0, outcome.stderr
        runs[name] = _results(out, "formula")["exact"]
    counting, carbon = runs["CountingModel"], runs["CarbonOnlyModel"]
    assert counting.item_ids == carbon.item_ids and len(counting.item_ids) == 5 and CountingModel.calls == [5]
    assert counting.metrics["exact"] == 1.0 and carbon.metrics["exact"] < 1.0
    subset = counting.subset
    assert (subset.seed, subset.size, subset.of, subset.limit) == (3, 5, 8, 5) and subset.partial
    assert subset.sha256 == carbon.subset.sha256 == subset_sha256(counting.item_ids)
    # the scorecard marks the table a seeded subset, with the papers' row beside it and no star
    page = (tmp_path / "CountingModel" / "index.md").read_text()
    assert "seeded subset: 5 of 8 items (seed 3)" in page and "never ranked" in page
    assert "*(published)* Counting model" in page
    assert not any("★" in line for line in page.splitlines() if line.startswith("| "))
    assert "seeded subset" in (tmp_path / "CountingModel" / "index.html").read_text()
    manifest = json.loads((tmp_path / "CountingModel" / "assay.json").read_text())
    assert manifest["limit"] == 5 and manifest["suites"][0]["tasks"][0]["subset"]["sha256"] == subset.sha256
    # the same command again resumes; another seed is another subset; a limit above the size runs all
    again = cli("assay", "--model", "python:support.toy_suite:CountingModel", "--suites", "formula", "--limit", "5",
                "--seed", "3", "--out", tmp_path / "CountingModel")
    assert again.code == 0 and CountingModel.calls == [5]
    other = assay("python:support.toy_suite:CountingModel", suites=["formula"], out=tmp_path / "seed4", limit=5,
                  seed=4, scorecard=False).results[0]
    assert other.subset.sha256 != subset.sha256
    whole = assay("python:support.toy_suite:CountingModel", suites=["formula"], out=tmp_path / "all", limit=100,
                  scorecard=False).results[0]
    assert whole.n == 8 and not whole.subset.partial


def test_limit_on_mechanism_is_stratified_by_difficulty_and_the_same_for_two_models(tmp_path):
    from chemassay.suites.mechanism.api import load_reactions
    from support.budget_models import NoSteps, ProductOnly

    NoSteps.asked, ProductOnly.asked = [], []
    first = assay("python:support.budget_models:NoSteps", suites=["mechanism"], out=tmp_path / "a", limit=100,
                  scorecard=False).results[0]
    second = assay("python:support.budget_models:ProductOnly", suites=["mechanism"], out=tmp_path / "b", limit=100,
                   scorecard=False).results[0]
    assert first.item_ids == second.item_ids and len(first.item_ids) == 100
    assert sorted(NoSteps.asked) == sorted(ProductOnly.asked) == sorted(first.item_ids)
    assert first.subset.sha256 == second.subset.sha256 and first.subset.of == 196
    levels: dict[str, int] = {}
    for reaction in load_reactions("gold"):
        levels[reaction.level] = levels.get(reaction.level, 0) + 1
    assert sum(first.subset.strata.values()) == 100 and set(first.subset.strata) == set(levels)
    for level, count in first.subset.strata.items():  # each difficulty keeps its share of oMe-Gold
        assert abs(count - 100 * levels[level] / 196) <= 1


def test_limit_on_stoichiometry_gives_two_models_the_same_lines(tmp_path):
    from support.budget_models import CopyReactants, WaterEverywhere

    CopyReactants.asked, WaterEverywhere.asked = [], []
    out = tmp_path / "assay"  # one folder: the second model reuses the unpacked data, its results overwrite
    copy = assay("python:support.budget_models:CopyReactants", suites=["stoichiometry"], out=out, limit=100,
                 scorecard=False)
    water = assay("python:support.budget_models:WaterEverywhere", suites=["stoichiometry"], out=out, limit=100,
                  scorecard=False)
    assert len(copy.results) == len(water.results) == 12
    for a, b in zip(copy.results, water.results, strict=True):
        assert a.setting == b.setting and a.item_ids == b.item_ids and len(a.item_ids) == 100
        assert a.subset.sha256 == b.subset.sha256 == subset_sha256(a.item_ids) and a.subset.partial
        # the ids are the test file's own line numbers: the lines the models were asked
        folder = out / "stoichiometry" / "data" / a.setting["variant"]
        lines = (folder / f"src-{a.setting['split']}.txt").read_text().splitlines()
        assert [row.line for row in a.details.rows] == [int(i) for i in a.item_ids]
        assert [row.source for row in a.details.rows] == [lines[int(i) - 1].strip() for i in a.item_ids]
    assert CopyReactants.asked == WaterEverywhere.asked and len(CopyReactants.asked) == 1200


def test_precision_bounds_every_headline_interval(tmp_path):
    """``--precision 0.05``: 385 items per task (the whole of a smaller one), and each headline
    metric's interval at ±5 points or less; the built-in baselines of two suites."""
    from chemassay.assaying import plan

    assert items_for_precision(0.05) == 385 and wilson_half_width(385) <= 0.05 < wilson_half_width(380)
    report = assay(None, suites=["stoichiometry", "mechanism"], out=tmp_path, precision=0.05, scorecard=False)
    headline = {(p.suite, p.task.key): p.task.headline for p in plan(None, suites=["stoichiometry", "mechanism"])[1]}
    outcomes = {(t.suite, t.task): t for s in report.suites for t in s.tasks}
    assert len(outcomes) == 13 and all(t.status == "done" for t in outcomes.values())
    for (suite, task), outcome in outcomes.items():
        result = read_result(outcome.path)
        assert result.subset.precision == 0.05 and result.subset.limit == 385
        if result.subset.of >= 385:
            assert result.subset.size == 385
            for key in headline[(suite, task)]:
                value, interval = result.metrics[key], result.intervals[key]
                assert value - interval.low <= 0.05 and interval.high - value <= 0.05, (task, key, interval)
        else:  # oMe-Gold's 196 reactions: all of them
            assert result.subset.size == result.subset.of == result.n == 196


def _plan_lines(text: str) -> dict[str, str]:
    return {line.split()[2]: line for line in text.splitlines() if line.startswith("run ")}


def test_dry_run_prints_requests_tokens_and_cost_per_task(toy_suite, cli):
    from chemassay.cli.assay import _usd
    from chemassay.models.text_model import SYSTEM_PROMPT
    from support.toy_suite import FORMULA_PREDICTOR, load_molecules

    outcome = cli("assay", "--dry-run", "--model", "openai:tiny,base_url=http://127.0.0.1:9/v1", "--suites",
                  "formula", "--price", "in=0.15,out=0.6")
    assert outcome.code == 0, outcome.stderr
    prompts = [SYSTEM_PROMPT + r.prompt for r in FORMULA_PREDICTOR.prompt([s for _, s in load_molecules()], {}, {})]
    tokens = sum(math.ceil(len(p) / 4) for p in prompts)
    answers = 8 * FORMULA_PREDICTOR.max_tokens
    low, high = tokens * 0.15 / 1e6, (tokens * 0.15 + answers * 0.6) / 1e6
    line = _plan_lines(outcome.stdout)["exact"]
    assert "8 items" in line and "8 requests" in line and f"{tokens:,} prompt tokens" in line
    assert f"answers ≤ {answers} tokens" in line and f"US$ {_usd(low)} to {_usd(high)}" in line
    total = outcome.stdout.strip().splitlines()[-1]
    assert total.startswith("1 tasks, 8 items, 8 requests to the endpoint")
    assert "estimate (4 chars/token)" in total and "in=0.15,out=0.6 US$/M tokens" in total
    # with a limit: the subset's items, and the widest interval a proportion can have on them
    limited = _plan_lines(cli("assay", "--dry-run", "--model", "openai:tiny,base_url=http://127.0.0.1:9/v1",
                              "--suites", "formula", "--limit", "5").stdout)["exact"]
    assert "5 items  (of 8)" in limited and "5 requests" in limited and f"±{100 * wilson_half_width(5):.1f} pts" in limited


def test_dry_run_counts_the_prompts_the_server_receives_and_the_manifest_the_tokens_it_reported(
        toy_suite, cli, openai_server, isolated_home, tmp_path):
    from chemassay.budget import estimate

    spec = f"openai:tiny,base_url={openai_server.base_url}"
    _outcomes, budgets = estimate(spec, suites=["formula"], limit=6, seed=1)
    outcome = cli("assay", "--model", spec, "--suites", "formula", "--limit", "6", "--seed", "1", "--price",
                  "in=0.15,out=0.6", "--out", tmp_path)
    assert outcome.code == 0, outcome.stderr
    sent = openai_server.chat_requests()
    characters = sum(len(m["content"]) for body in sent for m in body["messages"])
    assert budgets[0].requests == len(sent) == 6 and budgets[0].prompt_tokens >= characters / 4
    assert budgets[0].prompt_tokens == sum(math.ceil(sum(len(m["content"]) for m in body["messages"]) / 4)
                                           for body in sent)
    assert all(body["max_tokens"] == 32 for body in sent)  # the answer budget the bound counts
    manifest = json.loads((tmp_path / "assay.json").read_text())
    result = read_result(tmp_path / "formula" / "exact.json")
    reported = result.requests
    assert reported.prompt_tokens == sum(len(body["messages"][-1]["content"].split()) for body in sent)
    spent = manifest["spent"]
    assert (spent["requests"], spent["prompt_tokens"], spent["completion_tokens"]) == (
        6, reported.prompt_tokens, reported.completion_tokens)
    assert spent["cost_usd"] == pytest.approx((reported.prompt_tokens * 0.15 + reported.completion_tokens * 0.6) / 1e6)
    assert "tokens the server reported" in outcome.stdout and "US$" in outcome.stdout


def test_python_m_chemassay_dry_run_of_a_real_suite(tmp_path):
    """``python -m chemassay assay --dry-run``: oMe-Gold's 40 reactions chosen by ``--limit``,
    their one-shot prompts counted, the cost at the price given."""
    command = [sys.executable, "-m", "chemassay", "assay", "--dry-run", "--model",
               "openai:tiny,base_url=http://127.0.0.1:9/v1", "--suites", "mechanism", "--limit", "40", "--price",
               "in=0.15,out=0.6"]
    env = {**__import__("os").environ, "PYTHONPATH": f"{ROOT / 'src'}"}
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    line = _plan_lines(done.stdout)["ome-gold-one-shot"]
    assert "40 items  (of 196)" in line and "40 requests" in line and "prompt tokens" in line
    assert "answers ≤ 81,920 tokens" in line and "US$" in line  # 40 × the protocol's 2,048
    assert "tasks, 40 items, 40 requests to the endpoint" in done.stdout.splitlines()[-1]


def test_limit_precision_and_price_are_checked_at_the_boundary(cli):
    both = cli("assay", "--dry-run", "--limit", "10", "--precision", "0.05")
    assert both.code == 2 and "give one" in both.stderr and "Traceback" not in both.stderr
    quick = cli("assay", "--dry-run", "--quick", "--limit", "10")
    assert quick.code == 2 and "--quick" in quick.stderr
    wide = cli("assay", "--dry-run", "--precision", "0.7")
    assert wide.code == 2 and "between 0 and 0.5" in wide.stderr
    price = cli("assay", "--dry-run", "--price", "0.15")
    assert price.code == 2 and "in=X,out=Y" in price.stderr


def test_dry_run_counts_an_hf_models_tokens_with_its_own_tokenizer(toy_suite, tmp_path):
    """``hf:`` models: the prompts' tokens counted with the checkpoint's tokenizer (here a
    word-level one, so a token is a word or a punctuation mark); raw prompting sends the item."""
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    from chemassay.budget import estimate
    from support.toy_suite import FORMULA_PREDICTOR, load_molecules

    words = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    words.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    words.train_from_iterator(["Give the molecular formula of the molecule"],
                              tokenizers.trainers.WordLevelTrainer(special_tokens=["[UNK]"]))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=words, unk_token="[UNK]")
    tokenizer.save_pretrained(tmp_path / "ckpt")
    smiles = [s for _, s in load_molecules()]
    prompts = [r.prompt for r in FORMULA_PREDICTOR.prompt(smiles, {}, {})]
    _, (chat,) = estimate(f"hf:{tmp_path / 'ckpt'},prompting=chat,max_new_tokens=20", suites=["formula"])
    assert chat.prompt_tokens == sum(len(tokenizer(p)["input_ids"]) for p in prompts)
    assert chat.counted_by == f"tokenizer of hf:{tmp_path / 'ckpt'}" and chat.answer_tokens == 8 * 20
    _, (raw,) = estimate(f"hf:{tmp_path / 'ckpt'}", suites=["formula"])  # no chat template: raw prompting
    assert raw.prompt_tokens == sum(len(tokenizer(s)["input_ids"]) for s in smiles) < chat.prompt_tokens


def test_precision_bounds_headline_proportions_near_one_half(tmp_path):
    """``--precision 0.05`` promises every task's headline interval at ±5 points or less; a
    proportion is hardest to pin near 0.5, and there its Wilson interval on 385 items keeps the
    promise (a percentile bootstrap there strays past ±5 points): AMORE Acc@1 of an encoder
    that is invariant for about half of the molecules."""
    report = assay("python:support.budget_models:HalfInvariant", suites=["robustness"], out=tmp_path,
                   precision=0.05, scorecard=False)
    results = report.results
    assert len(results) == 2
    near_half = 0
    for result in results:
        assert result.subset.limit == 385 and result.subset.size == 385
        for kind in ("canonical", "explicit_h", "kekulize", "cycle_renumber_amore"):
            key = f"{kind}/o2a_acc@1"
            value, interval = result.metrics[key], result.intervals[key]
            assert value - interval.low <= 0.05 and interval.high - value <= 0.05, (result.task, key, interval)
            assert interval.method == "wilson"
            near_half += abs(value - 0.5) < 0.06
    assert near_half >= 6  # the test is about proportions near 0.5
