"""``chemassay assay`` for reaction-ood: the paper's splits of Schneider 50k, prepared by the
tasks themselves (quick subset here), the per-split baseline, a user's model, resume."""

from __future__ import annotations

import pytest

from chemassay.contract.result import read_result

KEYS = ["random-test", "document-test", "document-test_ood", "time-test", "time-test_ood", "suzuki-test",
        "suzuki-test_ood", "chloro_suzuki-test_ood"]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One empty chemassay home for the module: the first assay prepares (and caches) the data."""
    with pytest.MonkeyPatch.context() as patch:
        path = tmp_path_factory.mktemp("rood-assay-home")
        patch.setenv("CHEMASSAY_HOME", str(path))
        yield path


@pytest.fixture(scope="module")
def quick_baseline(home, tmp_path_factory):
    from chemassay.assaying import assay

    out = tmp_path_factory.mktemp("rood-assay")
    report = assay(None, suites=["reaction-ood"], quick=True, out=out, n_jobs=1, scorecard=False)
    return report, out


def test_the_plan_names_the_papers_settings_and_counts_requests():
    from chemassay.suites import get_suite

    plan = get_suite("reaction-ood").load("assay")
    baseline = plan.tasks({"reaction-predictor"}, quick=False, spec=plan.baseline)
    assert [t.key for t in baseline] == KEYS
    settings = {t.key: dict(t.setting) for t in baseline}
    assert settings["document-test_ood"] == {"split": "document", "part": "test_ood"}
    assert settings["random-test"] == {"split": "random", "part": "test"}
    assert settings["time-test_ood"] == {"split": "time", "part": "test_ood", "cutoff": "2004"}
    assert settings["chloro_suzuki-test_ood"] == {"split": "reaction-type", "part": "test_ood",
                                                  "held_out": "chloro-suzuki", "ood_train": "false"}
    assert all(t.dataset == "schneider-50k" and t.protocol == "reaction-predictor" for t in baseline)
    assert [t.items for t in baseline] == [1000] * 7 + [774]
    # a user's model answers one request per test reaction; its training is not ours to claim
    user = plan.tasks({"reaction-predictor"}, quick=True, spec="openai:m,base_url=http://127.0.0.1:1/v1")
    assert all(t.request_count == t.items == 30 for t in user)
    assert "ood_train" not in dict(user[-1].setting)
    assert plan.tasks({"generator"}, quick=True, spec=plan.baseline) == []


def test_quick_assay_with_the_baseline_gives_every_setting_on_schneider(quick_baseline, home):
    report, out = quick_baseline
    [suite] = report.suites
    assert [t.task for t in suite.tasks] == KEYS and {t.status for t in suite.tasks} == {"done"}, suite.tasks
    planned = {t.key: dict(t.setting) for t in report_tasks()}
    for key in KEYS:
        result = read_result(out / "reaction-ood" / f"{key}.json")
        assert result.quick and result.dataset.name == "schneider-50k"
        assert result.setting == planned[key]
        assert result.model.spec == "template-knn:per-split" and result.model.kind == "template-knn"
        scored_or_listed = result.n + sum("scored as wrong" not in item.reason for item in result.skipped)
        assert scored_or_listed == 30 and result.config["test_sample"] == 30
        assert result.intervals["top1_accuracy"].low <= result.metrics["top1_accuracy"]
        assert (out / "reaction-ood" / "data" / f"{key}.parquet").is_file()
    # the template baseline cannot apply a reaction centre it never saw (the docs' table)
    held_out = read_result(out / "reaction-ood" / "suzuki-test_ood.json")
    assert held_out.metrics["top1_accuracy"] == 0.0
    assert read_result(out / "reaction-ood" / "document-test.json").metrics["top1_accuracy"] > 0.3
    assert suite.verdict.startswith("top-1 random ") and "new patents" in suite.verdict
    # 0 right of the quick 30: a Wilson interval, not the bootstrap's zero-wide [0.0, 0.0]
    assert "held-out Suzuki 0.0 % [0.0, 11.4]" in suite.verdict
    # data, templates and one model per split are cached for the next run
    cache = home / "cache"
    assert len(list((cache / "reaction-ood" / "assay-models").glob("*.npz"))) == 5
    assert len(list((cache / "reaction-ood" / "assay-data").glob("*.parquet"))) == 1


def report_tasks():
    from chemassay.suites import get_suite

    plan = get_suite("reaction-ood").load("assay")
    return plan.tasks({"reaction-predictor"}, quick=True, spec=plan.baseline)


def test_a_second_run_resumes_every_finished_task(quick_baseline):
    from chemassay.assaying import assay

    _report, out = quick_baseline
    again = assay(None, suites=["reaction-ood"], quick=True, out=out, n_jobs=1, scorecard=False)
    [suite] = again.suites
    assert {t.status for t in suite.tasks} == {"resumed"}
    assert suite.verdict == _report.suites[0].verdict


def test_a_users_model_is_scored_on_the_same_test_reactions(quick_baseline, tmp_path, monkeypatch):
    import pandas as pd

    from chemassay.assaying import assay

    _report, baseline_out = quick_baseline
    module = tmp_path / "recorded_products.py"
    # a model that looks the products up in the quick data: right on every reaction
    lookup = {}
    for key in KEYS:
        frame = pd.read_parquet(baseline_out / "reaction-ood" / "data" / f"{key}.parquet")
        lookup.update(zip(frame["reactants"], frame["products"], strict=True))
    module.write_text(f"TABLE = {lookup!r}\n"
                      "class Oracle:\n"
                      "    def predict(self, reactants, k=5):\n"
                      "        return [[TABLE.get(r, 'C')] for r in reactants]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "assay"
    report = assay("python:recorded_products:Oracle", suites=["reaction-ood"], quick=True, out=out, scorecard=False)
    [suite] = report.suites
    assert {t.status for t in suite.tasks} == {"done"}
    for key in KEYS:
        mine = read_result(out / "reaction-ood" / f"{key}.json")
        theirs = read_result(baseline_out / "reaction-ood" / f"{key}.json")
        assert mine.inputs[0].sha256 == theirs.inputs[0].sha256  # the very same test reactions
        assert mine.n == theirs.n and mine.model.kind == "python"
        assert mine.metrics["top1_accuracy"] >= 0.9  # (a reactant set may recur with other products)
        assert "ood_train" not in mine.setting
        assert {k: v for k, v in mine.setting.items()} == {k: v for k, v in theirs.setting.items() if k != "ood_train"}


def test_a_chat_model_gets_one_request_per_test_reaction_and_none_again(quick_baseline, openai_server, tmp_path):
    import pandas as pd

    from chemassay.assaying import assay

    spec = f"openai:chemist-7b,base_url={openai_server.base_url}"
    out = tmp_path / "assay"
    report = assay(spec, suites=["reaction-ood"], quick=True, out=out, scorecard=False)
    [suite] = report.suites
    assert {t.status for t in suite.tasks} == {"done"}
    # one request per test reaction (the plan's 240 at most): a reaction that two splits both
    # test is answered once, then from the response cache
    asked = set()
    for key in KEYS:
        asked.update(pd.read_parquet(out / "reaction-ood" / "data" / f"{key}.parquet")["reactants"])
    assert len(openai_server.requests) == len(asked) <= 8 * 30
    result = read_result(out / "reaction-ood" / "document-test_ood.json")
    assert result.model.kind == "openai" and result.dataset.name == "schneider-50k"
    assert result.setting == {"split": "document", "part": "test_ood"} and result.skipped == []
    # killed after a task: the finished tasks are kept and the response cache answers the rest
    (out / "reaction-ood" / "time-test.json").unlink()
    again = assay(spec, suites=["reaction-ood"], quick=True, out=out, scorecard=False)
    statuses = {t.task: t.status for t in again.suites[0].tasks}
    assert statuses.pop("time-test") == "done" and set(statuses.values()) == {"resumed"}
    assert len(openai_server.requests) == len(asked)
