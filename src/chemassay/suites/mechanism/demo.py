"""``chemassay demo --suite mechanism``: the two offline baselines scored on oMe-Gold."""

from __future__ import annotations

import json
import time
from pathlib import Path

from chemassay.report.result import Result
from chemassay.runtime.files import atomic_write_text

DEMO_NOTES = """
oMeS on the 196 expert reactions of oMe-Gold (858 steps) for the two built-in baselines.
`gold-oracle` repeats the gold mechanism and must score 1.0 everywhere (a check of the
scorer and the data). `nearest-neighbour` borrows the step labels of the most
DRFP-similar oMe-Template reaction of another family and puts the query's product as every
intermediate: the floor any model that reasons about intermediates should clear. To score
a language model: `chemassay mechanism run gold --model openai:MODEL --base-url URL --out
pred.jsonl --score result.json`.
"""


def run_demo(out_dir: Path) -> list[Result]:
    """Score the gold-oracle and nearest-neighbour baselines on oMe-Gold into ``out_dir``."""
    from chemassay.suites.mechanism.baselines import gold_oracle, nearest_neighbour
    from chemassay.suites.mechanism.evaluate import ScoreConfig, report_result, score_files
    from chemassay.suites.mechanism.plots import plot_accuracy_by_type, plot_score_by_length
    from chemassay.suites.mechanism.records import bundled_path, load_reactions
    from chemassay.suites.mechanism.retrieval import ReactionIndex

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    gold_path = bundled_path("gold")
    reactions = load_reactions(gold_path).reactions
    started = time.perf_counter()
    pool = load_reactions(bundled_path("template")).reactions
    predictions = {
        "gold-oracle": gold_oracle(reactions),
        "nearest-neighbour": nearest_neighbour(reactions, ReactionIndex(pool)),
    }
    build_s = time.perf_counter() - started
    results: list[Result] = []
    summaries = {}
    for method, rows in predictions.items():
        pred_path = out_dir / f"{method}.predictions.jsonl"
        atomic_write_text(pred_path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))
        started = time.perf_counter()
        report = score_files(gold_path, pred_path, ScoreConfig())
        result = report_result(
            report, gold_path=gold_path, pred_path=pred_path, task=f"baseline-{method}",
            elapsed_s=time.perf_counter() - started,
            extra_config={"method": method, "pool": "template" if method == "nearest-neighbour" else None,
                          "predictions_built_s": round(build_s, 3)},
        )
        result.write(out_dir / f"{result.task}.json")
        results.append(result)
        summaries[method] = report.summary
    plot_score_by_length({m: s["by_length"] for m, s in summaries.items()}, out_dir / "score_by_length.png")
    plot_accuracy_by_type({m: s["by_type"] for m, s in summaries.items()}, out_dir / "accuracy_by_type.png")
    return results
