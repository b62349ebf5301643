"""Reproduce the MOSES paper's Tables 1–4 with the baselines trained here (re-runnable, resumable).

For every model and seed: train (``chemassay.generation.train``; a finished run is skipped,
a cut one resumes), draw 30,000 samples with the seed (``generation.sample``), and score
them with every MOSES metric (``generation.evaluate``, one worker); then print the
mean ± standard deviation over the seeds beside the paper's values and write the scores
(and, with ``--package``, the compressed samples) where the package's reference samples
live. Every step's wall and CPU time goes to ``OUT/runs.jsonl``.

    python benchmarks/generation_reproduce_tables.py --out /work/runs13 --models charrnn --phases train,sample
    python benchmarks/generation_reproduce_tables.py --out /work/runs13 --phases score,table
    python benchmarks/generation_reproduce_tables.py --out /work/runs13 --phases table --package

Models: ``charrnn vae aae latentgan hmm`` (``--size cpu`` trains the reduced CPU
configurations, ``--size paper`` the MOSES sizes: a GPU job), ``combinatorial`` (the model
file named by ``--combinatorial-model``, trained on the full train split if missing,
sampled with ``join=brics``), ``ngram`` (the cached full-split model) and ``train`` (a
random sample of the MOSES train split, the paper's "Train" row). LatentGAN's seeds after
the first reuse the first seed's heteroencoder, as the MOSES LatentGAN seeds share one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import cpu_model  # noqa: E402

LEARNED = ("charrnn", "vae", "aae", "latentgan", "hmm")
PAPER_NAMES = {"charrnn": "CharRNN", "vae": "VAE", "aae": "AAE", "latentgan": "LatentGAN", "hmm": "HMM",
               "ngram": "NGram", "combinatorial": "Combinatorial", "train": "Train"}
METRICS = ["valid", "unique@1000", "unique@10000", "Filters", "Novelty", "IntDiv", "IntDiv2", "FCD/Test",
           "FCD/TestSF", "SNN/Test", "SNN/TestSF", "Frag/Test", "Frag/TestSF", "Scaf/Test", "Scaf/TestSF"]
N_SAMPLES = 30_000


def log_run(out: Path, record: dict) -> None:
    record = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), "cpu": cpu_model(), "cores": os.cpu_count(), **record}
    with open(out / "runs.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    print(json.dumps(record), flush=True)


def model_dir(out: Path, model: str, size: str, seed: int) -> Path:
    return out / "models" / f"{model}-{size}-s{seed}"


def samples_path(out: Path, model: str, seed: int) -> Path:
    return out / "samples" / f"{model}_s{seed}.txt"


def train_one(out: Path, model: str, size: str, seed: int, args) -> None:
    import chemassay.generation as generation

    folder = model_dir(out, model, size, seed)
    info_file = folder / "model.json"
    if info_file.is_file() and json.loads(info_file.read_text()).get("finished"):
        return
    options = [f"size={size}", *args.option]
    if model == "latentgan" and seed != args.seeds[0] and not any(o.startswith("autoencoder=") for o in options):
        options.append(f"autoencoder={model_dir(out, model, size, args.seeds[0])}")
    spec = f"{model}:{folder}," + ",".join(options)
    wall, cpu = time.perf_counter(), time.process_time()
    generator = generation.train(spec, "moses", seed=seed, device=args.device, threads=args.threads,
                                 max_minutes=args.max_minutes)
    info = json.loads(info_file.read_text())
    log_run(out, {"phase": "train", "model": model, "seed": seed, "size": size, "spec": spec,
                  "finished": generator.finished, "epochs_done": info.get("epochs_done"),
                  "config": info.get("config"), "training": info.get("training"),
                  "wall_s": round(time.perf_counter() - wall, 1), "cpu_s": round(time.process_time() - cpu, 1),
                  "threads": args.threads, "device": args.device})


def combinatorial_model(args) -> Path:
    import chemassay.generation as generation

    path = Path(args.combinatorial_model)
    if not path.is_file():
        generation.train(f"combinatorial:{path}", "moses", n_jobs=args.jobs)
    return path


def sample_one(out: Path, model: str, size: str, seed: int, args) -> None:
    import chemassay.generation as generation

    target = samples_path(out, model, seed)
    if target.is_file():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    wall, cpu = time.perf_counter(), time.process_time()
    if model == "train":
        import numpy as np

        train = generation.load_dataset("moses", part="train")
        picked = np.random.default_rng(seed).choice(len(train), N_SAMPLES, replace=False)
        from chemassay.runtime.files import atomic_write_text

        atomic_write_text(target, "".join(train[i] + "\n" for i in picked))
        spec = f"random {N_SAMPLES} of moses:train (numpy default_rng({seed}))"
    else:
        if model in LEARNED:
            spec = f"{model}:{model_dir(out, model, size, seed)}"
        elif model == "combinatorial":
            spec = f"combinatorial:{combinatorial_model(args)},join={args.join}"
        else:
            spec = model
        generation.sample(spec, N_SAMPLES, seed, out=target, n_jobs=args.jobs)
    log_run(out, {"phase": "sample", "model": model, "seed": seed, "spec": spec, "n": N_SAMPLES,
                  "wall_s": round(time.perf_counter() - wall, 1), "cpu_s": round(time.process_time() - cpu, 1)})


def score_one(out: Path, model: str, seed: int, args) -> None:
    import chemassay.generation as generation

    result_file = out / "scores" / f"{model}_s{seed}.json"
    if result_file.is_file():
        return
    result_file.parent.mkdir(parents=True, exist_ok=True)
    wall, cpu = time.perf_counter(), time.process_time()
    result = generation.evaluate(samples_path(out, model, seed), n_jobs=args.jobs, bootstrap=0, seed=seed)
    result.write(result_file)
    log_run(out, {"phase": "score", "model": model, "seed": seed, "wall_s": round(time.perf_counter() - wall, 1),
                  "cpu_s": round(time.process_time() - cpu, 1), "n_jobs": args.jobs})


def paper_rows() -> dict[str, dict[str, str]]:
    """The paper's Tables 1–4 (from the MOSES paper; mean ± std over three seeds)."""
    from chemassay.suites.generation.baselines.reference_samples import PAPER_TABLES

    return PAPER_TABLES


