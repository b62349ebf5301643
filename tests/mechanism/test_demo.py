"""``chemassay demo --suite mechanism``: the nearest-neighbour baseline through the assay on
oMe-Gold with the paper's one-shot setting, its verdict and the scorecard."""

from __future__ import annotations

import importlib.util

import pytest

from chemassay.contract.result import read_result

needs_drfp = pytest.mark.skipif(importlib.util.find_spec("drfp") is None,
                                reason="the drfp extra is not installed (pip install 'chemassay[drfp]')")


@needs_drfp
def test_demo_scores_the_baseline(cli, tmp_path):
    result = cli("demo", "--suite", "mechanism", "--out", tmp_path)
    assert result.code == 0, result.stderr
    neighbour = read_result(tmp_path / "mechanism" / "ome-gold-one-shot.json")
    assert neighbour.n == 196 and neighbour.setting == {"dataset": "gold", "prompt": "one-shot"}
    # Pinned (DRFP 2048 bits, oMe-Template pool, own family excluded); also in docs/mechanism.md.
    assert neighbour.metrics["S_total"] == pytest.approx(0.0629, abs=5e-4)
    assert neighbour.metrics["S_partial"] == pytest.approx(0.0742, abs=5e-4)
    assert neighbour.metrics["L"] == pytest.approx(0.1928, abs=5e-4)
    assert neighbour.metrics["V"] == 1.0
    summary = (tmp_path / "summary.md").read_text()
    assert "[index.html](index.html)" in summary and "Baseline `nearest-neighbour`: S_total" in summary
    assert "mechanism/ome-gold-one-shot.json" in summary and "scorecard: " in result.stdout
    html = (tmp_path / "index.html").read_text()
    assert 'id="suite-mechanism"' in html and 'id="verdicts"' in html
