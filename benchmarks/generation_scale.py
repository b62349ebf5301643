"""How the MOSES metrics scale: 100,000, 300,000 and 1,000,000 generated SMILES.

For each size the input (real MOSES training molecules, 10 % with one random character
edit, 5 % repeats; written once as a gzipped list) is scored by ``chemassay generation
evaluate FILE --work-dir DIR`` in a child process: wall time, CPU time and peak resident
memory of its process tree (sampled every 0.2 s), the stage timings and whether IntDiv was
exact or estimated. With ``--reference`` the MOSES reference (molsets 0.3.1, see
``generation_common.py``) gets the same input under a time and memory limit
(``--reference-timeout``, ``--reference-max-gib``): the script reports where it stopped
(finished, or killed at that time and memory). The table ends with how the cost grows
(exponent of time against size between successive sizes) and the load average, since the
machine may be shared.

    python benchmarks/generation_scale.py --sizes 100000,300000,1000000
    python benchmarks/generation_scale.py --sizes 100000 --reference --reference-timeout 3600
    python benchmarks/generation_scale.py --sizes 200000 --resume-check --kill-after 600
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from generation_common import (  # noqa: E402
    REFERENCE_RUNNER,
    ROOT,
    ensure_reference_venv,
    load_average,
    with_edits,
)


def build_input(n: int, path: Path, seed: int = 0) -> Path:
    """``n`` SMILES from the MOSES training split with the edits of ``sample_smiles``."""
    if path.exists():
        return path
    import pandas as pd

    from chemassay.data import dataset_file

    rng = random.Random(seed)
    pool = pd.read_csv(dataset_file("moses", "train.csv.gz"))["SMILES"].tolist()
    base = rng.sample(pool, min(n, len(pool)))
    while len(base) < n:  # past the 1.58M training molecules: draw again
        base.append(rng.choice(pool))
    out = with_edits(base, rng)
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(out) + "\n")
    tmp.replace(path)
    return path


def watched(command: list[str], *, env=None, timeout: float | None = None, max_bytes: float | None = None,
            kill_after: float | None = None) -> dict:
    """Run ``command``; wall, CPU and peak RSS of its tree; stop it past ``timeout`` seconds or
    ``max_bytes`` resident (status ``timeout``/``memory``), or after ``kill_after`` seconds
    (status ``killed``, for the resume check)."""
    import psutil

    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    state = {"peak": 0, "cpu": {}, "status": "finished"}
    done = threading.Event()

    def stop(status: str) -> None:
        state["status"] = status
        try:
            parent = psutil.Process(process.pid)
            for child in parent.children(recursive=True):
                child.kill()
            parent.kill()
        except psutil.Error:  # the process ended between listing and reading it
            pass

    def sample() -> None:
        while not done.is_set():
            try:
                parent = psutil.Process(process.pid)
                tree = [parent] + parent.children(recursive=True)
                rss = 0
                for proc in tree:
                    try:
                        rss += proc.memory_info().rss
                        times = proc.cpu_times()
                        state["cpu"][proc.pid] = times.user + times.system
                    except psutil.Error:  # the process ended between listing and reading it
                        pass
                state["peak"] = max(state["peak"], rss)
                elapsed = time.perf_counter() - start
                if max_bytes is not None and rss > max_bytes:
                    stop("memory")
                elif timeout is not None and elapsed > timeout:
                    stop("timeout")
                elif kill_after is not None and elapsed > kill_after:
                    stop("killed")
            except psutil.Error:  # the process ended between listing and reading it
                pass
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    done.set()
    sampler.join()
    status = state["status"] if state["status"] != "finished" or process.returncode == 0 else f"failed ({process.returncode})"
    return {"wall_s": time.perf_counter() - start, "cpu_s": sum(state["cpu"].values()), "peak_bytes": state["peak"],
            "status": status, "stderr": stderr[-2000:], "stdout": stdout[-2000:]}


def run_chemassay(path: Path, work: Path, out: Path, args, kill_after: float | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-m", "chemassay", "--quiet", "generation", "evaluate", str(path), "--out", str(out),
               "--no-plot", "--bootstrap", str(args.bootstrap), "--n-jobs", str(args.n_jobs),
               "--threads", str(args.threads), "--work-dir", str(work), "--chunk-rows", str(args.chunk_rows)]
    run = watched(command, env=env, kill_after=kill_after)
    if run["status"] == "finished":
        result = json.loads(out.read_text())
        details = result.get("details") or {}
        run.update(timings=details.get("timings_s"), intdiv=result["config"].get("intdiv"),
                   resumed=details.get("resumed_chunks", 0), metrics=result["metrics"], counts=details.get("counts"))
    return run


def run_reference(path: Path, python: Path, args) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        gen = [line.strip() for line in gzip.open(path, "rt", encoding="utf-8") if line.strip()]
        gen_path = Path(tmp) / "gen.json"
        gen_path.write_text(json.dumps(gen))
        del gen
        out = Path(tmp) / "out.json"
        run = watched([str(python), "-c", REFERENCE_RUNNER, str(gen_path), str(out), str(args.n_jobs),
                       str(args.threads)], timeout=args.reference_timeout, max_bytes=args.reference_max_gib * 2**30)
        if run["status"] == "finished" and out.exists():
            run["metrics"] = json.loads(out.read_text())["metrics"]
    return run


def _row(size: int, tool: str, run: dict) -> str:
    gib = run["peak_bytes"] / 2**30
    per = 1000 * run["wall_s"] / size
    extra = f" IntDiv {run['intdiv']}" if run.get("intdiv") else ""
    return (f"{size:>9,} {tool:<10} {run['wall_s']:>9.0f} {run['cpu_s']:>9.0f} {gib:>8.2f} {per:>9.2f}  "
            f"{run['status']}{extra}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,300000,1000000")
    parser.add_argument("--data-dir", default=str(Path(tempfile.gettempdir()) / "chemassay-generation-scale"))
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--chunk-rows", type=int, default=50000)
    parser.add_argument("--reference", action="store_true", help="also run the MOSES reference on each size")
    parser.add_argument("--skip-chemassay", action="store_true", help="run the reference only")
    parser.add_argument("--reference-timeout", type=float, default=3 * 3600)
    parser.add_argument("--reference-max-gib", type=float, default=20.0)
    parser.add_argument("--venv", default=str(Path(tempfile.gettempdir()) / "moses-ref"))
    parser.add_argument("--resume-check", action="store_true",
                        help="kill each chemassay run after --kill-after seconds, then run it again (it resumes)")
    parser.add_argument("--kill-after", type=float, default=120.0)
    args = parser.parse_args(argv)

    data = Path(args.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"sizes {sizes}, n_jobs={args.n_jobs}, threads={args.threads}, load average {load_average():.1f}", flush=True)
    print(f"{'SMILES':>9} {'tool':<10} {'wall s':>9} {'CPU s':>9} {'peak GiB':>8} {'ms/1k':>9}  status", flush=True)
    timings: dict[str, list[tuple[int, float]]] = {"chemassay": [], "moses": []}
    loads = [load_average()]
    for size in sizes:
        path = build_input(size, data / f"gen-{size}.txt.gz")
        work = data / f"work-{size}"
        if work.exists():
            import shutil

            shutil.rmtree(work)
        out = data / f"result-{size}.json"
        run = {"status": "skipped"}
        if args.resume_check and not args.skip_chemassay:
            first = run_chemassay(path, work, out, args, kill_after=args.kill_after)
            print(_row(size, "chemassay", first), flush=True)
        if not args.skip_chemassay:
            run = run_chemassay(path, work, out, args)
            loads.append(load_average())
            print(_row(size, "chemassay", run) + (f" (resumed {run.get('resumed')} chunks)" if run.get("resumed") else ""),
                  flush=True)
            if run.get("timings"):
                print("          stages: " + ", ".join(f"{k} {v:.0f} s" for k, v in run["timings"].items()), flush=True)
            if run["status"] == "finished":
                timings["chemassay"].append((size, run["wall_s"]))
        if args.reference:
            python = ensure_reference_venv(Path(args.venv), quiet=True)
            ref = run_reference(path, python, args)
            loads.append(load_average())
            print(_row(size, "moses", ref), flush=True)
            if ref["status"] == "finished":
                timings["moses"].append((size, ref["wall_s"]))
                if run["status"] == "finished":
                    print(f"          MOSES / chemassay wall: {ref['wall_s'] / run['wall_s']:.1f}x", flush=True)
    for tool, points in timings.items():
        for (n0, t0), (n1, t1) in zip(points, points[1:], strict=False):
            print(f"{tool}: time grows as size^{math.log(t1 / t0) / math.log(n1 / n0):.2f} from {n0:,} to {n1:,}")
    print(f"load average during the runs: {min(loads):.1f} to {max(loads):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
