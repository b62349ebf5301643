"""The suite's figures: accuracy by split with its intervals, shift histograms whose legends do
not hide the data, and the scorecard's accuracy-by-split chart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chemassay.contract.result import Result


def _result(split: str, part: str, hits: list[float], model: str = "template-knn", **setting: str) -> Result:
    from chemassay.contract.result import ModelRef
    from chemassay.report.intervals import attach_intervals

    result = Result(suite="reaction-ood", task="evaluate", metrics={"top1_accuracy": float(np.mean(hits))},
                    n=len(hits), item_ids=[str(i) for i in range(len(hits))], item_scores={"top1_accuracy": hits},
                    model=ModelRef(spec=f"python:{model}", name=model, kind="python"),
                    setting={"split": split, "part": part, **setting})
    return attach_intervals(result, resamples=200, seed=0)


@pytest.fixture
def figures(monkeypatch):
    """The matplotlib figures the plot functions draw (instead of writing them)."""
    from chemassay.suites.reaction_ood import plots

    drawn = []

    def keep(fig, out):
        drawn.append(fig)
        return Path(out)

    monkeypatch.setattr(plots, "_save", keep)
    return drawn


def test_split_bars_carry_the_results_intervals(figures, tmp_path):
    from chemassay.suites.reaction_ood.plots import plot_split_bars

    results = {"random": _result("random", "test", [1.0] * 7 + [0.0] * 3),
               "document OOD": _result("document", "test_ood", [1.0] * 4 + [0.0] * 6)}
    plot_split_bars(results, tmp_path / "bars.png", metrics=("top1_accuracy",))
    from matplotlib.container import BarContainer

    [ax] = figures[0].axes
    [bars] = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert bars.errorbar is not None  # whiskers drawn
    segments = bars.errorbar.lines[2][0].get_segments()
    low, high = results["random"].intervals["top1_accuracy"].low, results["random"].intervals["top1_accuracy"].high
    assert segments[0][:, 1] == pytest.approx([100 * low, 100 * high])
    assert "95 %" in ax.get_xlabel()
    plot_split_bars({k: r.metrics for k, r in results.items()}, tmp_path / "plain.png")
    [ax] = figures[1].axes
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert bars and all(c.errorbar is None for c in bars) and "no intervals" in ax.get_xlabel()


def test_shift_histogram_legends_sit_below_the_data(figures, tmp_path):
    from chemassay.suites.reaction_ood.plots import plot_shift_histograms

    rng = np.random.default_rng(0)
    distances = {name: {"reactant": rng.uniform(0, 0.6, 300), "difference": rng.uniform(0, 0.9, 300)}
                 for name in ("document test", "document test_ood", "suzuki test_ood")}
    plot_shift_histograms(distances, tmp_path / "shift.png")
    fig = figures[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        legend = ax.get_legend()
        assert len(legend.get_texts()) == 3
        assert legend.get_window_extent(renderer).y1 < ax.get_window_extent(renderer).y0


def test_scorecard_chart_of_accuracy_by_split_has_whiskers():
    from chemassay.suites.reaction_ood.report import accuracy_by_split, reaction_ood_charts

    results = [_result("random", "test", [1.0] * 6 + [0.0] * 4),
               _result("document", "test_ood", [1.0] * 5 + [0.0] * 5),
               _result("time", "test_ood", [1.0] * 3 + [0.0] * 7, cutoff="2004"),
               _result("reaction-type", "test_ood", [0.0] * 10, held_out="all-suzuki"),
               _result("document", "test_ood", [1.0] * 9 + [0.0], model="mine")]
    figure = accuracy_by_split(results)
    for label in ("random", "document OOD", "time &gt;2004", "all-suzuki OOD"):
        assert label in figure.data
    assert figure.data.count('stroke="#222"') == 5  # one whisker per bar with an interval
    assert "whiskers: the results' 95 % intervals (Wilson" in figure.caption
    assert [f.title for f in reaction_ood_charts(results)] == ["Accuracy by split"]
