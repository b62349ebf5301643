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

Run: ``PYTHONPATH=src python benchmarks/mechanism_weights.py [--fit] [--no-baseline]``
"""

from __future__ import annotations

import argparse
import statistics

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import spearmanr

from chemassay.suites.mechanism import weights as scheme
from chemassay.suites.mechanism.data import omebench_file as bundled_path
from chemassay.suites.mechanism.records import load_reactions
from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE

LEVELS = ("easy", "medium", "hard")


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
        "spearman": float(np.mean(rhos)) if rhos else float("nan"),
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


def baseline_effect(resamples: int = 1000, seed: int = 0) -> None:
    """S_total / S_partial of the nearest-neighbour baseline under each weighting, with
    intervals and the paired difference to the shipped weights."""
    import chemassay.mechanism as mechanism

    from chemassay.report.intervals import percentile_interval

    run = mechanism.predict("nearest-neighbour", "gold")
    scores = {mode: mechanism.evaluate(run.rows, weights=mode, bootstrap=resamples, seed=seed, domain_pool="none")
              for mode in ("data", "fitted", "paper")}
    print("\nnearest-neighbour baseline (pool oMe-Template, family excluded) on oMe-Gold, by step weights:")
    print(f"{'weights':<18} {'S_total [95% CI]':>26} {'S_partial [95% CI]':>26} {'dS_total vs shipped [95% CI]':>34}")
    shipped = np.array(scores["data"].item_scores["S_total"])
    for mode, label in (("data", "shipped (data)"), ("fitted", "fitted scheme"), ("paper", "paper Table 6")):
        result = scores[mode]
        cells = []
        for metric in ("S_total", "S_partial"):
            interval = result.intervals[metric]
            cells.append(f"{result.metrics[metric]:.4f} [{interval.low:.4f}, {interval.high:.4f}]")
        diff = np.array(result.item_scores["S_total"]) - shipped
        low, high = percentile_interval(diff.tolist(), resamples=resamples, seed=seed)
        print(f"{label:<18} {cells[0]:>26} {cells[1]:>26} {diff.mean():>+14.4f} [{low:+.4f}, {high:+.4f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", action="store_true", help="re-run the least-squares fit")
    parser.add_argument("--no-baseline", action="store_true", help="skip the nearest-neighbour S_total comparison")
    args = parser.parse_args()
    reactions = load_reactions(bundled_path("gold")).reactions
    rows = {
        "paper Table 6": agreement(reactions, lambda r: scheme.paper_weights(r.steps)),
        "fitted scheme": agreement(reactions, lambda r: scheme.scheme_weights(r.steps, r.level)),
        "uniform 1/n": agreement(reactions, lambda r: [1 / len(r.steps)] * len(r.steps)),
    }
    print(f"step weights against the {sum(len(r.steps) for r in reactions)} shipped in oMe-Gold")
    print(f"{'weights':<18} {'MAE':>8} {'RMSE':>8} {'max':>7} {'all<=0.01':>10} {'all<=0.02':>10} {'Spearman':>9}")
    for name, row in rows.items():
        print(f"{name:<18} {row['mae']:>8.4f} {row['rmse']:>8.4f} {row['max']:>7.3f} {row['within_0.01']:>10.1%} "
              f"{row['within_0.02']:>10.1%} {row['spearman']:>9.3f}")
    mean_weight = statistics.fmean(s.step_weight for r in reactions for s in r.steps)
    print(f"(mean step weight {mean_weight:.3f})")
    counts: dict[str, int] = {}
    for reaction in reactions:
        for step in reaction.steps:
            kind = SUBTYPE_TO_TYPE.get(step.subtype, step.type or "unknown")
            counts[kind] = counts.get(kind, 0) + 1
    print("\nmean absolute error per step, by step type:")
    print(f"{'type':<18} {'steps':>6} " + " ".join(f"{name:>14}" for name in rows))
    for kind in sorted(counts, key=lambda k: -counts[k]):
        print(f"{kind:<18} {counts[kind]:>6} " + " ".join(f"{rows[name]['by_type'][kind]:>14.4f}" for name in rows))
    if not args.no_baseline:
        baseline_effect()
    if args.fit:
        fit(reactions)


if __name__ == "__main__":
    main()
