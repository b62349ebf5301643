"""The demo summary: one section per suite, kept when another suite's demo runs alone, with
metric arrows, intervals and a glossary read from the metric cards."""

from chemassay.demo import SECTION, assemble_summary, suite_section
from chemassay.report.cards import MetricCard, register_cards
from chemassay.report.result import Interval, Result


def test_running_one_suite_keeps_the_other_sections(tmp_path):
    (tmp_path / "mechanism").mkdir()
    (tmp_path / "mechanism" / SECTION).write_text("## mechanism\n\nold mechanism table\n")
    (tmp_path / "generation").mkdir()
    (tmp_path / "generation" / SECTION).write_text("## generation\n\nnew generation table\n")
    summary = assemble_summary(tmp_path)
    assert "old mechanism table" in summary and "new generation table" in summary
    assert summary.index("## generation") < summary.index("## mechanism")  # the suites' order


def test_section_lists_every_metric_with_its_arrow_interval_and_meaning(tmp_path, monkeypatch):
    monkeypatch.delenv("CHEMASSAY_STRICT_CARDS", raising=False)
    try:
        register_cards([MetricCard("demo_test_metric", "mechanism", "a metric only this test declares", "lower",
                                   paper_name="DTM", paper_table="Table 0")])
    except ValueError:
        pass  # declared by an earlier run of this test in the same session
    suite_dir = tmp_path / "mechanism"
    suite_dir.mkdir()
    metrics = {f"m{i}": float(i) for i in range(12)} | {"demo_test_metric": 0.25}
    result = Result(suite="mechanism", task="evaluate", metrics=metrics, n=3,
                    intervals={"demo_test_metric": Interval(low=0.125, high=0.5)})
    result.write(suite_dir / "run.json")
    text = "\n".join(suite_section("mechanism", suite_dir, tmp_path))
    assert "m11=11" in text  # no longer cut after the first 8 metrics
    assert "demo_test_metric↓=0.25 [0.125, 0.5]" in text
    assert "- `demo_test_metric`: a metric only this test declares ↓ (paper: DTM, Table 0)" in text
