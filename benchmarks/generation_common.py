"""Shared pieces of the generation benchmarks: the MOSES reference in a throwaway venv,
sample sets, and wall-time / peak-memory measurement of a child process tree.

The reference (``molsets`` 0.3.1, i.e. ``moses.metrics.get_all_metrics``) is installed
without its (broken) dependency pins into a separate virtual environment, never into the
project's. By default that venv gets the same RDKit, NumPy, pandas, SciPy and torch
versions as the running interpreter, so a comparison isolates the implementations. Four
library APIs that molsets 0.3.1 still calls were removed since it was written; the runner
restores them as aliases before importing ``moses`` (``rdkit.six.iteritems``, ``np.NaN``,
``DataFrame.append`` as ``pd.concat``, and nothing else) — they change no arithmetic.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_PACKAGES = ("rdkit", "numpy", "pandas", "scipy", "matplotlib", "torch")

MOLSETS_SHIMS = r'''
import json, sys, time, types
six = types.ModuleType("rdkit.six")
six.iteritems = lambda d: iter(d.items())
sys.modules["rdkit.six"] = six
import rdkit
rdkit.six = six
import numpy as np
if not hasattr(np, "NaN"):
    np.NaN = np.nan
import pandas as pd
if not hasattr(pd.DataFrame, "append"):
    def _append(self, other, sort=False, **_):
        return pd.concat([self, other], sort=sort)
    pd.DataFrame.append = _append
tqdm = types.ModuleType("tqdm"); tqdm.auto = types.ModuleType("tqdm.auto")
tqdm.auto.tqdm = lambda iterable, **_: iterable
sys.modules["tqdm"] = tqdm; sys.modules["tqdm.auto"] = tqdm.auto
pomegranate = types.ModuleType("pomegranate")
pomegranate.HiddenMarkovModel = pomegranate.DiscreteDistribution = None
sys.modules["pomegranate"] = pomegranate
'''
"""The preamble of every script run in the reference venv: the library names molsets 0.3.1 still
imports (``rdkit.six``, ``np.NaN``, ``DataFrame.append``) restored as aliases, and stubs for
tqdm (progress bars, not installed with ``--no-deps``) and pomegranate (only the HMM baseline
uses it). None changes any arithmetic."""

REFERENCE_RUNNER = MOLSETS_SHIMS + r'''
import torch
torch.set_num_threads(int(sys.argv[4]))
from moses.metrics import get_all_metrics
gen = json.load(open(sys.argv[1]))
start = time.perf_counter()
metrics = get_all_metrics(gen, n_jobs=int(sys.argv[3]), device="cpu")
elapsed = time.perf_counter() - start
json.dump({"metrics": {k: float(v) for k, v in metrics.items()}, "elapsed_s": elapsed}, open(sys.argv[2], "w"))
'''

OURS_RUNNER = r'''
import json, sys, time
import torch
torch.set_num_threads(int(sys.argv[4]))
from chemassay.suites.generation.metrics import evaluate_samples
gen = json.load(open(sys.argv[1]))
start = time.perf_counter()
evaluation = evaluate_samples(gen, n_jobs=int(sys.argv[3]), device="cpu", show_progress=False)
elapsed = time.perf_counter() - start
json.dump({"metrics": {k: float(v) for k, v in evaluation.metrics.items()}, "elapsed_s": elapsed,
           "timings": evaluation.timings}, open(sys.argv[2], "w"))
'''


def _version(name: str) -> str:
    return metadata.version(name)


def ensure_reference_venv(path: Path, *, rdkit: str | None = None, quiet: bool = False) -> Path:
    """Create (once) a venv at ``path`` with molsets 0.3.1 and fcd_torch installed ``--no-deps``.

    Returns the venv's python. Library versions follow this interpreter's unless ``rdkit``
    names another RDKit release.
    """
    python = path / "bin" / "python"
    marker = path / ".chemassay-reference-ready"
    if marker.is_file():
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    pins = [f"{name}=={_version(name).split('+')[0]}" for name in REFERENCE_PACKAGES]
    if rdkit:
        pins = [p for p in pins if not p.startswith("rdkit==")] + [f"rdkit=={rdkit}"]
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check"] + (["-q"] if quiet else [])
    subprocess.run(pip + pins, check=True)
    subprocess.run(pip + ["--no-deps", "molsets==0.3.1", f"fcd_torch=={_version('fcd_torch')}"], check=True)
    marker.write_text("ok\n")
    return python


def _tree_sample(pid: int, cpu_seen: dict[int, float]) -> int:
    """Summed RSS of ``pid`` and its descendants now; records each one's CPU seconds so far
    in ``cpu_seen`` (workers reaped by a fork server never reach our ``getrusage``)."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil ships with dask here
        return 0
    try:
        parent = psutil.Process(pid)
        processes = [parent] + parent.children(recursive=True)
    except psutil.Error:
        return 0
    total = 0
    for process in processes:
        try:
            total += process.memory_info().rss
            times = process.cpu_times()
            cpu_seen[process.pid] = times.user + times.system
        except psutil.Error:
            pass
    return total


