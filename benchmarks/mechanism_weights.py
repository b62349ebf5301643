"""How closely each step-weight formula reproduces the weights shipped in oMe-Gold, what the
choice does to the nearest-neighbour baseline's S_total, and the fit behind chemassay's
constants.

Formulas compared against the 858 shipped Gold weights: the paper's Table 6 formula
(``--weights paper``), chemassay's fitted scheme (``--weights fitted``, the fallback of the
default ``--weights data``) and uniform 1/n. Per formula: mean and max absolute error per
step, root mean square error, reactions whose every weight is within 0.01 / 0.02, mean
Spearman correlation within a reaction; then the mean absolute error by step type. Last,
the nearest-neighbour baseline (oMe-Template pool, chemassay's default exclusion) scored on
oMe-Gold with each weighting: S_total and S_partial with 95 % bootstrap intervals (1,000
resamples) and the paired difference to the shipped weights with its interval.

``--fit`` re-runs the least-squares fit (scipy) and prints the values the fitted constants
were rounded from.

Run: ``PYTHONPATH=src python benchmarks/mechanism_weights.py [--fit] [--no-baseline] [--summary]``
(``--summary`` writes the compact result the docs quote, ``benchmarks/results/mechanism_weights.json.gz``);
``--table`` prints the docs' tables from that committed file and runs nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import spearmanr

from chemassay.suites.mechanism import weights as scheme
from chemassay.suites.mechanism.data import omebench_file as bundled_path
from chemassay.suites.mechanism.records import load_reactions
from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from committed import Clock, minus, read_summary, write_summary  # noqa: E402

SUMMARY = "mechanism_weights"
LEVELS = ("easy", "medium", "hard")
FORMULAS = ("paper Table 6", "fitted scheme", "uniform 1/n")
WEIGHTINGS = (("data", "shipped (`data`)"), ("fitted", "fitted"), ("paper", "paper Table 6"))


def agreement(reactions, predict) -> dict[str, float]:
    errors, worst, within_1, within_2, rhos = [], [], 0, 0, []
    by_type: dict[str, list[float]] = {}
    for reaction in reactions:
        shipped = np.array([s.step_weight for s in reaction.steps])
        guess = np.array(predict(reaction))
        diff = np.abs(guess - shipped)
        errors.extend(diff)
        for step, error in zip(reaction.steps, diff, strict=True):
            by_type.setdefault(SUBTYPE_TO_TYPE.get(step.subtype, step.type or "unknown"), []).append(float(error))
        worst.append(diff.max())
        within_1 += diff.max() <= 0.01
        within_2 += diff.max() <= 0.02
        if len(set(shipped)) > 1 and len(set(guess)) > 1:
            rhos.append(spearmanr(guess, shipped).statistic)
    return {
        "mae": float(np.mean(errors)),
        "rmse": float(np.sqrt(np.mean(np.square(errors)))),
        "max": float(np.max(worst)),
        "by_type": {kind: float(np.mean(values)) for kind, values in by_type.items()},
        "within_0.01": within_1 / len(reactions),
        "within_0.02": within_2 / len(reactions),
        "spearman": float(np.mean(rhos)) if rhos else None,
    }


def fit(reactions) -> None:
    subtypes = sorted({s.subtype for r in reactions for s in r.steps})
    index = {s: i for i, s in enumerate(subtypes)}
    k = len(subtypes)

    def bucket(i, n):
        if n == 1 or i == 0:
            return 0
        if i == n - 1:
            return 1
        relative = i / (n - 1)
        if relative >= scheme.LATE_FROM:
            return 3
        if scheme.KEY_RANGE[0] <= relative <= scheme.KEY_RANGE[1]:
            return 2
        return 4

    def unpack(x):
        base = np.exp(x[:k])
        position = np.exp(np.concatenate([[0.0], x[k:k + 3], [0.0]]))
        difficulty = np.exp(np.concatenate([[0.0], x[k + 3:k + 5]]))
        return base, position, difficulty, np.exp(x[k + 5])

    def residuals(x):
        base, position, difficulty, stereo = unpack(x)
        out = []
        for r in reactions:
            n = len(r.steps)
            raw = np.array([
                base[index[s.subtype]] * position[bucket(i, n)] * difficulty[LEVELS.index(r.level)]
                * (stereo if scheme.has_stereo(s.intermediate_smiles) else 1.0)
                for i, s in enumerate(r.steps)
            ])
            raw = np.clip(raw, scheme.CLIP_LOW, scheme.CLIP_HIGH)
            out.extend(raw / raw.sum() - np.array([s.step_weight for s in r.steps]))
        return np.array(out)

    # Start from the shipped constants; the clipping makes the problem multimodal.
    x0 = np.zeros(k + 6)
    for s in subtypes:
        x0[index[s]] = np.log(scheme.TYPE_BASE[SUBTYPE_TO_TYPE[s]] * scheme.SUBTYPE_MODIFIER[s])
    x0[k:k + 3] = np.log([scheme.POSITION_LAST, scheme.POSITION_KEY, scheme.POSITION_LATE])
    x0[k + 3:k + 5] = np.log([scheme.DIFFICULTY["medium"], scheme.DIFFICULTY["hard"]])
    x0[k + 5] = np.log(scheme.STEREO_BONUS)
    low, high = np.full(k + 6, -np.inf), np.full(k + 6, np.inf)
    low[:k], high[:k] = np.log(0.3), np.log(8.0)
    solution = least_squares(residuals, x0, bounds=(low, high))
    base, position, difficulty, stereo = unpack(solution.x)
    print(f"\nleast-squares fit (MAE {np.abs(residuals(solution.x)).mean():.5f}):")
    for s in subtypes:
        print(f"  {SUBTYPE_TO_TYPE[s]:<18} {s:<28} {base[index[s]]:.3f}")
    print(f"  position last {position[1]:.3f}, key {position[2]:.3f}, late {position[3]:.3f}")
    print(f"  difficulty medium {difficulty[1]:.3f}, hard {difficulty[2]:.3f}; stereo bonus {stereo:.3f}")


def baseline_effect(resamples: int = 1000, seed: int = 0) -> dict[str, dict]:
    """S_total / S_partial of the nearest-neighbour baseline under each weighting, with
    intervals and the paired difference to the shipped weights."""
    import chemassay.mechanism as mechanism

    from chemassay.report.intervals import percentile_interval

    run = mechanism.predict("nearest-neighbour", "gold")
    scores = {mode: mechanism.evaluate(run.rows, weights=mode, bootstrap=resamples, seed=seed, domain_pool="none")
              for mode, _ in WEIGHTINGS}
    shipped = np.array(scores["data"].item_scores["S_total"])
    out = {}
    for mode, result in scores.items():
        diff = np.array(result.item_scores["S_total"]) - shipped
        low, high = percentile_interval(diff.tolist(), resamples=resamples, seed=seed)
        out[mode] = {"n": result.n,
                     "metrics": {k: result.metrics[k] for k in ("S_total", "S_partial")},
                     "intervals": {k: [result.intervals[k].low, result.intervals[k].high]
                                   for k in ("S_total", "S_partial")},
                     "S_total_minus_shipped": [float(diff.mean()), float(low), float(high)]}
    return out


def measure(with_baseline: bool, resamples: int = 1000, seed: int = 0) -> dict:
    """Everything the tables print: agreement of each formula with the shipped weights (overall
    and by step type, with step counts) and, with ``with_baseline``, the baseline's scores."""
    reactions = load_reactions(bundled_path("gold")).reactions
    predictors = {
        "paper Table 6": lambda r: scheme.paper_weights(r.steps),
        "fitted scheme": lambda r: scheme.scheme_weights(r.steps, r.level),
        "uniform 1/n": lambda r: [1 / len(r.steps)] * len(r.steps),
    }
    counts: dict[str, int] = {}
    for reaction in reactions:
        for step in reaction.steps:
            kind = SUBTYPE_TO_TYPE.get(step.subtype, step.type or "unknown")
            counts[kind] = counts.get(kind, 0) + 1
    data = {"gold": {"reactions": len(reactions), "steps": sum(len(r.steps) for r in reactions),
                     "mean_step_weight": statistics.fmean(s.step_weight for r in reactions for s in r.steps),
                     "steps_by_type": counts},
            "agreement": {name: agreement(reactions, predict) for name, predict in predictors.items()},
            "config": {"resamples": resamples, "seed": seed, "baseline": "nearest-neighbour (pool oMe-Template, "
                       "family excluded) on oMe-Gold, scored with each weighting"}}
    if with_baseline:
        data["baseline"] = baseline_effect(resamples, seed)
    return data