TABLES = {
    "Table 1": ["valid", "unique@1000", "unique@10000"],
    "Table 2": ["Filters", "Novelty", "IntDiv", "IntDiv2"],
    "Table 3": ["FCD/Test", "FCD/TestSF", "SNN/Test", "SNN/TestSF"],
    "Table 4": ["Frag/Test", "Frag/TestSF", "Scaf/Test", "Scaf/TestSF"],
}


def _scores(out: Path, model: str, seeds: list[int]) -> list[dict]:
    from chemassay.contract.result import read_result

    return [read_result(p).metrics for p in (out / "scores" / f"{model}_s{seed}.json" for seed in seeds)
            if p.is_file()]


def _cell(values: list[float]) -> str:
    digits = 3 if max(abs(v) for v in values) >= 1 else 4
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{statistics.fmean(values):.{digits}f} ± {statistics.stdev(values):.{digits}f}"


def table(out: Path, models: list[str], seeds: list[int]) -> str:
    """The paper's Tables 1-4, each model's row (mean ± std over the seeds found) under the
    paper's row for it."""
    paper = paper_rows()
    lines = []
    for title, metrics in TABLES.items():
        lines += [f"\n**{title}**\n", "| model | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 1) + "|"]
        for model in models:
            rows = _scores(out, model, seeds)
            name = PAPER_NAMES.get(model, model)
            published = paper.get(name, {})
            if published:
                lines.append(f"| {name}, paper | " + " | ".join(published.get(m, "—") for m in metrics) + " |")
            if rows:
                cells = []
                for metric in metrics:
                    values = [r[metric] for r in rows if r.get(metric) is not None]
                    cells.append(_cell(values) if values else "—")
                lines.append(f"| {name}, chemassay ({len(rows)} seed{'s' if len(rows) > 1 else ''}) | "
                             + " | ".join(cells) + " |")
    return "\n".join(lines)


def runs_table(out: Path, models: list[str], seeds: list[int]) -> str:
    """One line per trained model and seed: its configuration, how many molecules it saw, and the
    wall and CPU time of training, sampling and scoring (from ``OUT/runs.jsonl``)."""
    from chemassay.suites.generation.baselines.reference_samples import runs_by_phase

    runs = runs_by_phase(out / "runs.jsonl")
    lines = ["| model | seed | training | molecules seen | train CPU s | train wall s | sample 30k wall s "
             "| score wall s |", "|---" * 8 + "|"]
    for model in models:
        for seed in seeds:
            trained, sampled, scored = (runs.get((phase, model, seed), {}) for phase in ("train", "sample", "score"))
            if not (trained or sampled):
                continue
            lines.append(f"| {PAPER_NAMES.get(model, model)} | {seed} | {_training_text(model, trained)} | "
                         f"{_seen(model, trained)} | {trained.get('cpu_s', '—')} | {trained.get('wall_s', '—')} | "
                         f"{sampled.get('wall_s', '—')} | {scored.get('wall_s', '—')} |")
    return "\n".join(lines)


def _training_text(model: str, trained: dict) -> str:
    training = trained.get("training") or {}
    if not training:
        return "—"
    if model == "hmm":
        return f"{training.get('iterations')} EM iterations"
    text = f"{trained.get('epochs_done')} epochs × {training.get('steps')} steps × {training.get('batch_size')}"
    if model == "latentgan":
        adopted = "adopted autoencoder; " if "autoencoder=" in (trained.get("spec") or "") else ""
        text = (f"{adopted}autoencoder {training.get('epochs')} × {training.get('steps')} × "
                f"{training.get('batch_size')}; GAN {training.get('gan_epochs')} × {training.get('gan_steps')} × "
                f"{training.get('gan_batch_size')}")
    return text


def _seen(model: str, trained: dict) -> str:
    training = trained.get("training") or {}
    if model == "hmm":
        return f"{training.get('limit'):,}" if training.get("limit") else "—"
    if not training.get("steps"):
        return "—"
    return f"{training['epochs'] * training['steps'] * training['batch_size']:,}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="folder for models, samples, scores, runs.jsonl")
    parser.add_argument("--models", default="charrnn,vae,aae,latentgan,hmm")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--size", default="cpu", choices=["tiny", "cpu", "paper"])
    parser.add_argument("--phases", default="train,sample,score,table",
                        help="any of train, sample, score, table (the paper's Tables 1-4), runs (times per run)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-minutes", type=float, default=None, help="length of one training piece")
    parser.add_argument("--option", action="append", default=[], help="extra key=value for the model spec")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes for sampling and scoring")
    parser.add_argument("--combinatorial-model", default="comb_full.json.gz")
    parser.add_argument("--join", default="brics", help="combinatorial join mode")
    parser.add_argument("--package", action="store_true",
                        help="write the compressed samples and scores.json into the package's reference samples")
    args = parser.parse_args(argv)
    args.seeds = [int(s) for s in args.seeds.split(",")]
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    phases = {p.strip() for p in args.phases.split(",")}
    args.out.mkdir(parents=True, exist_ok=True)
    for model in models:
        for seed in args.seeds:
            if "train" in phases and model in LEARNED:
                train_one(args.out, model, args.size, seed, args)
            if "sample" in phases:
                sample_one(args.out, model, args.size, seed, args)
            if "score" in phases:
                score_one(args.out, model, seed, args)
    if "table" in phases:
        print(table(args.out, models, args.seeds))
    if "runs" in phases:
        print(runs_table(args.out, models, args.seeds))
    if args.package:
        from chemassay.suites.generation.baselines.reference_samples import write_reference_samples

        written = write_reference_samples(args.out, models, args.seeds)
        print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
