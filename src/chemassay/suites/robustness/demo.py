"""``chemassay demo --suite robustness``: AMORE on both shipped datasets with the two
built-in encoders, and downstream robustness of the two forest baselines on measured
solubility. A thin caller of :mod:`.api`."""

from __future__ import annotations

import os
from pathlib import Path

from chemassay.report.result import Result
from chemassay.runtime.files import atomic_write_text
from chemassay.runtime.progress import info

DEMO_NOTES = """
AMORE retrieval (Ganeeva et al. 2024) on the shipped ChEBI-20 test set (3,300 molecules) and
QM9 isomers (918, all C7H10O2): every original is matched against its augmentations (RDKit
canonical, explicit hydrogens, Kekulé form, cycle renumbering, random atom order) by L2
distance, in both directions (o2a: original→augmented, a2o: augmented→original).
`fingerprint` (Morgan counts, graph-based) is the invariant upper bound; it misses only
molecules whose fingerprints coincide exactly (ties broken by row, as FAISS does).
`char-ngram` reads the string and collapses on explicit hydrogens, like the language models
of the paper. Downstream: a random forest on each encoding (`rf-fingerprint`,
`rf-char-ngram`) predicts measured aqueous solubility (logS, RDKit/Huuskonen set); the
fingerprint model shows no drop, the string model does. Train a small SMILES language model
with `chemassay robustness train --out DIR` and score it with `--model hf:DIR`; set
`CHEMASSAY_DEMO_LM=DIR` to include it here.
"""

DEMO_AUGMENTATIONS = ("canonical", "explicit_h", "kekulize", "cycle_renumber", "randomized")
DEMO_TREES = 100


def run_demo(out_dir: Path) -> list[Result]:
    """Run the demo into ``out_dir``: JSON results, Markdown tables and one PNG (both directions)."""
    from chemassay.suites.robustness import api
    from chemassay.suites.robustness.amore import markdown_table
    from chemassay.suites.robustness.plots import plot_accuracy

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    tables: list[str] = []
    plotted: dict[str, dict[str, list[dict]]] = {}
    encoders = ["fingerprint", "char-ngram"]
    if os.environ.get("CHEMASSAY_DEMO_LM"):
        encoders.append(f"hf:{os.environ['CHEMASSAY_DEMO_LM']}")
    for dataset in ("isomers", "chebi20"):
        for spec in encoders:
            info(f"[robustness demo] AMORE {dataset} with {spec}")
            result = api.evaluate(model=spec, dataset=dataset, augmentations=DEMO_AUGMENTATIONS, n_jobs=2)
            label = "lm" if spec.startswith("hf:") else spec
            result.write(out / f"amore-{dataset}-{label}.json")
            results.append(result)
            tables.append(markdown_table(result.details.table, f"AMORE {dataset} - {spec}"))
            plotted.setdefault(dataset, {})[label] = result.details.table
    for model in ("rf-fingerprint", "rf-char-ngram"):
        info(f"[robustness demo] downstream logS with {model}")
        result = api.downstream(model, "solubility", targets=["logS"], augmentations=DEMO_AUGMENTATIONS,
                                n_estimators=DEMO_TREES, n_jobs=2)
        result.write(out / f"downstream-logS-{model}.json")
        results.append(result)
        lines = [f"**downstream logS (RMSE) - {model}**", "", "| augmentation | n | rmse | rmse_drop |",
                 "| --- | --- | --- | --- |"]
        lines += [f"| {row['augmentation']} | {row['n']} | {row['rmse']:.3f} | {row.get('rmse_drop', 0.0):+.3f} |"
                  for row in result.details.table]
        tables.append("\n".join(lines) + "\n")
    atomic_write_text(out / "tables.md", "\n".join(tables))
    plot_accuracy(plotted, out / "amore_acc1.png")
    return results