def _spearman(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"  # None: uniform weights have no ranking


def print_tables(data: dict) -> None:
    """The docs' tables (docs/mechanism.md, "Which reproduces the shipped weights" and "What the
    choice does to a score") and the by-type errors, from ``measure``'s dict."""
    gold = data["gold"]
    print(f"step weights against the {gold['steps']} shipped in oMe-Gold ({gold['reactions']} reactions; "
          f"mean step weight {gold['mean_step_weight']:.3f})\n")
    print("| weights | MAE per step | RMSE | max error | reactions with every weight within 0.01 | within 0.02 | "
          "mean Spearman within a reaction |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in FORMULAS:
        row = data["agreement"][name]
        print(f"| {name} | {row['mae']:.4f} | {row['rmse']:.4f} | {row['max']:.3f} | {100 * row['within_0.01']:.1f} % | "
              f"{100 * row['within_0.02']:.1f} % | {_spearman(row['spearman'])} |")
    counts = gold["steps_by_type"]
    print("\nmean absolute error per step, by step type:")
    print(f"{'type':<18} {'steps':>6} " + " ".join(f"{name:>14}" for name in FORMULAS))
    for kind in sorted(counts, key=lambda k: (-counts[k], k)):
        print(f"{kind:<18} {counts[kind]:>6} "
              + " ".join(f"{data['agreement'][name]['by_type'][kind]:>14.4f}" for name in FORMULAS))
    print("(docs/mechanism.md quotes them, paper / fitted, as:)")
    paper, fitted = data["agreement"]["paper Table 6"]["by_type"], data["agreement"]["fitted scheme"]["by_type"]
    for index, kind in enumerate(sorted(counts, key=lambda k: (-counts[k], k))):
        steps = f"{counts[kind]} steps" if index == 0 else f"{counts[kind]}"
        print(f"quote: {kind.replace('_', ' ')} ({steps}) {paper[kind]:.4f} / {fitted[kind]:.4f}")
    if "baseline" not in data:
        return
    print("\nnearest-neighbour baseline (pool oMe-Template, family excluded) on oMe-Gold, by step weights:\n")
    print("| gold weights | S_total | S_partial | S_total − shipped |\n| --- | --- | --- | --- |")
    for mode, label in WEIGHTINGS:
        row = data["baseline"][mode]
        cells = [f"{row['metrics'][k]:.4f} [{row['intervals'][k][0]:.4f}, {row['intervals'][k][1]:.4f}]"
                 for k in ("S_total", "S_partial")]
        mean, low, high = row["S_total_minus_shipped"]
        cells.append("—" if mode == "data" else minus(f"{mean:+.4f} [{low:+.4f}, {high:+.4f}]"))
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", action="store_true", help="re-run the least-squares fit")
    parser.add_argument("--no-baseline", action="store_true", help="skip the nearest-neighbour S_total comparison")
    parser.add_argument("--summary", action="store_true",
                        help=f"write benchmarks/results/{SUMMARY}.json.gz (what the docs quote)")
    parser.add_argument("--table", action="store_true", help="print the docs' tables from the committed summary")
    args = parser.parse_args()
    if args.table:
        print(f"(from the committed benchmarks/results/{SUMMARY}.json.gz; run without --table to recompute)\n")
        print_tables(read_summary(SUMMARY))
        return
    if args.summary and args.no_baseline:
        parser.error("--summary needs the baseline (the docs quote it)")
    clock = Clock()
    data = measure(with_baseline=not args.no_baseline)
    print_tables(data)
    if args.summary:
        write_summary(SUMMARY, data, clock=clock, packages=("drfp",))
    if args.fit:
        fit(load_reactions(bundled_path("gold")).reactions)


if __name__ == "__main__":
    main()
