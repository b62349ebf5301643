"""Reference samples of the baselines trained here, their MOSES scores, and the paper's tables.

``data/reference_samples/`` (inside the package) holds, for every baseline trained and
sampled by ``benchmarks/generation_reproduce_tables.py``, the 30,000 molecules drawn with
seeds 0, 1 and 2 (``{model}_s{seed}.txt.gz``, one SMILES per line, as drawn: invalid
strings included) and ``scores.json``: one published-style row per model and seed
(``{"model", "seed", "metrics", "n", "config", "training", "hardware", "label", ...}``),
the MOSES metrics of those samples as ``chemassay generation evaluate`` computes them. A user
compares a model with them without retraining anything::

    chemassay generation evaluate "$(python -c 'from chemassay.suites.generation.baselines.reference_samples
    import sample_path; print(sample_path("charrnn", 0))')"

:data:`PAPER_TABLES` are the MOSES paper's Tables 1–4 (mean ± standard deviation over three
seeds), keyed by the paper's model names and chemassay's metric keys.
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import read_result
from chemassay.report.published import Paper, PublishedRecord, PublishedValue
from chemassay.runtime.files import atomic_write_bytes, atomic_write_text

FOLDER = Path(__file__).resolve().parents[1] / "data" / "reference_samples"
SCORES_FILE = FOLDER / "scores.json"
FORMAT = "chemassay.generation.reference-samples/1"

_COLUMNS = ["valid", "unique@1000", "unique@10000", "Filters", "Novelty", "IntDiv", "IntDiv2", "FCD/Test",
            "FCD/TestSF", "SNN/Test", "SNN/TestSF", "Frag/Test", "Frag/TestSF", "Scaf/Test", "Scaf/TestSF"]
# MOSES paper (Polykovskiy et al. 2020), Tables 1-4, in the column order above.
_PAPER = {
    "Train": "1.0|1.0|1.0|1.0|0.0|0.857|0.851|0.008|0.476|0.642|0.586|1.0|0.999|0.991|0.0",
    "HMM": "0.076 ± 0.0322|0.623 ± 0.1224|0.5671 ± 0.1424|0.9024 ± 0.0489|0.9994 ± 0.001|0.8466 ± 0.0403|"
           "0.8104 ± 0.0507|24.4661 ± 2.5251|25.4312 ± 2.5599|0.3876 ± 0.0107|0.3795 ± 0.0107|0.5754 ± 0.1224|"
           "0.5681 ± 0.1218|0.2065 ± 0.0481|0.049 ± 0.018",
    "NGram": "0.2376 ± 0.0025|0.974 ± 0.0108|0.9217 ± 0.0019|0.9582 ± 0.001|0.9694 ± 0.001|0.8738 ± 0.0002|"
             "0.8644 ± 0.0002|5.5069 ± 0.1027|6.2306 ± 0.0966|0.5209 ± 0.001|0.4997 ± 0.0005|0.9846 ± 0.0012|"
             "0.9815 ± 0.0012|0.5302 ± 0.0163|0.0977 ± 0.0142",
    "Combinatorial": "1.0 ± 0.0|0.9983 ± 0.0015|0.9909 ± 0.0009|0.9557 ± 0.0018|0.9878 ± 0.0008|"
                     "0.8732 ± 0.0002|0.8666 ± 0.0002|4.2375 ± 0.037|4.5113 ± 0.0274|0.4514 ± 0.0003|"
                     "0.4388 ± 0.0002|0.9912 ± 0.0004|0.9904 ± 0.0003|0.4445 ± 0.0056|0.0865 ± 0.0027",
    "CharRNN": "0.975 ± 0.026|1.0 ± 0.0|0.999 ± 0.0|0.994 ± 0.003|0.842 ± 0.051|0.856 ± 0.0|0.85 ± 0.0|"
               "0.073 ± 0.025|0.52 ± 0.038|0.601 ± 0.021|0.565 ± 0.014|1.0 ± 0.0|0.998 ± 0.0|0.924 ± 0.006|"
               "0.11 ± 0.008",
    "VAE": "0.977 ± 0.001|1.0 ± 0.0|0.998 ± 0.001|0.997 ± 0.0|0.695 ± 0.007|0.856 ± 0.0|0.85 ± 0.0|0.099 ± 0.013|"
           "0.567 ± 0.034|0.626 ± 0.0|0.578 ± 0.001|0.999 ± 0.0|0.998 ± 0.0|0.939 ± 0.002|0.059 ± 0.01",
    "AAE": "0.937 ± 0.034|1.0 ± 0.0|0.997 ± 0.002|0.996 ± 0.001|0.793 ± 0.028|0.856 ± 0.003|0.85 ± 0.003|"
           "0.556 ± 0.203|1.057 ± 0.237|0.608 ± 0.004|0.568 ± 0.005|0.991 ± 0.005|0.99 ± 0.004|0.902 ± 0.037|"
           "0.079 ± 0.009",
    "JTN-VAE": "1.0 ± 0.0|1.0 ± 0.0|0.9996 ± 0.0003|0.976 ± 0.0016|0.9143 ± 0.0058|0.8551 ± 0.0034|"
               "0.8493 ± 0.0035|0.3954 ± 0.0234|0.9382 ± 0.0531|0.5477 ± 0.0076|0.5194 ± 0.007|0.9965 ± 0.0003|"
               "0.9947 ± 0.0002|0.8964 ± 0.0039|0.1009 ± 0.0105",
    "LatentGAN": "0.897 ± 0.002|1.0 ± 0.0|0.997 ± 0.005|0.973 ± 0.001|0.949 ± 0.001|0.857 ± 0.0|0.85 ± 0.0|"
                 "0.296 ± 0.021|0.824 ± 0.030|0.538 ± 0.001|0.514 ± 0.009|0.999 ± 0.003|0.998 ± 0.003|"
                 "0.886 ± 0.015|0.1 ± 0.006",
}
PAPER_TABLES: dict[str, dict[str, str]] = {
    model: dict(zip(_COLUMNS, row.split("|"), strict=True)) for model, row in _PAPER.items()
}
"""The MOSES paper's Tables 1–4: model → metric key → ``"mean ± std"`` (Train: one value)."""

