"""``chemassay demo --suite mechanism``: both baselines scored on oMe-Gold, with plots."""

from __future__ import annotations

import importlib.util

import pytest

from chemassay.report.result import read_result

needs_drfp = pytest.mark.skipif(importlib.util.find_spec("drfp") is None,
                                reason="the drfp extra is not installed (pip install 'chemassay[drfp]')")


@needs_drfp
def test_demo_scores_the_baselines(cli, tmp_path):
    result = cli("demo", "--suite", "mechanism", "--out", tmp_path)
    assert result.code == 0, result.stderr
    folder = tmp_path / "mechanism"
    oracle = read_result(folder / "baseline-gold-oracle.json")
    assert oracle.n == 196
    assert [oracle.metrics[k] for k in ("S_total", "S_partial", "V", "L")] == [1.0, 1.0, 1.0, 1.0]
    neighbour = read_result(folder / "baseline-nearest-neighbour.json")
    # Pinned (DRFP 2048 bits, oMe-Template pool, own family excluded); also in docs/mechanism.md.
    assert neighbour.metrics["S_total"] == pytest.approx(0.0629, abs=5e-4)
    assert neighbour.metrics["S_partial"] == pytest.approx(0.0742, abs=5e-4)
    assert neighbour.metrics["L"] == pytest.approx(0.1928, abs=5e-4)
    assert neighbour.metrics["V"] == 1.0
    assert (folder / "score_by_length.png").stat().st_size > 1000
    assert (folder / "accuracy_by_type.png").stat().st_size > 1000
    summary = (tmp_path / "summary.md").read_text()
    assert "baseline-nearest-neighbour" in summary and "mechanism/baseline-gold-oracle.json" in summary
