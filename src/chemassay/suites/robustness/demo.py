"""``chemassay demo --suite robustness``: AMORE on both shipped datasets with the two
built-in encoders, and downstream robustness of the two baselines on measured solubility."""

from __future__ import annotations

import os
import time
from pathlib import Path

from chemassay.clitools import info
from chemassay.report.result import DatasetRef, Result
from chemassay.runtime.files import atomic_write_text

DEMO_NOTES = """
AMORE retrieval (Ganeeva et al. 2024) on the shipped ChEBI-20 test set (3,300 molecules) and
QM9 isomers (918, all C7H10O2): every original is matched against its augmentations (RDKit
canonical, explicit hydrogens, Kekulé form, cycle renumbering, random atom order) by L2
distance. `fingerprint` (Morgan counts, graph-based) is the invariant upper bound; it misses
only molecules whose fingerprints coincide exactly (ties broken by row, as FAISS does).
`char-ngram` reads the string and collapses on explicit hydrogens, like the language models
of the paper. Downstream: a random forest on each encoding predicts measured aqueous
solubility (logS, RDKit/Huuskonen set); the fingerprint model shows no drop, the string
model does. Train a small SMILES language model with `chemassay robustness train-lm --out DIR`
and score it with `--encoder hf:DIR`; set `CHEMASSAY_DEMO_LM=DIR` to include it here.
"""

DEMO_AUGMENTATIONS = ("canonical", "explicit_h", "kekulize", "cycle_renumber", "randomized")


def _plot_accuracy(results: dict[str, dict[str, list[dict]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from chemassay.runtime.files import atomic_writer

    figure, axes = plt.subplots(1, len(results), figsize=(5.2 * len(results), 3.8), sharey=True)
    axes = np.atleast_1d(axes)
    for axis, (dataset, by_encoder) in zip(axes, results.items(), strict=True):
        width = 0.8 / max(1, len(by_encoder))
        for offset, (encoder, rows) in enumerate(by_encoder.items()):
            positions = np.arange(len(rows)) + offset * width
            axis.bar(positions, [100 * r["o2a_acc@1"] for r in rows], width=width, label=encoder)
        axis.set_xticks(np.arange(len(DEMO_AUGMENTATIONS)) + 0.4 - width / 2)
        axis.set_xticklabels(DEMO_AUGMENTATIONS, rotation=30, ha="right")
        axis.set_title(f"AMORE {dataset}: original→augmented Acc@1")
        axis.set_ylim(0, 119)
        axis.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("Acc@1 (%)")
    axes[0].legend(loc="upper center", ncol=len(next(iter(results.values()))), frameon=False)
    figure.tight_layout()
    with atomic_writer(path, "wb", encoding=None) as handle:
        figure.savefig(handle, format="png", dpi=110)
    plt.close(figure)


def run_demo(out_dir: Path) -> list[Result]:
    """Run the demo into ``out_dir``: JSON results, Markdown tables and one PNG."""
    from chemassay.data import dataset_file
    from chemassay.runtime.files import sha256_file
    from chemassay.suites.robustness.amore import markdown_table, run_amore, run_result
    from chemassay.suites.robustness.datasets import shipped_dataset, shipped_dataset_ref
    from chemassay.suites.robustness.downstream import (
        BaselineModel,
        evaluate_downstream,
        read_property_csv,
    )
    from chemassay.suites.robustness.encoders import make_encoder
    from chemassay.suites.robustness.retrieval import resolve_backend

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    tables: list[str] = []
    plotted: dict[str, dict[str, list[dict]]] = {}
    encoders = ["fingerprint", "char-ngram"]
    if os.environ.get("CHEMASSAY_DEMO_LM"):
        encoders.append(f"hf:{os.environ['CHEMASSAY_DEMO_LM']}")
    for dataset in ("isomers", "chebi20"):
        molecules = shipped_dataset(dataset)
        name, digest = shipped_dataset_ref(dataset)
        for spec in encoders:
            info(f"[robustness demo] AMORE {dataset} with {spec}")
            started = time.perf_counter()
            encoder = make_encoder(spec)
            outcome = run_amore(molecules, encoder, augmentations=DEMO_AUGMENTATIONS, n_jobs=2)
            label = "lm" if spec.startswith("hf:") else spec
            result = run_result(
                outcome, encoder, dataset=DatasetRef(name=name, sha256=digest), inputs=[],
                elapsed_s=time.perf_counter() - started, task=f"amore-{dataset}-{label}",
                config={"augmentations": list(DEMO_AUGMENTATIONS), "layers": "last", "metric": "l2",
                        "ties": "index", "backend": resolve_backend("auto"), "seed": 0},
            )
            result.write(out / f"amore-{dataset}-{label}.json")
            results.append(result)
            tables.append(markdown_table(outcome.table_rows, f"AMORE {dataset} - {spec}"))
            plotted.setdefault(dataset, {})[label] = outcome.table_rows
    solubility = dataset_file("solubility-huuskonen", "solubility_huuskonen.csv")
    data = read_property_csv(solubility, targets=["logS"])
    for baseline in ("baseline-fingerprint", "baseline-char-ngram"):
        info(f"[robustness demo] downstream logS with {baseline}")
        started = time.perf_counter()
        model = BaselineModel(baseline, data.task, seed=0, n_estimators=100, n_jobs=2).fit(
            data.train_smiles, data.train_targets)
        report = evaluate_downstream(data, model, DEMO_AUGMENTATIONS)
        result = Result(
            suite="robustness", task=f"downstream-logS-{baseline}", metrics=report.metrics, n=report.n_scored,
            skipped=report.skipped, dataset=DatasetRef(name="solubility-huuskonen", sha256=sha256_file(solubility)),
            config={"model": baseline, "task": data.task, "targets": data.target_names, "split": data.split_source,
                    "n_estimators": 100, "seed": 0, "augmentations": list(DEMO_AUGMENTATIONS)},
            elapsed_s=round(time.perf_counter() - started, 3), table=report.table,
        )
        result.write(out / f"downstream-logS-{baseline}.json")
        results.append(result)
        lines = [f"**downstream logS (RMSE) - {baseline}**", "", "| augmentation | n | rmse | rmse_drop |",
                 "| --- | --- | --- | --- |"]
        lines += [f"| {row['augmentation']} | {row['n']} | {row['rmse']:.3f} | {row.get('rmse_drop', 0.0):+.3f} |"
                  for row in report.table]
        tables.append("\n".join(lines) + "\n")
    atomic_write_text(out / "tables.md", "\n".join(tables))
    _plot_accuracy(plotted, out / "amore_acc1.png")
    return results