def run_measured(
    command: list[str], env: dict[str, str] | None = None
) -> tuple[float, int, float, subprocess.CompletedProcess]:
    """Run ``command``; return wall seconds, peak summed RSS of its process tree (bytes,
    sampled every 0.1 s), CPU seconds of the tree (user + system: the larger of ``getrusage``
    of waited-for children and the sum of every descendant's CPU time last seen by the
    sampler, which also counts workers a fork server reaps; a load-independent companion to
    wall time on a shared machine) and the completed process."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = 0
    cpu_seen: dict[int, float] = {}
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_sample(process.pid, cpu_seen))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    done.set()
    sampler.join()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = max((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), sum(cpu_seen.values()))
    return wall, peak, cpu, subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def run_tool(tool: str, python: str, gen: list[str], *, n_jobs: int, threads: int, src: str | None = None) -> dict:
    """Run the reference (``tool="moses"``) or chemassay on ``gen`` in a child process
    (``src``: another chemassay source tree, e.g. an older checkout, instead of this one)."""
    with tempfile.TemporaryDirectory() as tmp:
        gen_path = Path(tmp) / "gen.json"
        out_path = Path(tmp) / "out.json"
        gen_path.write_text(json.dumps(gen))
        runner = REFERENCE_RUNNER if tool == "moses" else OURS_RUNNER
        env = dict(os.environ)
        if tool != "moses":
            env["PYTHONPATH"] = str(src or ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
        wall, peak, cpu, done = run_measured(
            [python, "-c", runner, str(gen_path), str(out_path), str(n_jobs), str(threads)], env=env
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed:\n{done.stderr[-4000:]}")
        result = json.loads(out_path.read_text())
    result.update(wall_s=wall, peak_rss_bytes=peak, cpu_s=cpu)
    return result


def load_average() -> float:
    """The 1-minute load average (how busy the machine was; 0.0 where unknown)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0


COMPETITOR = "import time\nend = time.time() + float(__import__('sys').argv[1])\nx = 0\nwhile time.time() < end:\n    x += 1\n"


def start_competitor(seconds: float = 36000.0) -> subprocess.Popen:
    """One CPU-bound process (a busy Python loop) competing for a core until stopped."""
    return subprocess.Popen([sys.executable, "-c", COMPETITOR, str(seconds)])


def sample_smiles(n: int, seed: int = 0) -> list[str]:
    """A realistic-looking generated set from real MOSES molecules: 85% training-set
    molecules, 10% of them with one random character edit (many invalid, some novel valid
    molecules) and 5% repeats, shuffled with ``seed``."""
    import pandas as pd

    from chemassay.data import dataset_file

    rng = random.Random(seed)
    pool = pd.read_csv(dataset_file("moses", "train.csv.gz"), nrows=200_000)["SMILES"].tolist()
    return with_edits(rng.sample(pool, n), rng)


def with_edits(base: list[str], rng: random.Random) -> list[str]:
    """``base`` with every 10th molecule given one random character edit and every 20th
    replaced by a repeat of an earlier one, shuffled with ``rng``."""
    alphabet = "CNOcnos()=#123[]+-FClBr"
    out: list[str] = []
    for i, smiles in enumerate(base):
        if i % 20 == 0 and out:
            out.append(rng.choice(out))
        elif i % 10 == 1:
            position = rng.randrange(len(smiles))
            out.append(smiles[:position] + rng.choice(alphabet) + smiles[position + 1:])
        else:
            out.append(smiles)
    rng.shuffle(out)
    return out


def read_gen_file(path: str) -> list[str]:
    """SMILES from a text/CSV file, read the way ``chemassay generation evaluate`` reads them."""
    sys.path.insert(0, str(ROOT / "src"))
    from chemassay.data.readers import read_smiles_file

    return read_smiles_file(path).smiles
