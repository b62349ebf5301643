"""``chemassay demo --suite mechanism``: the two offline baselines scored on oMe-Gold,
through the suite's API (:func:`chemassay.mechanism.evaluate` with ``model=``)."""

from __future__ import annotations

from pathlib import Path

from chemassay.report.result import Result

DEMO_NOTES = """
oMeS on the 196 expert reactions of oMe-Gold (858 steps) for the two built-in baselines.
`gold-oracle` repeats the gold mechanism and must score 1.0 everywhere (a check of the
scorer and the data). `nearest-neighbour` borrows the step labels of the most
DRFP-similar oMe-Template reaction of another family and puts the query's product as every
intermediate: the floor any model that reasons about intermediates should clear. To score
a language model: `chemassay mechanism evaluate --model openai:MODEL,base_url=URL
--predictions-out pred.jsonl --out result.json`.
"""

BASELINE_SPECS = {"gold-oracle": "gold-oracle", "nearest-neighbour": "nearest-neighbour:pool=template"}


def run_demo(out_dir: Path) -> list[Result]:
    """Evaluate the gold-oracle and nearest-neighbour baselines on oMe-Gold into ``out_dir``:
    their predictions (``<name>.predictions.jsonl``), results (``baseline-<name>.json``)
    and the score-by-length and accuracy-by-type plots."""
    from chemassay.suites.mechanism.api import evaluate
    from chemassay.suites.mechanism.plots import plot_accuracy_by_type, plot_score_by_length

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    for name, spec in BASELINE_SPECS.items():
        predictions = out_dir / f"{name}.predictions.jsonl"
        result = evaluate(model=spec, gold="gold", predictions_out=predictions, overwrite=True)
        result.write(out_dir / f"baseline-{name}.json")
        results.append(result)
    by_run = dict(zip(BASELINE_SPECS, results, strict=True))
    plot_score_by_length({name: r.details.by_length for name, r in by_run.items()}, out_dir / "score_by_length.png")
    plot_accuracy_by_type({name: r.details.by_type for name, r in by_run.items()}, out_dir / "accuracy_by_type.png")
    return results
