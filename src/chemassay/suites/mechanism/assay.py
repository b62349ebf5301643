"""The mechanism suite's part in ``chemassay assay``: oMe-Gold with the paper's one-shot prompt.

oMeBench's headline table (Table 3) asks every model for the mechanisms of the 196 expert
reactions of oMe-Gold with its one-shot prompt (``--prompt default``) and scores them with
oMeS (tau 0.6). The assay runs exactly that: one task, the model named by the assay's spec
(the built-in baseline is ``nearest-neighbour``: the step labels of the most DRFP-similar
oMe-Template reaction of another family), answers appended to
``OUT/mechanism/ome-gold-one-shot.predictions.<model>.jsonl`` as they arrive, so an assay that
is killed resumes by asking only the reactions not yet answered. Its result carries
``dataset = omebench`` and ``setting = {"dataset": "gold", "prompt": "one-shot"}``, the
setting of Table 3's rows, so the report puts the paper's GPT-5, o3... rows beside it.

``--quick`` asks the first :data:`QUICK_REACTIONS` reactions only (8 easy, 19 medium, 3 hard):
a smoke test whose numbers are not comparable with the paper's.

``--limit N`` asks a seeded subset of at most ``N`` reactions, stratified by the paper's
difficulty levels (easy, medium, hard: each level keeps its share of oMe-Gold, and at least one
reaction), the same reactions for every model with the same seed.
"""

from __future__ import annotations

import hashlib
from functools import partial

from chemassay.contract.assay import AssayContext, AssayTask, SuiteAssay, TaskItems, metric_text
from chemassay.contract.result import Result
from chemassay.report.published import reference_results
from chemassay.report.subsets import task_subset
from chemassay.suites.mechanism.api import evaluate, load_reactions
from chemassay.suites.mechanism.runners import prepare_jobs

PROTOCOL = "mechanism-predictor"
TASK_KEY = "ome-gold-one-shot"
GOLD_REACTIONS = 196
"""Reactions of oMe-Gold (the bundled file; every one is asked in a full assay)."""
QUICK_REACTIONS = 30
"""Reactions asked by ``--quick``: the first 30 of oMe-Gold (8 easy, 19 medium, 3 hard)."""
SETTING = {"dataset": "gold", "prompt": "one-shot"}
"""The setting of oMeBench's Table 3 (the paper's words, as its published rows carry it)."""


def predictions_path(ctx: AssayContext) -> str:
    """Where the task keeps the model's answers: one file per model (a short hash of its
    spec), shared by the quick and the full run, whose first reactions are the same requests."""
    digest = hashlib.sha256(ctx.spec.encode("utf-8")).hexdigest()[:10]
    return str(ctx.out_dir / f"{TASK_KEY}.predictions.{digest}.jsonl")


def list_reactions(ctx: AssayContext, *, limit: int | None = None) -> TaskItems:
    """oMe-Gold's reactions (the first ``limit``), their difficulty levels as strata, and the
    records the model is asked with the paper's one-shot prompt (an ``openai:`` model gets the
    prompt alone, no system prompt, as :func:`~chemassay.suites.mechanism.api.load_predictor` asks)."""
    reactions = load_reactions("gold")[:limit]
    return TaskItems(ids=[r.reaction_id for r in reactions], strata=[r.level or "unknown" for r in reactions],
                     items=[job.record("default") for job in prepare_jobs(reactions, "default")],
                     context={"system": "none"})


def run_one_shot(ctx: AssayContext, *, limit: int | None) -> Result:
    """Ask the model for every (or the first ``limit``, or the seeded subset of ``ctx.limit``)
    oMe-Gold mechanism with the paper's one-shot prompt, resuming from the answers already on
    disk, and score them with oMeS."""
    ids, subset = None, None
    if ctx.limit is not None:  # stratified by difficulty level, the same reactions for every model
        listing = list_reactions(ctx, limit=limit)
        ids, subset = task_subset(ctx, listing.ids, listing.strata)
    result = evaluate(model=ctx.spec, reference="gold", prompt="default", limit=limit, ids=ids,
                      out=predictions_path(ctx), context=ctx.model_context, seed=ctx.seed)
    return result.model_copy(update={"quick": ctx.quick, "subset": subset})


def _interval(result: Result, key: str) -> str:
    # in percent, as oMeBench prints oMeS and the scorecard shows it (one unit per metric)
    return metric_text(result, key, percent=True)


def best_published(prompt: str = "one-shot") -> tuple[str, float] | None:
    """The paper's best overall oMeS-total among the rows of ``prompt`` on oMe-Gold (model, value)."""
    best: tuple[str, float] | None = None
    for record in reference_results("mechanism"):
        if record.setting != {"dataset": "gold", "prompt": prompt}:
            continue
        value = record.metrics.get("S_total")
        if value is not None and value.value is not None and (best is None or value.value > best[1]):
            best = (record.model, value.value)
    return best


class MechanismAssay(SuiteAssay):
    """oMe-Gold, one-shot (oMeBench Table 3); see the module docstring."""

    baseline = "nearest-neighbour"
    quick_note = (f"the first {QUICK_REACTIONS} of the {GOLD_REACTIONS} oMe-Gold reactions (8 easy, 19 medium, "
                  "3 hard) with the one-shot prompt; not comparable with Table 3")

    def tasks(self, protocols: set[str], *, quick: bool, spec: str, limit: int | None = None) -> list[AssayTask]:
        """One task: oMe-Gold with the one-shot prompt (one request per reaction); with
        ``limit``, at most ``limit`` reactions stratified by difficulty."""
        if PROTOCOL not in protocols:
            return []
        first = QUICK_REACTIONS if quick else None
        items = QUICK_REACTIONS if quick else GOLD_REACTIONS
        items = min(items, limit) if limit is not None else items
        return [AssayTask(
            key=TASK_KEY,
            title="oMeBench Table 3: oMe-Gold, one-shot prompt" + (f" (quick: first {items} reactions)" if quick else ""),
            protocol=PROTOCOL, dataset="omebench", setting=dict(SETTING), items=items,
            run=partial(run_one_shot, limit=first), requests=items,
            listing=partial(list_reactions, limit=first), headline=("S_total",),
        )]

    def verdict(self, results: list[Result]) -> str:
        """``S_total 6.3 % [4.9, 7.8], S_partial ..., V ..., L ... on 196 oMe-Gold reactions
        (one-shot); Table 3's best one-shot oMeS-total: Gemini-Pro-2.5 34.9 %``."""
        parts = []
        for result in results:
            prompt = result.setting.get("prompt", "?")
            text = ", ".join(_interval(result, key) for key in ("S_total", "S_partial", "V", "L"))
            text += f" on {result.n} oMe-Gold reactions ({prompt})"
            if result.quick:
                text += " [quick subset: not comparable with the paper]"
            parts.append(text)
        line = "; ".join(parts)
        best = best_published()
        if best is not None:
            line += f"; Table 3's best one-shot S_total: {best[0]} {100 * best[1]:.1f} %"
        return line


ASSAY = MechanismAssay()


DEMO_NOTES = """
The baseline `nearest-neighbour` borrows the step labels of the most DRFP-similar
oMe-Template reaction of another family and puts the query's product as every intermediate:
the floor any model that reasons about intermediates should clear. (`--model gold-oracle`
repeats the gold mechanism and scores 1.0: a check of the scorer and the data.)
"""
"""What the demo says of this suite's baseline (``Suite.demo_notes``)."""