PAPER_NAMES = {"charrnn": "CharRNN", "vae": "VAE", "aae": "AAE", "latentgan": "LatentGAN", "hmm": "HMM",
               "ngram": "NGram", "combinatorial": "Combinatorial", "train": "Train"}


def paper_value(model: str, metric: str) -> tuple[float, float | None] | None:
    """The paper's (mean, std) of ``metric`` for ``model`` (a chemassay or paper name)."""
    row = PAPER_TABLES.get(PAPER_NAMES.get(model, model), {})
    text = row.get(metric)
    if text is None:
        return None
    mean, _, std = text.partition("±")
    return float(mean), (float(std) if std.strip() else None)


def sample_path(model: str, seed: int) -> Path:
    """The shipped 30,000 samples of ``model`` with ``seed`` (a gzipped SMILES file)."""
    path = FOLDER / f"{model}_s{seed}.txt.gz"
    if not path.is_file():
        shipped = sorted(p.name for p in FOLDER.glob("*.txt.gz")) if FOLDER.is_dir() else []
        raise UserInputError(f"no reference samples for {model} seed {seed}; shipped: {', '.join(shipped) or 'none'}")
    return path


def reference_rows() -> list[dict[str, Any]]:
    """The shipped scores: one row per model and seed (see the module docs)."""
    if not SCORES_FILE.is_file():
        return []
    payload = json.loads(SCORES_FILE.read_text(encoding="utf-8"))
    if payload.get("format") != FORMAT:
        raise UserInputError(f"{SCORES_FILE}: not a chemassay reference-samples file; reinstall chemassay")
    return list(payload["rows"])


RUNS_TABLE = "chemassay reference samples"


def reference_records() -> list[Any]:
    """The shipped runs as reference records beside the papers' (``published = False``): one
    :class:`~chemassay.report.published.PublishedRecord` per model, every MOSES metric as the
    mean ± standard deviation over its seeds, as the paper's Tables 1–4 print them
    (``chemassay reference list --suite generation --runs``)."""
    paper = Paper(key="chemassay-moses-runs", suite="generation", short="chemassay reference runs",
                  title="MOSES baselines trained and sampled by chemassay", authors="chemassay", year=2026,
                  citation="chemassay reference samples (chemassay/suites/generation/data/reference_samples)")
    by_model: dict[str, list[dict[str, Any]]] = {}
    for row in reference_rows():
        by_model.setdefault(row["model"], []).append(row)
    records = []
    for model, rows in by_model.items():
        metrics = {}
        for key in _COLUMNS:
            values = [float(r["metrics"][key]) for r in rows if r["metrics"].get(key) is not None]
            if not values:
                continue
            mean = statistics.fmean(values)
            std = statistics.stdev(values) if len(values) > 1 else None
            printed = f"{mean:.4g}" + (f" ± {std:.2g}" if std is not None else "")
            metrics[key] = PublishedValue(printed=printed, value=mean, std=std, label=key, paper_metric=key, key=key)
        seeds = sorted(r["seed"] for r in rows)
        label = f"{PAPER_NAMES.get(model, model)} (chemassay: {rows[0]['label']}; seeds {', '.join(map(str, seeds))})"
        records.append(PublishedRecord(
            paper=paper, table=RUNS_TABLE, caption="30,000 samples per seed, scored by chemassay generation evaluate",
            dataset="MOSES test and scaffold-test sets (the paper's data)", model=PAPER_NAMES.get(model, model),
            label=label, setting={}, metrics=metrics, spread="standard deviation over seeds",
            notes=(f"samples: {', '.join(r['samples'] for r in rows)}",), published=False, data="moses"))
    return records


