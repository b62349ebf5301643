"""reaction-ood's part in ``chemassay assay``: Bradshaw et al.'s random, document, time and
reaction-type splits of the bundled Schneider 50k patent reactions (Tables S2.2-S2.4).

Every task prepares its data itself, cached under the chemassay cache: the bundled set is
cleaned (Section S1.1), split with the shipped ``schneider_*`` definitions (seed 0), and a
seeded sample of a test part is written to ``OUT/reaction-ood/data/<task>.parquet``; the model
is asked for :data:`K` ranked products per test reaction and scored with
:func:`chemassay.reaction_ood.evaluate`. The built-in baseline (:data:`BASELINE`,
``template-knn:per-split``) is the template-kNN predictor trained by each task on its split's
training part (templates and models cached); any other reaction predictor is evaluated as it
is, on the same test reactions.

=====================  ===============================================================
task                   test reactions (full: at most 1,000 of the part, seeded sample)
=====================  ===============================================================
random-test            random split, test part (Table S2.2 "on reactions")
document-test          document split, reactions of patents seen in training
document-test_ood      document split, reactions of new patents (Table S2.2 "on documents")
time-test              time split, test years 1996-2004, trained up to 2004
time-test_ood          time split, test years 2005-2013, trained up to 2004
suzuki-test            reaction-type split holding out every Suzuki coupling: other classes
suzuki-test_ood        the held-out Suzuki couplings (Table S2.4 "All Suzuki")
chloro_suzuki-test_ood chloro Suzuki couplings held out (Table S2.4 "Chloro Suzuki"; 774)
=====================  ===============================================================

``--quick`` runs the same eight tasks on 30 test reactions each, with the splits made from a
sample of whole patents (:data:`QUICK_ROWS` raw reactions, seed 0, about 2,500 after cleaning)
and their sizes scaled down (:data:`QUICK_SIZES`), so that it takes well under a minute.

``--limit N`` runs each task on a seeded subset of at most ``N`` of its test reactions (of the
sample above), the same for every model with the same seed. Each task is one part of one split,
so the splits are kept apart by the tasks; within the time split's parts, which gather several
test years, the subset keeps each year's share (stratified by year).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from chemassay.contract.assay import AssayContext, AssayTask, SuiteAssay, TaskItems
from chemassay.contract.result import Result
from chemassay.data.registry import get_spec
from chemassay.models.registry import load_model
from chemassay.models.spec import parse_spec
from chemassay.report.subsets import task_subset
from chemassay.runtime.cache import cached, cached_file
from chemassay.runtime.progress import info
from chemassay.suites.reaction_ood.api import (
    _own_ids,
    clean_reactions,
    evaluate,
    load_dataset,
    split_setting,
)
from chemassay.suites.reaction_ood.clean import CleanConfig
from chemassay.suites.reaction_ood.evaluation import truth_reactants
from chemassay.suites.reaction_ood.pipeline import TemplateBank, train_on_part, whole_documents
from chemassay.suites.reaction_ood.splits import make_split, split_definition
from chemassay.suites.reaction_ood.tables import write_table
from chemassay.suites.reaction_ood.template_knn import BaselineConfig, TemplateKnnModel

SUITE = "reaction-ood"
PROTOCOL = "reaction-predictor"
DATASET = "schneider-50k"
BASELINE = "template-knn:per-split"
"""The built-in baseline's spec in ``chemassay assay``: the template-kNN predictor, trained by
each task on the training part of its split (a user's ``template-knn:MODEL.npz`` is evaluated
as it is instead)."""
K = 5
"""Ranked products asked per test reaction: the paper reports top-1 to top-5."""
FULL_TEST = 1000
QUICK_TEST = 30
QUICK_ROWS = 2500
TIME_CUTOFF = 2004
PREP_VERSION = 1
"""Bump when the preparation changes, so cached data and models are rebuilt."""

QUICK_SIZES: dict[str, dict[str, Any]] = {
    "schneider_time": {"test_size": 8, "cutoff_years": [TIME_CUTOFF], "min_year": 1996, "leeway": 100},
    "schneider_reaction_type_suzuki": {"test_ood": 40, "ood_train": 0, "valid": 100, "test": 100, "leeway": 50},
    "schneider_reaction_type_chloro_suzuki": {"test_ood": 40, "ood_train": 0, "valid": 100, "test": 100,
                                              "leeway": 50},
}
"""Sizes of the quick run's splits (the sample holds too few reactions for the shipped ones);
the random and document splits are fractions and keep their definitions."""


@dataclass(frozen=True)
class Part:
    """One evaluated test set of a split."""

    part: str
    """``test`` or ``test_ood`` (for the time split: test years up to / after the cutoff)."""
    title: str


@dataclass(frozen=True)
class SplitPlan:
    """One split of the assay: its shipped definition, training part and evaluated parts."""

    key: str
    definition: str
    train_part: str
    parts: tuple[Part, ...]
    setting: dict[str, str] = field(default_factory=dict)
    """Setting keys besides the split kind and part (the time split's cutoff)."""


SPLITS: tuple[SplitPlan, ...] = (
    SplitPlan("random", "schneider_random", "train", (
        Part("test", "Table S2.2: random split, test reactions"),)),
    SplitPlan("document", "schneider_document", "train", (
        Part("test", "document split: reactions of patents seen in training"),
        Part("test_ood", "Table S2.2: document split, reactions of new patents"))),
    SplitPlan("time", "schneider_time", f"train_upto_{TIME_CUTOFF}", (
        Part("test", f"time split: test years up to {TIME_CUTOFF}, the training cutoff"),
        Part("test_ood", f"time split: test years after {TIME_CUTOFF}")), {"cutoff": str(TIME_CUTOFF)}),
    SplitPlan("suzuki", "schneider_reaction_type_suzuki", "train", (
        Part("test", "reaction-type split, Suzuki couplings held out: other classes"),
        Part("test_ood", "Table S2.4: held-out Suzuki couplings (all Suzuki)"))),
    SplitPlan("chloro_suzuki", "schneider_reaction_type_chloro_suzuki", "train", (
        Part("test_ood", "Table S2.4: held-out chloro Suzuki couplings"),)),
)


def is_baseline(spec: str) -> bool:
    """Whether ``spec`` names the per-split template-kNN baseline (:data:`BASELINE`)."""
    parsed = parse_spec(spec)
    return parsed.kind in {"template-knn", "baseline"} and parsed.arg == "per-split"


# ------------------------------------------------------------------------------------------
# Data preparation (cached)


def _definition(plan: SplitPlan, quick: bool) -> tuple[str, dict[str, Any], int]:
    """``(kind, settings, seed)`` of a split: the shipped definition, resized for quick runs."""
    definition = split_definition(plan.definition)
    settings = {k: v for k, v in definition.items() if k not in ("kind", "name", "description", "seed")}
    if quick:
        settings.update(QUICK_SIZES.get(plan.definition, {}))
    return definition["kind"], settings, int(definition.get("seed", 0))


def _clean_key(quick: bool) -> dict[str, Any]:
    return {"dataset": DATASET, "sha256": get_spec(DATASET).file("schneider50k.csv.gz").sha256,
            "sample_rows": QUICK_ROWS if quick else None, "clean": asdict(CleanConfig()), "version": PREP_VERSION}


_memory: dict[Any, Any] = {}
"""What this process prepared already (cleaned tables, splits, template banks)."""


def _remembered(key: Any, build: Callable[[], Any]) -> Any:
    text = json.dumps(key, sort_keys=True, default=str)
    if text not in _memory:
        _memory[text] = build()
    return _memory[text]


def cleaned_reactions(quick: bool, n_jobs: int = 1) -> pd.DataFrame:
    """The cleaned Schneider 50k set (quick: a sample of whole patents), cached."""
    key = _clean_key(quick)

    def build(path: Path) -> None:
        raw = load_dataset(DATASET)
        if quick:
            raw = whole_documents(raw, QUICK_ROWS, seed=0)
        info(f"[reaction-ood] cleaning {len(raw):,} reactions of {DATASET} (once; cached)")
        clean, _report = clean_reactions(raw, n_jobs=n_jobs)
        clean.to_parquet(path, index=False)

    return _remembered(("clean", key), lambda: pd.read_parquet(cached_file("reaction-ood/assay-data", key, build,
                                                                           suffix=".parquet")))


def split_parts(plan: SplitPlan, quick: bool, n_jobs: int = 1) -> dict[str, pd.DataFrame]:
    """The parts of one split of the cleaned set (fast and deterministic: not cached on disk)."""
    kind, settings, seed = _definition(plan, quick)
    clean = cleaned_reactions(quick, n_jobs)
    return _remembered(("split", _clean_key(quick), kind, settings, seed),
                       lambda: make_split(clean, kind, settings, seed=seed))


def test_part(plan: SplitPlan, part: str, quick: bool, n_jobs: int = 1) -> pd.DataFrame:
    """All test reactions of ``part`` (before sampling); the time split's ``test``/``test_ood``
    gather the test years up to / after :data:`TIME_CUTOFF`."""
    parts = split_parts(plan, quick, n_jobs)
    if plan.key != "time":
        return parts[part]
    years = sorted(int(name.removeprefix("test_")) for name in parts if name.removeprefix("test_").isdigit())
    chosen = [y for y in years if (y <= TIME_CUTOFF) == (part == "test")]
    return pd.concat([parts[f"test_{y}"] for y in chosen], ignore_index=True)


def template_bank(quick: bool, n_jobs: int = 1) -> Any:
    """The atom maps (shipped RXNMapper maps) and templates of every cleaned reaction, cached."""
    key = {**_clean_key(quick), "maps": "schneider", "radius": 1}

    def build() -> TemplateBank:
        bank = TemplateBank(maps="schneider", radius=1)
        clean = cleaned_reactions(quick, n_jobs)
        info(f"[reaction-ood] extracting the templates of {len(clean):,} reactions (once; cached)")
        bank.add(clean, n_jobs=n_jobs)
        return bank

    return _remembered(("bank", key), lambda: cached("reaction-ood/assay-templates", key, build,
                                                     save=lambda bank, path: bank.save(path),
                                                     load=TemplateBank.load, suffix=".json"))


def baseline_model(plan: SplitPlan, quick: bool, n_jobs: int = 1) -> Any:
    """The template-kNN baseline trained on the split's training part (cached model file),
    named by the spec :data:`BASELINE`."""
    kind, settings, seed = _definition(plan, quick)
    config = BaselineConfig()
    key = {**_clean_key(quick), "split": kind, "settings": settings, "seed": seed, "train": plan.train_part,
           "baseline": config.to_dict()}

    def build(path: Path) -> None:
        frame = split_parts(plan, quick, n_jobs)[plan.train_part]
        info(f"[reaction-ood] training the template-kNN baseline on {len(frame):,} reactions ({plan.key} split)")
        model = train_on_part(frame, template_bank(quick, n_jobs), config=config, n_jobs=n_jobs)
        model.save(path)

    model = TemplateKnnModel.load(cached_file("reaction-ood/assay-models", key, build, suffix=".npz"))
    model.n_jobs = n_jobs
    model.spec = parse_spec(BASELINE)
    return model


# ------------------------------------------------------------------------------------------
# Tasks


def _sample(frame: pd.DataFrame, limit: int, seed: int) -> pd.DataFrame:
    """At most ``limit`` rows, a seeded sample kept in the part's order."""
    if len(frame) <= limit:
        return frame.reset_index(drop=True)
    return frame.sample(n=limit, random_state=seed).sort_index().reset_index(drop=True)


def _setting(plan: SplitPlan, part: str, baseline: bool, quick: bool) -> dict[str, str]:
    kind, settings, _seed = _definition(plan, quick)
    setting = {**split_setting(kind, settings, part), **plan.setting}
    if kind == "reaction-type" and baseline:
        # the baseline is trained on the train part alone: no held-out reaction in training
        # (a user's model was trained on its own data, so nothing is claimed for it)
        setting["ood_train"] = "false"
    return setting


def _expected_items(plan: SplitPlan, part: str, quick: bool) -> int:
    """Test reactions the task scores (known without preparing data: the sizes are fixed)."""
    if quick:
        return QUICK_TEST
    sizes = {("chloro_suzuki", "test_ood"): 774}
    return min(FULL_TEST, sizes.get((plan.key, part), FULL_TEST))


def _ids(frame: pd.DataFrame) -> list[str]:
    """The reactions' ids, as the result names them (the cleaned set's ``source_row``)."""
    ids = _own_ids(frame, None)
    return ids if ids is not None else [str(i) for i in range(len(frame))]


def task_reactions(plan: SplitPlan, part: Part, ctx: AssayContext) -> pd.DataFrame:
    """The task's test reactions: a seeded sample of at most :data:`FULL_TEST` of the part
    (quick: :data:`QUICK_TEST`), kept in the part's order."""
    frame = test_part(plan, part.part, ctx.quick, ctx.n_jobs)
    return _sample(frame, QUICK_TEST if ctx.quick else FULL_TEST, ctx.seed)


def list_task(plan: SplitPlan, part: Part, ctx: AssayContext) -> TaskItems:
    """The task's test reactions (ids, their years as strata for the time split's parts) and
    the reactants a model is asked for :data:`K` ranked products of."""
    chosen = task_reactions(plan, part, ctx)
    strata = None
    if plan.key == "time" and "year" in chosen.columns:
        strata = [str(year) for year in chosen["year"].tolist()]
    return TaskItems(ids=_ids(chosen), items=truth_reactants(chosen, f"{plan.key} {part.part}").tolist(),
                     strata=strata, options={"k": K})


def run_task(plan: SplitPlan, part: Part, ctx: AssayContext) -> Result:
    """Prepare one task's test reactions, run the model on them, and score them."""
    baseline = is_baseline(ctx.spec)
    frame = test_part(plan, part.part, ctx.quick, ctx.n_jobs)
    chosen = task_reactions(plan, part, ctx)
    subset = None
    if ctx.limit is not None:  # a seeded subset, the same reactions for every model
        listing = list_task(plan, part, ctx)
        ids, subset = task_subset(ctx, listing.ids, listing.strata)
        wanted = set(ids)
        chosen = chosen[[i in wanted for i in listing.ids]].reset_index(drop=True)
    data_dir = Path(ctx.out_dir) / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    truth = data_dir / f"{plan.key}-{part.part}.parquet"
    write_table(chosen, truth)
    if baseline:
        model = baseline_model(plan, ctx.quick, ctx.n_jobs)
    else:
        model = load_model(ctx.spec, PROTOCOL, {**ctx.model_context, "n_jobs": ctx.n_jobs})
    result = evaluate(model=model, reference=truth, k=K, label=f"{plan.key} {part.part}", n_jobs=ctx.n_jobs,
                      dataset=DATASET, setting=_setting(plan, part.part, baseline, ctx.quick), seed=ctx.seed)
    kind, settings, seed = _definition(plan, ctx.quick)
    config = {**result.config, "split_definition": plan.definition, "split_settings": settings, "split_seed": seed,
              "test_reactions_in_part": len(frame), "test_sample": len(chosen), "sample_seed": ctx.seed,
              "data": (f"{QUICK_ROWS} raw reactions of whole patents (seed 0), cleaned" if ctx.quick
                       else "the whole bundled set, cleaned")}
    if baseline:
        config["trained_on"] = f"{plan.train_part} part ({model.training_report.get('n_reactions')} reactions)"
    return result.model_copy(update={"config": config, "quick": ctx.quick, "subset": subset})


def _top1(result: Result) -> str:
    value = result.metrics.get("top1_accuracy")
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "–"
    interval = result.intervals.get("top1_accuracy")
    if interval is not None and interval.low is not None and interval.high is not None:
        return f"{100 * value:.1f} % [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"
    return f"{100 * value:.1f} %"


class ReactionOodAssay(SuiteAssay):
    """The reaction-ood suite's assay (see the module docstring)."""

    baseline = BASELINE
    quick_note = (f"the same {sum(len(p.parts) for p in SPLITS)} tasks on {QUICK_TEST} test reactions each, with "
                  f"the splits made from {QUICK_ROWS:,} raw reactions of whole patents (seed 0) instead of the "
                  f"whole set ({FULL_TEST:,} per task)")

    def tasks(self, protocols: set[str], *, quick: bool, spec: str, limit: int | None = None) -> list[AssayTask]:
        """One task per evaluated part of each split (:data:`SPLITS`); with ``limit``, at most
        ``limit`` test reactions each."""
        if PROTOCOL not in protocols:
            return []
        baseline = is_baseline(spec)
        tasks = []
        for plan in SPLITS:
            for part in plan.parts:
                items = _expected_items(plan, part.part, quick)
                items = min(items, limit) if limit is not None else items
                tasks.append(AssayTask(
                    key=f"{plan.key}-{part.part}", title=part.title, protocol=PROTOCOL, dataset=DATASET,
                    setting=_setting(plan, part.part, baseline, quick), items=items, requests=items,
                    run=_runner(plan, part), listing=partial(list_task, plan, part), headline=("top1_accuracy",),
                ))
        return tasks

    def verdict(self, results: list[Result]) -> str:
        """Top-1 accuracy (95 % interval) in distribution and out, split by split."""
        found: dict[tuple[str, str, str], Result] = {}
        for result in results:
            if result.task == "evaluate":
                setting = result.setting
                found[(setting.get("split", ""), setting.get("held_out", ""), setting.get("part", ""))] = result

        def gap(ood: Result, ind: Result | None, words: str) -> str:
            if ind is None:
                return ""
            a, b = ood.metrics.get("top1_accuracy"), ind.metrics.get("top1_accuracy")
            if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (a, b)):
                return ""
            return f" ({100 * (a - b):+.1f} points vs {words} {100 * b:.1f} %)"

        lines = (
            ("random", "", "test", "random", "", ""),
            ("document", "", "test_ood", "new patents", "test", "seen patents"),
            ("time", "", "test_ood", f"years after {TIME_CUTOFF}", "test", "earlier years"),
            ("reaction-type", "all-suzuki", "test_ood", "held-out Suzuki", "test", "other classes"),
            ("reaction-type", "chloro-suzuki", "test_ood", "held-out chloro-Suzuki", "", ""),
        )
        parts = []
        for split, held_out, part, words, reference, reference_words in lines:
            result = found.get((split, held_out, part))
            if result is not None:
                compared = found.get((split, held_out, reference)) if reference else None
                parts.append(f"{words} {_top1(result)}{gap(result, compared, reference_words)}")
        return ("top-1 " + "; ".join(parts)) if parts else ""


def _runner(plan: SplitPlan, part: Part) -> Callable[[AssayContext], Result]:
    def run(ctx: AssayContext) -> Result:
        return run_task(plan, part, ctx)

    return run


ASSAY = ReactionOodAssay()
"""The suite's assay, declared in :mod:`chemassay.suites.reaction_ood.suite`."""


DEMO_NOTES = """
The baseline is the template-kNN, trained on each split's training part (templates
extracted from the shipped atom maps of Schneider 50k). The verdict gives each test set's
top-1 with its interval and the gap to the in-distribution part: held-out reaction types
(Suzuki couplings) collapse to 0 %, as a template model cannot invent a reaction type it has
not seen; whether new patents and later years are harder is read from the intervals (on
these 1,000-reaction samples the new-patent gap lies within them; docs/reaction-ood.md gives
the whole parts).
"""
"""What the demo says of this suite's baseline (``Suite.demo_notes``)."""
