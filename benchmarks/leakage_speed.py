"""Speed and memory of ``chemassay leakage`` as the training file grows.

For each size N a training file of N lines is written once under ``--work`` (MOSES training
molecules in file order, the split repeated when N exceeds it; gzipped), then ``python -m
chemassay leakage --train FILE ...`` runs in a child process: wall time, and the peak resident
memory of its process tree (the main process and its workers, summed, sampled every 0.2 s), with
the load average before and after (the machine may be shared). Memory should not grow with N:
the training side streams in chunks.

    python benchmarks/leakage_speed.py --sizes 20000,100000 --exact-only --quick --n-jobs 2
    python benchmarks/leakage_speed.py --sizes 1584663 --n-jobs 2                 # MOSES train vs every suite
    python benchmarks/leakage_speed.py --sizes 100000,10000000 --quick --exact-only --n-jobs 2
    python benchmarks/leakage_speed.py --table
    python benchmarks/leakage_speed.py --check-filter 200000 --n-jobs 2

``--check-filter N`` proves the InChIKey filter on real data: the first N MOSES training
molecules, variants of every 20th test molecule (a random spelling, the Kekule form, without
stereo, stereo inverted, protonated or deprotonated, deuterated), the molecules of USPTO-15K's
training reactions and the solubility set's training molecules, keyed with and without the
filter against the molecule test sets of every suite: the InChIKey and skeleton matches (training
molecule, key), the readable molecules and the unreadable ones' reasons must be identical
(``leakage_filter_check``).
"""

from __future__ import annotations

import argparse
import gzip
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generation_common import _tree_sample  # noqa: E402 - the summed RSS of a process tree, as the generation benchmarks measure it

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from committed import Clock, read_summary, write_summary  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def training_file(folder: Path, size: int) -> Path:
    """N MOSES training molecules (the split repeated as needed), gzipped, made once."""
    path = folder / f"moses_train_{size}.smi.gz"
    if path.is_file():
        return path
    from chemassay.suites.generation.data import load_moses

    train = load_moses(part="train")
    temporary = path.with_suffix(".part")
    with gzip.open(temporary, "wt", encoding="utf-8", compresslevel=1) as handle:
        written = 0
        while written < size:
            take = train[: size - written]
            handle.write("\n".join(take) + "\n")
            written += len(take)
    temporary.rename(path)
    return path


def measure(path: Path, size: int, args: argparse.Namespace, out: Path) -> dict:
    command = [sys.executable, "-m", "chemassay", "--quiet", "--no-store", "leakage", "--train", str(path),
               "--n-jobs", str(args.n_jobs), "--chunk-lines", str(args.chunk_lines), "--out", str(out)]
    if args.quick:
        command.append("--quick")
    if args.exact_only:
        command.append("--exact-only")
    for suite in args.suites.split(",") if args.suites else []:
        command += ["--suites", suite]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    load_before = os.getloadavg()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    peak = [0]
    loads: list[float] = []

    def sample() -> None:
        while child.poll() is None:
            peak[0] = max(peak[0], _tree_sample(child.pid, {}))
            loads.append(os.getloadavg()[0])
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    code = child.wait()
    sampler.join()
    wall = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the child and its reaped workers
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    if code != 0:
        raise SystemExit(f"chemassay leakage exited with {code} for {size:,} lines")
    from chemassay.leaks import read_report

    report = read_report(out)
    return {"lines": size, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "peak_rss_mib": round(peak[0] / 2**20),
            "load_average_during": [round(min(loads), 2), round(sum(loads) / len(loads), 2), round(max(loads), 2)]
            if loads else None, "niceness": os.nice(0),
            "index_s": report["timing"]["index_s"], "chunks": report["timing"]["chunks"],
            "test_items": sum(t["n"] for t in report["tasks"]), "tasks": len(report["tasks"]),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "exact": {f"{t['suite']}/{t['task']}": t["exact"] for t in report["tasks"]}}


