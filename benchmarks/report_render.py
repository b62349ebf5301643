"""How fast ``chemassay report`` renders many result files (target: 200 files in under 10 s).

Writes N result files (default 200: 40 per suite) shaped like real ones — per-item scores of
1,000 items with stored bootstrap intervals, stoichiometry ``rows`` with bags, reaction-ood
``details.items`` and ``details.breakdowns.year``, robustness ``misses``, mechanism ``reactions`` with steps,
a generation property plot (PNG) — then times reading them and writing the HTML + Markdown
scorecard (leaderboards with the published rows, charts, RDKit galleries).

    python benchmarks/report_render.py
    python benchmarks/report_render.py --n 500 --items 2000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import peak_rss_mb  # noqa: E402

from chemassay.contract.result import DatasetRef, ModelRef, Result  # noqa: E402
from chemassay.report.intervals import attach_intervals  # noqa: E402

BAGS = [("{1}CC(=O)O.{1}OCC", "{1}CC(=O)SCC.{1}O", "{1}CC(=O)OCC.{1}O", "DE"),
        ("{1}CC(=O)Cl.{1}NC", "{1}CC(=O)NC", "{1}CC(=O)NC.{1}Cl", "DEF"),
        ("{2}[H][H].{1}O=O", "{2}O", "{2}O", "BAL")]
REACTIONS = [("CC(=O)Cl.OCc1ccccc1", "CC(=O)OCc1ccccc1", "CC(=O)Oc1ccccc1C"),
             ("Brc1ccccc1.OB(O)c1ccncc1", "c1ccc(-c2ccncc2)cc1", "c1ccc(-c2ccccc2)cc1")]


def _ids(n: int, prefix: str) -> list[str]:
    return [f"{prefix}-{i}" for i in range(n)]


def make_result(suite: str, index: int, items: int, rng: np.random.Generator, png: Path) -> Result:
    model = ModelRef(spec=f"predictions:model-{index}.txt", name=f"model-{index}", kind="predictions", checksum=f"{index:064x}")
    rate = float(rng.uniform(0.2, 0.9))
    hits = (rng.random(items) < rate).astype(float).tolist()
    if suite == "stoichiometry":
        split = ("test_in", "test_cross", "test_out")[index % 3]
        from chemassay.suites.stoichiometry.details import EvaluateDetails as StoichiometryDetails

        scores = {name: 0.0 for name in ("JAC", "F1", "mol_JAC", "mol_F1", "ACC", "ALO")}
        counts = {name: 0 for name in ("TP", "FP", "FN", "mol_TP", "mol_FP", "mol_FN")}
        rows = [{"line": i + 1, "valid": True, "balance": BAGS[i % 3][3], "source": BAGS[i % 3][0],
                 "prediction": BAGS[i % 3][1], "target": BAGS[i % 3][2], "EM": hits[i], **scores, **counts}
                for i in range(items)]
        breakdown = {"encoding": "smiles", "compat": "chemalgebra", "invalid_predictions": 0, "invalid_reasons": {},
                     "balance_checked": items, "balance_classes": {"BAL": items}, "unreadable_sources": 0}
        result = Result(suite=suite, task="evaluate", metrics={"EM": float(np.mean(hits))}, n=items, model=model,
                        item_ids=_ids(items, "line"), item_scores={"EM": hits},
                        dataset=DatasetRef(name="uspto-15k/smiles_t2_x1", sha256="1" * 64),
                        config={"variant": "smiles_t2_x1", "split": split, "encoding": "smiles"},
                        details=StoichiometryDetails(breakdown=breakdown, rows=rows))
    elif suite == "reaction-ood":
        entries = [{"id": f"rxn-{i}", "reactants": REACTIONS[i % 2][0], "target": REACTIONS[i % 2][1],
                    "predictions": [REACTIONS[i % 2][2], REACTIONS[i % 2][1]], "rank": 2} for i in range(items)]
        years = [{"group": 1976 + k, "n": 20, "top1_accuracy": float(rng.uniform(0.3, 0.8))} for k in range(45)]
        result = Result(suite=suite, task="evaluate", metrics={"top1_accuracy": float(np.mean(hits))}, n=items,
                        model=model, item_ids=_ids(items, "rxn"), item_scores={"top1_accuracy": hits},
                        dataset=DatasetRef(name="schneider-50k", sha256="2" * 64),
                        setting={"split": "document", "part": "test_ood"}, config={"split_definition": "schneider_document"},
                        details={"items": entries, "breakdowns": {"year": years}})
    elif suite == "generation":
        from chemassay.suites.generation.details import EvaluateDetails as GenerationDetails

        counts = {"input": 30000, "valid": int(30000 * rate), "invalid": 30000 - int(30000 * rate),
                  "unique_valid": int(30000 * rate)}
        result = Result(suite=suite, task="evaluate", metrics={"valid": rate, "FCD/Test": float(rng.uniform(0.1, 20))},
                        n=30000, model=model, dataset=DatasetRef(name="moses", sha256="3" * 64),
                        details=GenerationDetails(counts=counts, plot=str(png)))
    elif suite == "robustness":
        from chemassay.suites.robustness.details import EvaluateDetails as RobustnessDetails

        keys = [f"{a}/o2a_acc@1" for a in ("canonical", "explicit_h", "kekulize", "cycle_renumber")]
        scores = {key: (rng.random(items) < rng.uniform(0.05, 0.95)).astype(float).tolist() for key in keys}
        misses = [{"augmentation": "explicit_h", "id": f"CID{i}", "original": "OC(=O)c1ccccc1O",
                   "augmented": "[H]OC(=O)c1c([H])c([H])c([H])c([H])c1O[H]", "retrieved": "OC(=O)c1ccc(O)cc1",
                   "rank": 7} for i in range(50)]
        result = Result(suite=suite, task="evaluate", metrics={k: float(np.mean(v)) for k, v in scores.items()}, n=items,
                        model=model, item_ids=_ids(items, "CID"), item_scores=scores,
                        dataset=DatasetRef(name="amore-chebi20", sha256="4" * 64),
                        details=RobustnessDetails(misses=misses))
    else:
        from chemassay.suites.mechanism.details import EvaluateDetails

        s_total = rng.random(items).tolist()
        reactions = [{"reaction_id": f"NR-{i}", "status": "scored", "n_gold": 2, "n_pred": 1, "S_total": s_total[i],
                      "S_partial": s_total[i], "V": 1.0, "L": 0.5, "alignment": ["match", "skip_gold"],
                      "gold_steps": [{"subtype": "nucleophilic_addition", "smiles": "CC(O)(O)OCC"},
                                     {"subtype": "leaving_group_elimination", "smiles": "CCOC(C)=O"}],
                      "predicted_steps": [{"subtype": "nucleophilic_addition", "smiles": "CC(O)(O)OCC"}]}
                     for i in range(min(items, 196))]
        level = {"n": 10, "S_partial": 0.2, "V": 1.0, "L": 0.3}
        details = EvaluateDetails(reactions=reactions, by_level={"easy": {**level, "S_total": 0.3},
                                                                 "medium": {**level, "S_total": 0.2},
                                                                 "hard": {**level, "S_total": 0.1}})
        result = Result(suite=suite, task="evaluate", metrics={"S_total": float(np.mean(s_total))}, n=items, model=model,
                        item_ids=_ids(items, "NR"), item_scores={"S_total": s_total},
                        dataset=DatasetRef(name="omebench", sha256="5" * 64),
                        setting={"dataset": "gold", "prompt": "one-shot"}, details=details)
    return attach_intervals(result, resamples=200, seed=index)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200, help="result files")
    parser.add_argument("--items", type=int, default=1000, help="items per result")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from chemassay.report.load import load_results
    from chemassay.report.scorecard import build_report

    suites = ["stoichiometry", "reaction-ood", "generation", "robustness", "mechanism"]
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="chemassay-render-bench-") as folder:
        root = Path(folder)
        png = root / "results" / "properties.png"
        png.parent.mkdir(parents=True)
        figure, axis = plt.subplots(figsize=(8, 6), dpi=100)
        axis.hist(rng.normal(size=5000), bins=60)
        figure.savefig(png)
        plt.close(figure)
        started = time.perf_counter()
        for i in range(args.n):
            suite = suites[i % len(suites)]
            make_result(suite, i, args.items, rng, png).write(root / "results" / suite / f"result-{i:04d}.json")
        size_mb = sum(p.stat().st_size for p in (root / "results").rglob("*.json")) / 1e6
        print(f"wrote {args.n} result files ({size_mb:.0f} MB, {args.items} items each) in {time.perf_counter() - started:.1f} s")

        started = time.perf_counter()
        results = load_results([root / "results"])
        loaded = time.perf_counter() - started
        html, markdown = build_report(results, root / "report")
        total = time.perf_counter() - started
        print(f"read and checked {len(results)} results: {loaded:.2f} s")
        print(f"report of {len(results)} result files: {total:.2f} s in all "
              f"(HTML {html.stat().st_size / 1e6:.1f} MB, Markdown {markdown.stat().st_size / 1e6:.2f} MB); target < 10 s")
    print(f"peak RSS: {peak_rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
