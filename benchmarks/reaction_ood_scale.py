"""Throughput and peak memory of the reaction-ood data pipeline at scale (clean, split, verify).

Builds a large synthetic reaction table from the real Schneider 50k reactions: copy ``k`` of
the set writes every molecule in one of a few RDKit-randomized SMILES spellings (so text caches
cannot shortcut the work) and adds an alcohol with ``k`` carbons as a reagent (so every copy's
reactions are distinct reactions, as in a real 3M-reaction set), with document ids made
distinct per copy. Then it times each stage and samples the resident memory of the whole
process tree (the parent and its worker processes) every 0.1 s.

    python benchmarks/reaction_ood_scale.py --n 3000000 --jobs 16      # the issue's scale
    python benchmarks/reaction_ood_scale.py --n 200000 --jobs 2        # a quick look
    python benchmarks/reaction_ood_scale.py --n 200000 --stages split,verify --split-n 3000000

Prints one line per stage: rows, seconds, reactions/s and peak memory (MiB). Figures are noisy
on a shared machine: re-run on a quiet one.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import threading
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
if SRC.is_dir() and str(SRC) not in sys.path:
    sys.path.insert(0, str(SRC))


class PeakMemory:
    """Samples the memory of this process and its children in a thread.

    Uses the proportional set size (PSS: shared pages split between the processes that share
    them, so forked workers are not double counted) when psutil can read it, else RSS.
    Records the peak over the first and the second half of the run: a flat second half shows
    memory bounded independently of the input size.
    """

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.kind = "rss"

    def _sample(self) -> int:
        try:
            import psutil
        except ImportError:
            import resource

            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        me = psutil.Process()
        total = 0
        for process in [me, *me.children(recursive=True)]:
            try:
                try:
                    total += process.memory_full_info().pss
                    self.kind = "pss"
                except (AttributeError, psutil.AccessDenied):
                    total += process.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), self._sample()))
            self._stop.wait(self.interval)

    def __enter__(self) -> PeakMemory:
        self.samples = [(time.perf_counter(), self._sample())]
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.samples.append((time.perf_counter(), self._sample()))

    @property
    def peak(self) -> int:
        return max(value for _, value in self.samples)

    def halves(self) -> tuple[int, int]:
        """Peak memory over the first and over the second half of the run."""
        start, end = self.samples[0][0], self.samples[-1][0]
        middle = (start + end) / 2
        first = [v for t, v in self.samples if t <= middle] or [0]
        second = [v for t, v in self.samples if t > middle] or [0]
        return max(first), max(second)


def report(stage: str, rows: int, seconds: float, memory: PeakMemory, extra: str = "") -> None:
    rate = rows / seconds if seconds > 0 else float("nan")
    first, second = memory.halves()
    print(f"{stage:<16} rows={rows:>9}  time={seconds:9.1f} s  rate={rate:10.1f} reactions/s  "
          f"peak_{memory.kind}={memory.peak / 2**20:6.0f} MiB (1st half {first / 2**20:.0f}, "
          f"2nd half {second / 2**20:.0f})  {extra}", flush=True)


def build_large_clean(clean: Path, n: int, path: Path) -> int:
    """A cleaned-table look-alike of ``n`` distinct reactions, by repeating a cleaned table.

    Copy ``k`` appends an isotope-labelled methane ``[kCH4]`` to the reactants (a distinct
    reaction: cleaned tables hold no isotope labels) and makes the document ids distinct; no RDKit
    work, so splits and verify can be measured at 3M rows.
    Written in row groups, so building it needs little memory.
    """
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = pd.read_parquet(clean)
    writer = None
    written = 0
    k = 0
    try:
        while written < n:
            part = base.iloc[: n - written].copy()
            if k:
                part["reactants"] = part["reactants"] + f".[{k}CH4]"
                part["rxn_smiles"] = part["reactants"] + ">>" + part["products"]
                part["document_id"] = part["document_id"].astype(object).map(
                    lambda d, k=k: None if d is None else f"{d}-x{k}")
            table = pa.Table.from_pandas(part, preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table.cast(writer.schema))
            written += len(part)
            k += 1
    finally:
        if writer is not None:
            writer.close()
    return written


def build_synthetic(n: int, path: Path, variants: int = 4) -> None:
    """Write ``n`` reactions (CSV: rxn_smiles, document_id, year, class_code) made from Schneider 50k."""
    from rdkit import Chem, RDLogger

    from chemassay.suites.reaction_ood.io import read_schneider_50k

    RDLogger.DisableLog("rdApp.*")
    base = read_schneider_50k()
    spellings: dict[str, list[str]] = {}

    def spelling(smiles: str, k: int) -> str:
        index = k % variants
        if index == 0:
            return smiles
        known = spellings.get(smiles)
        if known is None:
            mol = Chem.MolFromSmiles(smiles)
            known = [smiles] + ([Chem.MolToSmiles(mol, doRandom=True, canonical=False) for _ in range(variants - 1)]
                                if mol is not None else [smiles] * (variants - 1))
            spellings[smiles] = known
        return known[index]

    rxns = base["rxn_smiles"].tolist()
    docs = base["document_id"].fillna("").tolist()
    years = base["year"].astype(object).where(base["year"].notna(), "").tolist()
    classes = base["class_code"].fillna("").tolist()
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["rxn_smiles", "document_id", "year", "class_code"])
        for i in range(n):
            k, j = divmod(i, len(rxns))
            left, right = rxns[j].split(">>")
            reactants = [spelling(m, k) for m in left.split(".")]
            if k:
                reactants.append("C" * k + "O")
            products = [spelling(m, k) for m in right.split(".")]
            document = docs[j] if k == 0 else f"{docs[j]}-{k}"
            writer.writerow([".".join(reactants) + ">>" + ".".join(products), document, years[j], classes[j]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000, help="reactions in the synthetic set")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for cleaning")
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--scheduler", default=None, help="Dask scheduler (e.g. dask-local)")
    parser.add_argument("--workdir", type=Path, default=Path("bench-reaction-ood"))
    parser.add_argument("--stages", default="generate,clean,split,verify")
    parser.add_argument("--split-n", type=int, default=None,
                        help="split and verify a cleaned table of this many reactions, made by repeating "
                             "the cleaned synthetic set (e.g. 3000000: the issue's scale, no RDKit work)")
    args = parser.parse_args()
    stages = set(args.stages.split(","))
    args.workdir.mkdir(parents=True, exist_ok=True)
    raw = args.workdir / f"synthetic_{args.n}.csv"
    clean = args.workdir / f"synthetic_{args.n}.clean.parquet"
    print(f"reaction-ood scale benchmark: n={args.n}, jobs={args.jobs}, chunk_rows={args.chunk_rows}, "
          f"scheduler={args.scheduler}, cpus={os.cpu_count()}", flush=True)

    if "generate" in stages or ("clean" in stages and not raw.exists()):
        started = time.perf_counter()
        with PeakMemory() as memory:
            build_synthetic(args.n, raw)
        report("generate", args.n, time.perf_counter() - started, memory, f"({raw.stat().st_size / 2**20:.0f} MiB CSV)")

    if "clean" in stages:
        from chemassay.suites.reaction_ood.clean import clean_file

        started = time.perf_counter()
        with PeakMemory() as memory:
            outcome = clean_file(raw, clean, n_jobs=args.jobs, scheduler=args.scheduler,
                                 chunk_rows=args.chunk_rows, show_progress=False)
        counts = outcome.counts()
        report("clean", counts["rows_in"], time.perf_counter() - started, memory,
               f"(kept {counts['rows_out']}, duplicates {counts['duplicates']}, unparsable {counts['unparsable']})")

    if args.split_n:
        large = args.workdir / f"clean_{args.split_n}.parquet"
        if not large.exists():
            started = time.perf_counter()
            with PeakMemory() as memory:
                rows = build_large_clean(clean, args.split_n, large)
            report("build clean", rows, time.perf_counter() - started, memory, f"({large.stat().st_size / 2**20:.0f} MiB)")
        clean = large

    if "split" in stages or "verify" in stages:
        from chemassay.suites.reaction_ood.split_files import split_file
        from chemassay.suites.reaction_ood.verify import verify_split_dir

        plans = {
            "random": {"train": 0.9, "valid": 0.05, "test": 0.05},
            "document": {"test_ood": 0.05, "valid": 0.02, "test": 0.05},
            "time": {"cutoff_years": [1996, 2000, 2004, 2008, 2012], "test_size": 3000},
        }
        for kind, config in plans.items():
            folder = args.workdir / f"split_{kind}_{args.split_n or args.n}"
            if "split" in stages:
                started = time.perf_counter()
                with PeakMemory() as memory:
                    manifest = split_file(clean, folder, kind, config, seed=0, overwrite=True)
                report(f"split {kind}", manifest["input"]["rows"], time.perf_counter() - started, memory,
                       f"({len(manifest['parts'])} parts)")
            if "verify" in stages:
                started = time.perf_counter()
                with PeakMemory() as memory:
                    manifest, results = verify_split_dir(folder)
                failed = sum(not r.passed for r in results)
                report(f"verify {kind}", manifest["input"]["rows"], time.perf_counter() - started, memory,
                       f"({len(results)} checks, {failed} failed)")


if __name__ == "__main__":
    main()