def _variants(smiles: str, seed: int) -> list[str]:
    """Spellings and forms of one test molecule that share its InChIKey or its skeleton."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return []
    out = [Chem.MolToSmiles(mol, doRandom=True, canonical=False), Chem.MolToSmiles(mol, kekuleSmiles=True),
           Chem.MolToSmiles(mol, isomericSmiles=False)]
    inverted = Chem.Mol(mol)
    flipped = False
    for atom in inverted.GetAtoms():
        tag = atom.GetChiralTag()
        if tag in (Chem.ChiralType.CHI_TETRAHEDRAL_CW, Chem.ChiralType.CHI_TETRAHEDRAL_CCW):
            atom.InvertChirality()
            flipped = True
    if flipped:
        out.append(Chem.MolToSmiles(inverted))
    charged = Chem.RWMol(mol)
    for atom in charged.GetAtoms():  # the first O-H deprotonated, or the first amine N protonated
        if atom.GetSymbol() == "O" and atom.GetTotalNumHs() and not atom.GetFormalCharge():
            atom.SetFormalCharge(-1)
            atom.SetNumExplicitHs(atom.GetTotalNumHs() - 1)
            atom.SetNoImplicit(True)
            break
        if atom.GetSymbol() == "N" and not atom.GetIsAromatic() and not atom.GetFormalCharge() and all(
                b.GetBondType() == Chem.BondType.SINGLE for b in atom.GetBonds()):
            atom.SetFormalCharge(1)
            atom.SetNumExplicitHs(atom.GetTotalNumHs() + 1)
            atom.SetNoImplicit(True)
            break
    try:
        Chem.SanitizeMol(charged)
        out.append(Chem.MolToSmiles(charged))
    except Exception:  # noqa: S110 - a (de)protonation RDKit rejects is no variant: the others still are
        pass
    heavy = Chem.AddHs(mol)
    hydrogens = [atom for atom in heavy.GetAtoms() if atom.GetAtomicNum() == 1]
    if hydrogens:
        hydrogens[seed % len(hydrogens)].SetIsotope(2)
        out.append(Chem.MolToSmiles(Chem.RemoveHs(heavy)))
    return out


def _key_both(job: tuple[list[str], frozenset[int] | None]):
    from chemassay.leaks.keys import molecule_keys

    texts, candidates = job
    started = time.process_time()
    full = molecule_keys(texts, fingerprints=False)
    full_s = time.process_time() - started
    started = time.process_time()
    filtered = molecule_keys(texts, fingerprints=False, candidates=candidates)
    return full, filtered, full_s, time.process_time() - started


def check_filter(lines: int, n_jobs: int) -> dict:
    """Full and filtered exact keys of real training molecules against every suite's molecule
    test sets: the matches must be identical."""
    from chemassay.data.readers import iter_lines
    from chemassay.data.registry import dataset_file
    from chemassay.leaks import MOLECULE, suite_test_sets
    from chemassay.leaks.audit import build_index
    from chemassay.runtime.parallel import Failure, parallel_map
    from chemassay.suites.generation.data import load_moses
    from chemassay.suites.robustness.leakage import solubility_training

    sets = [s for s in suite_test_sets(["generation", "robustness"], n_jobs=n_jobs) if s.kind == MOLECULE]
    started = time.perf_counter()
    index = build_index(sets, near=False, n_jobs=n_jobs).kinds[MOLECULE]
    index_s = time.perf_counter() - started
    assert index.graph_keys is not None, "a test molecule turned the filter off"
    sources: dict[str, list[str]] = {"moses train": load_moses(part="train", limit=lines)}
    sources["test molecule variants"] = [v for i, t in enumerate(index.texts[::20]) for v in _variants(t, i)]
    uspto = {m for _, line in iter_lines(dataset_file("uspto-15k", "train.txt.gz")) if line.strip()
             for side in line.split()[0].split(">") for m in side.split(".") if m}
    sources["USPTO-15K reaction molecules"] = sorted(uspto)
    sources["solubility training"] = solubility_training()
    texts = [t for items in sources.values() for t in items]
    step = 5000
    pieces = [texts[i:i + step] for i in range(0, len(texts), step)]
    results = parallel_map(_key_both, [(piece, index.graph_keys) for piece in pieces], n_jobs=n_jobs, chunk_size=1,
                           description="keying", show_progress=False)
    hits: dict[str, dict[str, set]] = {"full": {"inchikey": set(), "skeleton": set()},
                                       "filtered": {"inchikey": set(), "skeleton": set()}}
    same_ok = same_errors = True
    computed = full_s = filtered_s = 0.0
    for number, result in enumerate(results):
        if isinstance(result, Failure):
            raise RuntimeError(str(result))
        full, filtered, seconds_full, seconds_filtered = result
        full_s += seconds_full
        filtered_s += seconds_filtered
        same_ok &= bool((full.ok == filtered.ok).all())
        same_errors &= full.errors == filtered.errors
        computed += sum(key is not None for key in filtered.keys["inchikey"])
        for label, keyed in (("full", full), ("filtered", filtered)):
            for name in ("inchikey", "skeleton"):
                lookup = index.lookups[name]
                hits[label][name] |= {(number * step + i, key) for i, key in enumerate(keyed.keys[name])
                                      if key and key in lookup}
    identical = same_ok and same_errors and all(hits["full"][n] == hits["filtered"][n] for n in ("inchikey", "skeleton"))
    exact_rows = {row for row, _ in hits["full"]["inchikey"]}
    return {"training": {name: len(items) for name, items in sources.items()}, "training_total": len(texts),
            "test_molecules": len(index.texts), "test_sets": [f"{s.suite}/{s.task}" for s in sets],
            "index_s": round(index_s, 1), "identical": identical, "same_readable": same_ok,
            "same_unreadable_reasons": same_errors,
            "inchikey_matches": {label: len(h["inchikey"]) for label, h in hits.items()},
            "skeleton_matches": {label: len(h["skeleton"]) for label, h in hits.items()},
            "skeleton_only_matches": len({row for row, _ in hits["full"]["skeleton"]} - exact_rows),
            "inchikeys_computed_filtered": int(computed), "cpu_ms_per_molecule": {
                "full": round(1000 * full_s / len(texts), 3), "filtered": round(1000 * filtered_s / len(texts), 3)},
            "load_average": [round(x, 2) for x in os.getloadavg()]}


def table(name: str) -> None:
    data = read_summary(name)
    setting = data["setting"]
    print(f"setting: n_jobs {setting['n_jobs']}, chunk lines {setting.get('chunk_lines', 50_000):,}, quick "
          f"{setting['quick']}, exact only {setting['exact_only']}, suites {setting['suites'] or 'all'}")
    print("| training lines | test items | wall s | CPU s | index s | peak memory MiB | load average (1 min: "
          "before/after; during: min-mean-max) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for row in data["rows"]:
        during = row.get("load_average_during")
        load = f"{row['load_average_before'][0]:.1f} / {row['load_average_after'][0]:.1f}"
        if during:
            load += f"; {during[0]:.1f}-{during[1]:.1f}-{during[2]:.1f}"
        cpu = f"{row['cpu_s']:,.0f}" if "cpu_s" in row else "-"
        print(f"| {row['lines']:,} | {row['test_items']:,} | {row['wall_s']:,.0f} | {cpu} | {row['index_s']:,.0f} | "
              f"{row['peak_rss_mib']:,} | {load} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,100000")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--chunk-lines", type=int, default=50_000)
    parser.add_argument("--quick", action="store_true", help="the suites' quick test sets")
    parser.add_argument("--exact-only", action="store_true")
    parser.add_argument("--suites", help="comma-separated suites (default: every suite that declares test sets)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "chemassay-leakage-speed")
    parser.add_argument("--name", default="leakage_speed", help="the committed summary's name")
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--check-filter", type=int, metavar="N",
                        help="prove the InChIKey filter on N MOSES training molecules and more (see above)")
    args = parser.parse_args()
    if args.check_filter:
        clock = Clock()
        result = check_filter(args.check_filter, args.n_jobs)
        print(result, file=sys.stderr)
        write_summary("leakage_filter_check", result, clock=clock)
        if not result["identical"]:
            raise SystemExit("the filtered keys differ from the full ones")
        return
    if args.table:
        table(args.name)
        return
    args.work.mkdir(parents=True, exist_ok=True)
    clock = Clock()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        path = training_file(args.work, size)
        rows.append(measure(path, size, args, args.work / f"out-{size}"))
        print(rows[-1], file=sys.stderr, flush=True)
    setting = {"n_jobs": args.n_jobs, "quick": args.quick, "exact_only": args.exact_only, "suites": args.suites,
               "chunk_lines": args.chunk_lines}
    write_summary(args.name, {"rows": rows, "setting": setting}, clock=clock, packages=("torch", "psutil"))
    table(args.name)


if __name__ == "__main__":
    main()
