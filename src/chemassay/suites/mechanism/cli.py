"""CLI of the ``mechanism`` suite (oMeBench / oMeS).

Where a command takes a reaction file, ``gold`` and ``template`` stand for the bundled
oMe_Gold.json and oMe_Template.json.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import typer

from chemassay.clitools import OutOption, SeedOption, console, emit, info, need_file
from chemassay.errors import UserInputError
from chemassay.runtime.progress import progress_task, settings

app = typer.Typer(
    help="Organic mechanism reasoning: oMeBench data, oMeS scoring, LLM runners and baselines.",
    no_args_is_help=True,
)

GoldArgument = typer.Argument(..., help="oMeBench JSON / JSONL file, or 'gold' / 'template' (bundled).")


def _dataset(spec: str) -> Path:
    from chemassay.suites.mechanism.records import resolve_dataset

    return need_file(resolve_dataset(spec), "oMeBench")


@app.command()
def validate(
    file: str = GoldArgument,
    out: Path = OutOption,
    show: int = typer.Option(50, "--show", help="Print at most this many problems (all are in --out)."),
) -> None:
    """Check an oMeBench file: labels against the taxonomy, SMILES, step numbering, weights.

    Exit code 1 when an error is found (warnings alone exit 0).
    """
    from chemassay.report.result import Result, input_ref
    from chemassay.suites.mechanism.validate import validate_file

    path = _dataset(file)
    started = time.perf_counter()
    report = validate_file(path)
    if not settings.quiet:
        for problem in report.problems[:show]:
            console.print(
                f"line {problem.line}  {problem.reaction_id or '-'}  {problem.field}  [{problem.kind}] {problem.message}",
                highlight=False, markup=False,
            )
        if len(report.problems) > show:
            console.print(f"... {len(report.problems) - show} more (see --out)", highlight=False)
    result = Result(
        suite="mechanism",
        task="validate",
        metrics={
            "reactions": report.n_reactions,
            "steps": report.n_steps,
            "errors": len(report.errors),
            "warnings": len(report.warnings),
            **{f"problems.{kind}": count for kind, count in report.counts().items()},
        },
        n=report.n_reactions,
        inputs=[input_ref(path)],
        config={},
        elapsed_s=time.perf_counter() - started,
        problems=[p.as_dict() for p in report.problems],
    )
    emit(result, out)
    if report.errors:
        raise typer.Exit(1)


@app.command()
def taxonomy(
    data: str = typer.Option(None, "--data", help="Also count the labels used by this file ('gold', 'template' or a path)."),
) -> None:
    """Print the step-type taxonomy (11 types, 31 subtypes), optionally with label counts."""
    from rich.table import Table

    from chemassay.suites.mechanism.records import read_records
    from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE, TAXONOMY, derive_taxonomy

    counts = derive_taxonomy(r.data for r in read_records(_dataset(data)).records) if data else {}
    table = Table(show_header=True)
    for column in ("type", "subtype", *(["steps"] if data else []), "description"):
        table.add_column(column, overflow="fold")
    for entry in TAXONOMY:
        row = [entry.type, entry.subtype]
        if data:
            row.append(str(counts.get((entry.type, entry.subtype), 0)))
        table.add_row(*row, entry.description)
    console.print(table)
    outside = {pair: n for pair, n in counts.items() if SUBTYPE_TO_TYPE.get(pair[1]) != pair[0]}
    if outside:
        console.print("labels outside the taxonomy:", highlight=False)
        for (kind, subtype), n in sorted(outside.items(), key=lambda item: -item[1]):
            console.print(f"  {kind} / {subtype}: {n}", highlight=False, markup=False)


@app.command()
def expand(
    templates: str = typer.Argument(..., help="Template file (oMeBench JSON / JSONL), or 'template' (bundled)."),
    out: Path = typer.Option(..., "--out", "-o", help="Expanded reactions (JSON Lines); a manifest goes next to it."),
    substituents: Path = typer.Option(None, "--substituents", help="Substituent list JSON (default: the shipped one)."),
    per_template: int = typer.Option(10, "--per-template", help="Instances to keep per template."),
    attempts: int = typer.Option(5, "--attempts", help="Assignments tried per kept instance before giving up."),
    seed: int = SeedOption,
) -> None:
    """Expand R-group placeholders [*:i] of templates into concrete reactions (oMe-Silver style)."""
    from chemassay.runtime.files import atomic_write_text, sha256_file
    from chemassay.suites.mechanism.expand import (
        default_substituents_path,
        expand_templates,
        load_substituents,
    )
    from chemassay.suites.mechanism.records import read_records

    if per_template < 1 or attempts < 1:
        raise UserInputError("--per-template and --attempts must be at least 1")
    path = _dataset(templates)
    sub_path = substituents or default_substituents_path()
    groups = load_substituents(sub_path)
    found = read_records(path)
    started = time.perf_counter()
    result = expand_templates(
        [r.data for r in found.records], groups, per_template=per_template, attempts=attempts, seed=seed
    )
    text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in result.records)
    atomic_write_text(out, text)
    manifest = {
        "kind": "chemassay mechanism expand",
        "files": {out.name: {"sha256": sha256_file(out), "records": len(result.records)}},
        "inputs": {"templates": {"path": str(path), "sha256": sha256_file(path)},
                   "substituents": {"path": str(sub_path), "sha256": sha256_file(sub_path)}},
        "seed": seed,
        "config": {"per_template": per_template, "attempts": attempts, "substituents": len(groups)},
        "templates": len(found.records),
        "malformed_template_records": [{"line": m.line, "reason": m.reason} for m in found.malformed],
        "templates_without_instance": result.templates_without_instance,
        "rejected": dict(result.rejected),
        "rejected_examples": result.examples,
        "elapsed_s": round(time.perf_counter() - started, 3),
    }
    from chemassay import __version__

    manifest["chemassay"] = __version__
    manifest_path = out.with_name(out.name + ".manifest.json")
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2) + "\n")
    if not settings.quiet:
        console.print(
            f"{len(result.records)} reactions from {len(found.records) - len(result.templates_without_instance)} "
            f"of {len(found.records)} templates; rejected: {dict(result.rejected) or 'none'}",
            highlight=False, markup=False,
        )
        console.print(f"wrote {out} and {manifest_path}", highlight=False, markup=False)


def _score_and_emit(gold_path: Path, pred_path: Path, out: Path | None, config, *, use_cache: bool = True,
                    plots: Path | None = None, task: str = "omes", extra_config: dict | None = None,
                    reaction_ids: list[str] | None = None) -> None:
    from chemassay.suites.mechanism.evaluate import report_result, score_files

    started = time.perf_counter()
    report = score_files(gold_path, pred_path, config, use_cache=use_cache, reaction_ids=reaction_ids)
    result = report_result(report, gold_path=gold_path, pred_path=pred_path, task=task,
                           elapsed_s=time.perf_counter() - started, extra_config=extra_config)
    if plots is not None:
        from chemassay.suites.mechanism.plots import plot_accuracy_by_type, plot_score_by_length

        label = pred_path.stem
        plot_score_by_length({label: report.summary["by_length"]}, plots / f"{label}_score_by_length.png")
        plot_accuracy_by_type({label: report.summary["by_type"]}, plots / f"{label}_accuracy_by_type.png")
    emit(result, out)
    if report.failures() and not settings.quiet:
        info(f"{len(report.failures())} predictions could not be parsed (scored 0; listed under 'failures')")


@app.command()
def score(
    gold: str = GoldArgument,
    pred: Path = typer.Argument(..., help="Predictions (JSONL): {reaction_id, mechanism: [...]} or {reaction_id, response}."),
    out: Path = OutOption,
    tau: float = typer.Option(0.6, "--tau", help="Tanimoto threshold for partial credit."),
    round_to: int = typer.Option(None, "--round", help="Round per-reaction values to N decimals like the published tool (e.g. 2)."),
    strict: bool = typer.Option(False, "--strict", help="Parse predictions exactly like the published tool (no repairs)."),
    plots: Path = typer.Option(None, "--plots", help="Write score-by-length and accuracy-by-type PNGs here."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the on-disk cache of gold molecules."),
) -> None:
    """Score predictions against gold mechanisms with oMeS (S_total, S_partial, V, L)."""
    from chemassay.suites.mechanism.evaluate import ScoreConfig

    if not 0.0 <= tau <= 1.0:
        raise UserInputError(f"--tau {tau}: must be between 0 and 1")
    if round_to is not None and round_to < 0:
        raise UserInputError("--round must be a non-negative number of decimals")
    _score_and_emit(_dataset(gold), need_file(pred, "prediction"), out, ScoreConfig(tau, round_to, strict),
                    use_cache=not no_cache, plots=plots)


def _load_pool(pool: str):
    from chemassay.suites.mechanism.records import load_reactions

    loaded = load_reactions(_dataset(pool))
    if loaded.rejected:
        info(f"pool {pool}: {len(loaded.rejected)} unusable records left out")
    return loaded.reactions


def _write_rows(rows: list[dict], out: Path) -> None:
    from chemassay.runtime.files import atomic_write_text

    atomic_write_text(out, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


@app.command()
def baseline(
    gold: str = GoldArgument,
    method: str = typer.Option("nearest-neighbour", "--method", help="nearest-neighbour or gold-oracle."),
    out: Path = typer.Option(..., "--out", "-o", help="Predictions (JSONL)."),
    pool: str = typer.Option("template", "--pool", help="Reactions to borrow mechanisms from ('template', 'gold' or a path)."),
    allow_same_family: bool = typer.Option(False, "--allow-same-family", help="Let a query retrieve pool reactions of its own family (leaky)."),
    score_out: Path = typer.Option(None, "--score", help="Also score the predictions and write the result here."),
) -> None:
    """Predict mechanisms with a built-in baseline (no language model needed)."""
    from chemassay.suites.mechanism.baselines import BASELINES, gold_oracle, nearest_neighbour
    from chemassay.suites.mechanism.evaluate import ScoreConfig
    from chemassay.suites.mechanism.records import load_reactions
    from chemassay.suites.mechanism.retrieval import ReactionIndex

    if method not in BASELINES:
        raise UserInputError(f"--method {method!r}: choose from {', '.join(BASELINES)}")
    gold_path = _dataset(gold)
    reactions = load_reactions(gold_path).reactions
    if method == "gold-oracle":
        rows = gold_oracle(reactions)
    else:
        index = ReactionIndex(_load_pool(pool))
        rows = nearest_neighbour(reactions, index, exclude_family=not allow_same_family)
    _write_rows(rows, out)
    info(f"wrote {len(rows)} predictions to {out}")
    if score_out is not None:
        _score_and_emit(gold_path, out, score_out, ScoreConfig(), task=f"baseline-{method}",
                        extra_config={"method": method, "pool": pool if method != "gold-oracle" else None,
                                      "allow_same_family": allow_same_family})


@app.command()
def run(
    gold: str = GoldArgument,
    model: str = typer.Option(..., "--model", help="openai:MODEL (OpenAI-compatible endpoint) or hf:PATH (local checkpoint)."),
    out: Path = typer.Option(..., "--out", "-o", help="Predictions (JSONL), appended as answers arrive; resumable."),
    base_url: str = typer.Option(None, "--base-url", help="Endpoint base URL, e.g. https://api.openai.com/v1 or http://localhost:8000/v1."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the API key (may be unset for local servers)."),
    prompt: str = typer.Option("default", "--prompt", help="default (the paper's one-shot), cot, or kshot."),
    k: int = typer.Option(3, "--k", help="Exemplars for --prompt kshot."),
    pool: str = typer.Option("template", "--pool", help="Exemplar pool for kshot ('template' or an expanded JSONL)."),
    allow_same_family: bool = typer.Option(False, "--allow-same-family", help="Let exemplars come from the query's own family (leaky)."),
    concurrency: int = typer.Option(4, "--concurrency", help="Requests in flight at once (openai)."),
    timeout: float = typer.Option(120.0, "--timeout", help="Per-request time-out in seconds (openai)."),
    retries: int = typer.Option(5, "--retries", help="Retries per request on time-outs, 429 and 5xx (openai)."),
    backoff: float = typer.Option(1.0, "--backoff", help="First retry wait in seconds; doubles each retry (openai)."),
    temperature: float = typer.Option(None, "--temperature", help="Sampling temperature (default: the server's; greedy for hf)."),
    max_tokens: int = typer.Option(None, "--max-tokens", help="Maximum new tokens per answer."),
    device: str = typer.Option("cpu", "--device", help="Torch device for hf models."),
    limit: int = typer.Option(None, "--limit", help="Only the first N reactions."),
    seed: int = SeedOption,
    overwrite: bool = typer.Option(False, "--overwrite", help="Start again instead of resuming an existing --out."),
    score_out: Path = typer.Option(None, "--score", help="Score the predictions afterwards and write the result here."),
) -> None:
    """Ask a language model for the mechanism of every reaction of GOLD."""
    from chemassay.suites.mechanism.evaluate import ScoreConfig
    from chemassay.suites.mechanism.records import load_reactions
    from chemassay.suites.mechanism.retrieval import ReactionIndex, usable_exemplars
    from chemassay.suites.mechanism.runners import (
        parse_model_spec,
        prepare_jobs,
        run_hf,
        run_openai,
    )

    spec = parse_model_spec(model)
    if spec.kind == "openai" and not base_url:
        raise UserInputError("--base-url is required with --model openai:..., e.g. https://api.openai.com/v1")
    if limit is not None and limit < 1:
        raise UserInputError("--limit must be at least 1")
    gold_path = _dataset(gold)
    reactions = load_reactions(gold_path).reactions[:limit]
    index = None
    if prompt == "kshot":
        candidates = _load_pool(pool)
        exemplars = usable_exemplars(candidates)
        info(f"k-shot pool {pool}: {len(exemplars)} of {len(candidates)} reactions usable as exemplars")
        index = ReactionIndex(exemplars)
    jobs = prepare_jobs(reactions, prompt, k=k, pool_index=index, exclude_family=not allow_same_family)
    style = prompt if prompt != "kshot" else f"kshot{k}"
    started = time.perf_counter()
    with progress_task(f"asking {spec.label}", len(jobs)) as advance:
        if spec.kind == "openai":
            params: dict = {}
            if temperature is not None:
                params["temperature"] = temperature
            if max_tokens is not None:
                params["max_tokens"] = max_tokens
            if seed:
                params["seed"] = seed
            summary = run_openai(jobs, out, spec=spec, style=style, base_url=base_url, api_key=os.environ.get(api_key_env),
                                 concurrency=concurrency, timeout=timeout, retries=retries, backoff=backoff,
                                 params=params, overwrite=overwrite, progress=advance)
        else:
            summary = run_hf(jobs, out, spec=spec, style=style, max_new_tokens=max_tokens or 1024,
                             temperature=temperature or 0.0, seed=seed, device=device, overwrite=overwrite,
                             progress=advance)
    if not settings.quiet:
        console.print(
            f"{spec.label}: {summary.answered} answered, {summary.failed} failed, "
            f"{summary.already_done} already in {out} ({time.perf_counter() - started:.1f} s)",
            highlight=False, markup=False,
        )
        for error in summary.errors[:5]:
            console.print(f"  {error['item']}: {error['reason']}", highlight=False, markup=False)
    if score_out is not None:
        _score_and_emit(gold_path, out, score_out, ScoreConfig(), task="run",
                        extra_config={"model": spec.label, "prompt": style, "limit": limit},
                        reaction_ids=[r.reaction_id for r in reactions])
    if summary.failed:
        raise typer.Exit(1)
