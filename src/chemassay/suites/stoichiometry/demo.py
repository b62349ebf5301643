"""``chemassay demo --suite stoichiometry``: USPTO-15K balanced, one ChemAlgebra variant built,
both baselines evaluated on its in-, cross- and out-of-distribution tests.

A thin caller of the library: the reactions are balanced once (the same ``balance`` result the
CLI writes), the variant is built from them, and each baseline is evaluated through
``chemassay.stoichiometry.evaluate(model="algebraic:FOLDER", ...)``, which reads the dataset
and the setting (variant, split) from the built folder's manifest. ``chemassay assay`` runs the
suite's headline settings (:mod:`.assay`); this demo stays until it replaces ``chemassay demo``.
"""

from __future__ import annotations

import time
from pathlib import Path

from chemassay.report.result import Result

DEMO_NOTES = """
USPTO-15K (bundled) is checked for mass balance and re-balanced with the shipped by-product
library (`balance`), then the ChemAlgebra variant `smiles_t2_x1` (SMILES species, a
coefficient per molecule, Appendix C) is built with seed 0 and every line verified to
balance. Both baselines memorise the training pairs: `copy-coefficient` (every product gets
the input's most common coefficient, the T1 shortcut) and `algebraic` (integer null space of
the element matrix, reaction run as far as the input allows). `test_cross` holds the training
reactions with swapped coefficient ranges, so memorisation knows its molecules; `test_in` and
`test_out` are unseen reactions, which neither baseline can name (they predict no reaction).
Each `evaluate` row is one baseline on one test split (`model`, `setting.split`).
"""

VARIANT = ("smiles", "t2", 1)
SPLITS = ("test_in", "test_cross", "test_out")
BASELINES = ("copy-coefficient", "algebraic")


def _written(result: Result, out_dir: Path, name: str) -> Result:
    result.write(out_dir / f"{name}.json")
    return result


def run_demo(out_dir: Path, *, limit: int | None = None, n_jobs: int = 2) -> list[Result]:
    """Run the suite's demo into ``out_dir`` and return the results written there (``limit``:
    only the first reactions of each split, for a quick run)."""
    from chemassay.suites.stoichiometry.api import evaluate, verify
    from chemassay.suites.stoichiometry.data import resolve_source, source_info
    from chemassay.suites.stoichiometry.plots import plot_baselines
    from chemassay.suites.stoichiometry.prepare import (
        RebalanceConfig,
        balance_result,
        process_source,
    )
    from chemassay.suites.stoichiometry.variants import VariantConfig, build_variants

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    source = resolve_source("uspto-15k")
    processed = process_source(source, RebalanceConfig(), limit=limit, n_jobs=n_jobs)
    results = [_written(balance_result(processed, source, limit=limit, started=started), out_dir, "balance")]

    encoding, task, aug = VARIANT
    config = VariantConfig(encoding, task, aug, seed=0)
    folder = out_dir / config.name
    build_variants(processed, [config], [folder], source_info=source_info(source), n_jobs=n_jobs)
    verified = verify(folder, n_jobs=n_jobs)
    if not verified.metrics["ok"]:
        raise RuntimeError(f"demo dataset failed verification: {verified.skipped[:3]}")

    scores: dict[tuple[str, str], dict] = {}
    intervals: dict[tuple[str, str], dict] = {}
    for split in SPLITS:
        for baseline in BASELINES:
            result = evaluate(
                model=f"{baseline}:{folder}", sources=folder / f"src-{split}.txt", targets=folder / f"tgt-{split}.txt",
                predictions_out=folder / f"pred-{baseline}-{split}.txt",
            )
            results.append(_written(result, out_dir, f"evaluate-{baseline}-{split}"))
            scores[(baseline, split)] = result.metrics
            intervals[(baseline, split)] = {key: (i.low, i.high) for key, i in result.intervals.items()
                                            if i.low is not None and i.high is not None}
    plot_baselines(scores, out_dir / "baselines.png",
                   f"ChemAlgebra {config.name} on USPTO-15K: memorising baselines", intervals=intervals)
    return results
