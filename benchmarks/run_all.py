"""Run the speed benchmarks of every suite, one after the other, and print their figures.

``make bench`` calls this. Each benchmark is its own script (run it alone for options);
this runner starts each with the arguments below, streams its output under a header, and
ends with a table of wall times and exit codes. Comparison scripts that need the authors'
data or a throwaway reference environment (``*_compare_*``, ``*_reference``) are listed
but only run with ``--with-reference``; ``--quick`` uses smaller inputs everywhere.

    python benchmarks/run_all.py                    # the speed figures quoted in docs/
    python benchmarks/run_all.py --quick            # a few minutes, smaller inputs
    python benchmarks/run_all.py --only generation  # the scripts whose name starts so
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (script, full-run arguments, quick-run arguments, needs the reference tools or data)
BENCHMARKS: list[tuple[str, list[str], list[str], bool]] = [
    ("chem_similarity.py", [], ["--queries", "500", "--refs", "5000", "--repeats", "1"], False),
    ("mechanism_score.py", [], [], False),
    ("mechanism_weights.py", [], [], False),
    ("mechanism_serving.py", [], ["--concurrency", "1,8", "--repeats", "1"], False),
    ("mechanism_protocols.py", [], ["--bootstrap", "200"], False),
    ("stoichiometry_build.py", [], ["--repeat", "2"], False),
    ("stoichiometry_baselines.py", [], [], False),
    ("robustness_augment.py", [], [], False),
    ("robustness_retrieval_speed.py", [], [], False),
    ("reaction_ood_shift.py", [], [], False),
    ("reaction_ood_scale.py", [], ["--n", "50000", "--stages", "clean,split,verify"], False),
    ("reaction_ood_baseline.py", [], [], False),
    ("generation_baselines.py", [], [], False),
    ("report_store.py", [], ["--n", "20000", "--repeats", "1"], False),
    ("report_render.py", [], ["--n", "50"], False),
    ("assay_wall_time.py", ["--full"], [], False),
    ("endpoint_throughput.py", ["--replicas"], ["--concurrency", "1,16", "--repeats", "1"], False),
    ("stoichiometry_assay.py", ["--warm"], [], False),
    ("reaction_ood_assay.py", [], ["--quick"], False),
    ("robustness_assay.py", [], [], False),
    ("generation_speed.py", ["--skip-reference"], ["--n", "5000", "--repeats", "1", "--skip-reference"], False),
    ("generation_speed.py", [], ["--n", "5000", "--repeats", "1"], True),
    ("generation_compare_moses.py", [], [], True),
    ("generation_baselines_reference.py", [], [], True),
    ("robustness_compare_amore.py", [], [], True),
    ("robustness_old_rdkit_strings.py", [], [], True),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller inputs")
    parser.add_argument("--with-reference", action="store_true", help="also run the comparisons with reference code/data")
    parser.add_argument("--only", default="", help="run only scripts whose name starts with this")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args(argv)

    chosen = [
        (script, quick if args.quick else full, reference)
        for script, full, quick, reference in BENCHMARKS
        if script.startswith(args.only) and (args.with_reference or not reference)
    ]
    if args.list:
        for script, arguments, reference in chosen:
            print(f"{script} {' '.join(arguments)}{'  [reference]' if reference else ''}")
        return 0
    summary: list[tuple[str, float, int]] = []
    for script, arguments, _ in chosen:
        command = [sys.executable, str(HERE / script), *arguments]
        print(f"\n=== {script} {' '.join(arguments)}", flush=True)
        started = time.perf_counter()
        code = subprocess.run(command, check=False).returncode
        summary.append((f"{script} {' '.join(arguments)}".strip(), time.perf_counter() - started, code))
    print("\n=== summary")
    for name, seconds, code in summary:
        print(f"{'ok  ' if code == 0 else f'FAIL ({code})'} {seconds:8.1f} s  {name}")
    return 0 if all(code == 0 for _, _, code in summary) else 1


if __name__ == "__main__":
    raise SystemExit(main())