def write_reference_samples(out: str | os.PathLike, models: list[str], seeds: list[int],
                            folder: str | os.PathLike | None = None) -> Path:
    """Copy the samples and scores of a ``generation_reproduce_tables`` run (``out``) into the
    package (or ``folder``): gzipped samples and one ``scores.json`` (merged with the rows
    already there for other models)."""
    source = Path(out)
    target = Path(folder) if folder is not None else FOLDER
    target.mkdir(parents=True, exist_ok=True)
    runs = runs_by_phase(source / "runs.jsonl")
    existing = []
    scores = target / "scores.json"
    if scores.is_file():
        existing = [r for r in json.loads(scores.read_text(encoding="utf-8"))["rows"] if r["model"] not in models]
    rows = []
    for model in models:
        for seed in seeds:
            samples = source / "samples" / f"{model}_s{seed}.txt"
            result_file = source / "scores" / f"{model}_s{seed}.json"
            if not samples.is_file() or not result_file.is_file():
                continue
            atomic_write_bytes(target / f"{model}_s{seed}.txt.gz", gzip.compress(samples.read_bytes(), 9, mtime=0))
            result = read_result(result_file)
            trained = runs.get(("train", model, seed), {})
            sampled = runs.get(("sample", model, seed), {})
            scored = runs.get(("score", model, seed), {})
            rows.append({
                "model": model, "paper_name": PAPER_NAMES.get(model, model), "seed": seed,
                "label": _label(model, trained),
                "samples": f"{model}_s{seed}.txt.gz", "n_samples": result.details.counts.input if result.details is not None else None,
                "metrics": {k: v for k, v in result.metrics.items()},
                "spec": sampled.get("spec"),
                "config": trained.get("config"), "training": trained.get("training"),
                "epochs_done": trained.get("epochs_done"),
                "train_cpu_s": trained.get("cpu_s"), "train_wall_s": trained.get("wall_s"),
                "sample_wall_s": sampled.get("wall_s"), "score_wall_s": scored.get("wall_s"),
                "hardware": f"{trained.get('cpu') or sampled.get('cpu')}, {trained.get('cores') or sampled.get('cores')} "
                            f"cores, {trained.get('threads', 1)} thread(s), device {trained.get('device', 'cpu')}",
                "versions": result.versions,
            })
    payload = {"format": FORMAT, "rows": existing + rows}
    atomic_write_text(scores, json.dumps(payload, indent=1, sort_keys=True) + "\n")
    return scores


def _label(model: str, trained: dict[str, Any]) -> str:
    if model == "train":
        return "30,000 random molecules of the MOSES train split (the paper's Train reference row)"
    if model in ("ngram", "combinatorial"):
        return "non-neural baseline trained on the full MOSES train split"
    if model == "hmm":
        return "reduced CPU config (HMM: fewer molecules and EM iterations than the paper)"
    return "reduced CPU config (smaller network, a fraction of one epoch; not the paper-size model)"


def runs_by_phase(path: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """The last record of each (phase, model, seed) in a ``runs.jsonl``, summing the CPU and
    wall time of a training that ran in several pieces."""
    records: dict[tuple[str, str, int], dict[str, Any]] = {}
    if not path.is_file():
        return records
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        key = (row["phase"], row["model"], int(row["seed"]))
        before = records.get(key)
        if before is not None and row["phase"] == "train":
            row = {**row, "cpu_s": round(before.get("cpu_s", 0) + row.get("cpu_s", 0), 1),
                   "wall_s": round(before.get("wall_s", 0) + row.get("wall_s", 0), 1)}
        records[key] = row
    return records
