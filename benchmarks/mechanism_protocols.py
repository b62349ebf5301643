"""The nearest-neighbour baseline under chemassay's exemplar rule and the paper's (App. G),
with oMe-Template and an oMe-Silver-scale expansion as the pool, overall and in-domain /
out-of-domain (Table 16's split).

chemassay's default leaves every pool reaction of the query's family out; the paper's rule
(``--allow-same-family``, ``allow_same_family=true``) leaves out only the identical reaction
(same id or same canonical reaction). With oMe-Template as the pool the two rules differ
little: its ids are oMe-Gold's, so the identical-id rule already removes each query's own
template. With an expansion (the paper used oMe-Silver, 2,508 reactions expanded from the
templates) the paper's rule lets a query borrow the mechanism of an instance of its own
named reaction — this is where in-domain and out-of-domain part.

The expansion is ``chemassay mechanism expand template --per-template 18 --seed 0`` (2,502
reactions; written to a temporary folder unless ``--silver FILE`` names one). Each cell:
the metric on the 196 oMe-Gold reactions with its 95 % bootstrap interval (1,000
resamples, seed 0); in-domain means the pool holds a reaction of the query's family.

Run: ``PYTHONPATH=src python benchmarks/mechanism_protocols.py [--silver FILE] [--metrics S_total,L]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import chemassay.mechanism as mechanism

from chemassay.report.intervals import percentile_interval

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import interval_cell  # noqa: E402


def cell(result, key: str) -> str:
    return interval_cell(result, key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--silver", type=Path, help="an expanded pool (JSONL); default: expand oMe-Template now")
    parser.add_argument("--metrics", default="S_total,S_partial,L", help="metrics to print (comma-separated)")
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    with tempfile.TemporaryDirectory() as folder:
        silver = args.silver
        if silver is None:
            silver = Path(folder) / "silver.jsonl"
            started = time.perf_counter()
            expanded = mechanism.expand("template", per_template=18, seed=0, out=silver)
            print(f"expanded oMe-Template: {len(expanded.records)} reactions in {time.perf_counter() - started:.1f} s")
        rows = []
        for pool, label in (("template", "oMe-Template (166)"), (str(silver), f"expansion ({silver.name})")):
            for same_family in (False, True):
                spec = f"nearest-neighbour:pool={pool}" + (",allow_same_family=true" if same_family else "")
                started = time.perf_counter()
                result = mechanism.evaluate(model=spec, bootstrap=args.bootstrap, seed=0)
                rule = "paper (App. G): identical only" if same_family else "chemassay: family excluded"
                rows.append((label, rule, result, time.perf_counter() - started))
    print(f"\nnearest-neighbour on oMe-Gold (196 reactions); 95 % bootstrap intervals ({args.bootstrap} resamples)")
    for label, rule, result, elapsed in rows:
        n_in, n_out = result.metrics.get("n_in_domain"), result.metrics.get("n_out_of_domain")
        print(f"\npool {label}, exclusion {rule} ({elapsed:.1f} s); in-domain {n_in}, out-of-domain {n_out}")
        print(f"  {'metric':<10} {'overall':>26} {'in-domain':>26} {'out-of-domain':>26}")
        for metric in metrics:
            print(f"  {metric:<10} {cell(result, metric):>26} {cell(result, 'in-domain/' + metric):>26} "
                  f"{cell(result, 'out-of-domain/' + metric):>26}")
    first = rows[0][2]
    print(f"\npaired differences to the first row (same 196 reactions; {args.bootstrap} resamples)")
    for label, rule, result, _ in rows[1:]:
        parts = []
        for metric in metrics:
            diff = [a - b for a, b in zip(result.item_scores[metric], first.item_scores[metric], strict=True)]
            low, high = percentile_interval(diff, resamples=args.bootstrap, seed=0)
            parts.append(f"{metric} {sum(diff) / len(diff):+.3f} [{low:+.3f}, {high:+.3f}]")
        print(f"  {label}, {rule}: " + "; ".join(parts))


if __name__ == "__main__":
    main()
