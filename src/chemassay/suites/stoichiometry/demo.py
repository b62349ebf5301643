"""``chemassay demo --suite stoichiometry``: USPTO-15K balanced, one ChemAlgebra variant built,
both baselines scored on its in-, cross- and out-of-distribution tests."""

from __future__ import annotations

import time
from pathlib import Path

from chemassay.report.result import DatasetRef, Result, input_ref

DEMO_NOTES = """
USPTO-15K (bundled) is checked for mass balance and re-balanced with the shipped by-product
library (`balance`), then the ChemAlgebra variant `smiles_t2_x1` (SMILES species, a
coefficient per molecule, Appendix C) is built with seed 0 and every line verified to
balance. Both baselines memorise the training pairs: `copy-coefficient` (every product gets
the input's most common coefficient, the T1 shortcut) and `algebraic` (integer null space of
the element matrix, reaction run as far as the input allows). `test_cross` holds the training
reactions with swapped coefficient ranges, so memorisation knows its molecules; `test_in` and
`test_out` are unseen reactions, which neither baseline can name (they predict no reaction).
"""

VARIANT = ("smiles", "t2", 1)
SPLITS = ("test_in", "test_cross", "test_out")


def run_demo(out_dir: Path) -> list[Result]:
    """Run the suite's demo into ``out_dir``; return the results written there."""
    from chemassay.suites.stoichiometry.baselines import BASELINES, load_memory, predict_lines
    from chemassay.suites.stoichiometry.cli_data import PAPER_TABLE_1, _source_info, balance_metrics
    from chemassay.suites.stoichiometry.inputs import resolve_source
    from chemassay.suites.stoichiometry.metrics import BagReader
    from chemassay.suites.stoichiometry.prepare import RebalanceConfig, process_source
    from chemassay.suites.stoichiometry.scoring import score_files
    from chemassay.suites.stoichiometry.variants import VariantConfig, build_variants
    from chemassay.suites.stoichiometry.verify import verify_folder

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    started = time.perf_counter()
    source = resolve_source("uspto-15k")
    processed = process_source(source, RebalanceConfig(), n_jobs=2)
    overall, per_split = balance_metrics(processed)
    balance = Result(
        suite="stoichiometry", task="balance",
        metrics={k: overall[k] for k in ("total", "balanced", "rebalanced", "ambiguous", "unexplained", "invalid",
                                         "balanced_pct", "rebalanced_pct", "usable_pct")},
        n=overall["total"] - overall["invalid"], dataset=DatasetRef(name="uspto-15k"), inputs=source.input_refs(),
        config={"library": processed.library.describe(), "max_byproducts": 6},
        elapsed_s=time.perf_counter() - started, per_split=per_split, paper_table_1_uspto_mit=PAPER_TABLE_1,
    )
    balance.write(out_dir / "balance.json")
    results.append(balance)

    encoding, task, aug = VARIANT
    config = VariantConfig(encoding, task, aug, seed=0)
    folder = out_dir / config.name
    build_variants(processed, [config], [folder], source_info=_source_info(source), n_jobs=2)
    report = verify_folder(folder, n_jobs=2)
    if not report.ok:
        raise RuntimeError(f"demo dataset failed verification: {report.problems[:3]}")

    reader = BagReader(encoding)
    memories = {split: load_memory(folder, split, reader) for split in ("train", "train_cross")}
    scores: dict[tuple[str, str], dict] = {}
    for split in SPLITS:
        sources = (folder / f"src-{split}.txt").read_text(encoding="utf-8").splitlines()
        memory = memories["train_cross" if "cross" in split else "train"]
        for baseline in BASELINES:
            begun = time.perf_counter()
            lines, counts = predict_lines(baseline, sources, reader, memory=memory)
            prediction = folder / f"pred-{baseline}-{split}.txt"
            prediction.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            scored = score_files(prediction, folder / f"tgt-{split}.txt", folder / f"src-{split}.txt", reader=reader)
            result = Result(
                suite="stoichiometry", task=f"score-{baseline}-{split}", metrics=scored.metrics,
                n=len(scored.samples), dataset=DatasetRef(name=f"uspto-15k/{config.name}"),
                inputs=[input_ref(prediction), input_ref(folder / f"tgt-{split}.txt")],
                config={"baseline": baseline, "variant": config.name, "split": split, "seed": 0,
                        "unknown_reactions": counts.unknown},
                elapsed_s=time.perf_counter() - begun, breakdown=scored.breakdown,
            )
            result.write(out_dir / f"{result.task}.json")
            results.append(result)
            scores[(baseline, split)] = scored.metrics
    _plot(scores, out_dir / "baselines.png", config.name)
    return results


def _plot(scores: dict[tuple[str, str], dict], path: Path, variant: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    baselines = sorted({b for b, _ in scores})
    figure, axes = plt.subplots(1, len(SPLITS), figsize=(11, 3.4), sharey=True)
    for axis, split in zip(axes, SPLITS, strict=True):
        keys = ("EM", "JAC", "F1", "mol_F1")
        width = 0.8 / len(baselines)
        for offset, baseline in enumerate(baselines):
            values = [scores[(baseline, split)][k] or 0 for k in keys]
            axis.bar([i + offset * width for i in range(len(keys))], values, width, label=baseline)
        axis.set_xticks([i + width * (len(baselines) - 1) / 2 for i in range(len(keys))], keys)
        axis.set_title(split)
        axis.set_ylim(0, 1.05)
    axes[0].set_ylabel("score")
    axes[-1].legend(loc="upper right", fontsize=8)
    figure.suptitle(f"ChemAlgebra {variant} on USPTO-15K: memorising baselines")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
