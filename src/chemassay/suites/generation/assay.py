"""The generation suite's part in ``chemassay assay``: MOSES, 30,000 samples.

The MOSES protocol (Tables 1-4 of the paper) draws 30,000 SMILES from a generator and scores
them with every MOSES metric against the authors' published statistics of the test and
scaffold-test sets (FCD, SNN, Frag, Scaf), with Novelty against the full training split. The
assay runs exactly that for the model named by its spec (the built-in baseline is ``ngram``:
the character n-gram model trained once on the full MOSES train split, 1,584,663 SMILES, and
kept in chemassay's cache); MOSES is fetched on first use (``chemassay data fetch moses``) and
its statistics are cached. The samples are kept beside the result
(``OUT/generation/moses.samples.<hash of the spec>.txt``) with the property-distribution
picture. The result carries ``dataset = moses``, the data of the published MOSES tables, so
the report ranks it beside their rows.

``--quick`` draws :data:`QUICK_SAMPLES` samples instead: a smoke test of the whole pipeline
whose numbers are not comparable with the paper's (see :data:`QUICK_NOTE`).

``--limit N`` draws ``N`` samples (at most 30,000) with the assay's seed: a generator's items
are its sample slots, not items to choose among, so the subset is the first ``N`` (no strata).
As with ``--quick``, unique@10000, FCD, Frag and Scaf then depend on the smaller sample.

A generator behind an endpoint (``openai:...``) is asked for ``batch=`` molecules per request
(50 unless the spec says otherwise), so the assay sends at least ``ceil(n / batch)``
requests: 600 for 30,000 samples, 20 for the quick run (a model that answers with fewer lines
than asked is asked again, up to three times as many requests).
"""

from __future__ import annotations

import hashlib
import math
from functools import partial

from chemassay.contract.assay import AssayContext, AssayTask, SuiteAssay, TaskItems, metric_text
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import Result
from chemassay.models.spec import parse_spec
from chemassay.report.published import reference_results
from chemassay.report.subsets import task_subset
from chemassay.suites.generation.api import evaluate

PROTOCOL = "generator"
TASK_KEY = "moses"
N_SAMPLES = 30_000
"""Samples of the MOSES protocol."""
QUICK_SAMPLES = 1_000
"""Samples of ``--quick``."""
DEFAULT_BATCH = 50
"""Molecules a text generator asks for per request when its spec sets no ``batch=`` (the
default of :class:`chemassay.models.text_model.TextModel`)."""
REFERENCES = {"reference": "moses", "scaffold_test": "moses", "train": "moses"}
"""The sets the samples are scored against: the MOSES protocol (published statistics of the
test and scaffold-test sets, Novelty against the full train split)."""
QUICK_NOTE = (
    f"{QUICK_SAMPLES:,} samples instead of {N_SAMPLES:,} (seed 0), scored against the same MOSES "
    "references; not comparable with the paper: unique@10000 (and unique@1000 when fewer than 1,000 "
    "samples are valid) is computed over fewer molecules than its name says, and FCD, Frag and Scaf "
    "depend on the sample size (FCD and Scaf are far from their 30,000-sample values)"
)


def requests_for(spec: str, n: int) -> int:
    """Requests a text generator behind an endpoint receives for ``n`` samples: one per
    ``batch`` molecules (the spec's ``batch=``, else :data:`DEFAULT_BATCH`), at least."""
    try:
        batch = int(parse_spec(spec).options.get("batch", DEFAULT_BATCH))
    except (UserInputError, ValueError):
        batch = DEFAULT_BATCH
    return math.ceil(n / max(1, batch))


def samples_path(ctx: AssayContext) -> str:
    """Where the task writes the drawn samples: one file per model (a short hash of its spec)."""
    digest = hashlib.sha256(ctx.spec.encode("utf-8")).hexdigest()[:10]
    return str(ctx.out_dir / f"{TASK_KEY}.samples.{digest}.txt")


def list_samples(ctx: AssayContext, *, n: int) -> TaskItems:
    """The ``n`` sample slots (ids ``0..n-1``) a generator is asked for with the assay's seed;
    a subset takes the first ones (``method="first"``)."""
    return TaskItems(ids=[str(i) for i in range(n)], items=list(range(n)), options={"seed": ctx.seed},
                     method="first")


def run_moses(ctx: AssayContext, *, n: int) -> Result:
    """Draw ``n`` samples (with ``ctx.limit``: at most that many) from the model with the
    assay's seed and score them with every MOSES metric (published test statistics, Novelty
    against the full train split)."""
    subset = None
    if ctx.limit is not None:
        ids, subset = task_subset(ctx, list_samples(ctx, n=n).ids, method="first")
        n = len(ids)
    result = evaluate(model=ctx.spec, n=n, seed=ctx.seed, **REFERENCES, n_jobs=ctx.n_jobs,
                      out=samples_path(ctx), plot=ctx.out_dir / f"{TASK_KEY}.properties.png",
                      context=ctx.model_context, progress=False)
    return result.model_copy(update={"quick": ctx.quick, "subset": subset})


def _value(result: Result, key: str, label: str | None = None) -> str:
    if label is None and key.startswith("unique@"):
        from chemassay.suites.generation.metrics import unique_computed_on

        size = unique_computed_on(result, key)  # fewer valid molecules than k: the value is unique@size
        label = f"unique@{size:,}" if size is not None else None
    return metric_text(result, key, label=label)


def best_published_fcd() -> tuple[str, float] | None:
    """The lowest FCD/Test among the MOSES paper's model rows (model, value)."""
    best: tuple[str, float] | None = None
    for record in reference_results("generation"):
        value = record.metrics.get("FCD/Test")
        if value is None or value.value is None or record.model.lower() == "train":
            continue
        if best is None or value.value < best[1]:
            best = (record.model, value.value)
    return best


class GenerationAssay(SuiteAssay):
    """MOSES, 30,000 samples (Tables 1-4); see the module docstring."""

    baseline = "ngram"
    quick_note = QUICK_NOTE

    def tasks(self, protocols: set[str], *, quick: bool, spec: str, limit: int | None = None) -> list[AssayTask]:
        """One task: the MOSES protocol with 30,000 samples (quick: 1,000; with ``limit``: at
        most ``limit``)."""
        if PROTOCOL not in protocols:
            return []
        n = QUICK_SAMPLES if quick else N_SAMPLES
        drawn = min(n, limit) if limit is not None else n
        title = f"MOSES Tables 1-4: {drawn:,} samples" + (" (quick)" if quick else "")
        return [AssayTask(key=TASK_KEY, title=title, protocol=PROTOCOL, dataset="moses", setting={}, items=drawn,
                          run=partial(run_moses, n=n), requests=requests_for(spec, drawn),
                          listing=partial(list_samples, n=n), headline=("valid",))]

    def verdict(self, results: list[Result]) -> str:
        """``valid 0.238 [...], unique@10000 ..., FCD/Test 5.51, SNN/Test ..., Frag/Test ...,
        Scaf/Test ..., IntDiv ..., Filters ..., Novelty ... on 30,000 samples; the paper's best
        FCD/Test: ...``."""
        parts = []
        for result in results:
            keys = ("valid", "unique@10000", "FCD/Test", "SNN/Test", "Frag/Test", "Scaf/Test", "IntDiv", "Filters",
                    "Novelty")
            text = ", ".join(_value(result, key) for key in keys)
            counts = result.details.counts if result.details is not None and hasattr(result.details, "counts") else None
            text += f" on {counts.input:,} samples" if counts is not None else ""
            if result.quick:
                text += " [quick subset: not comparable with the paper]"
            parts.append(text)
        line = "; ".join(parts)
        best = best_published_fcd()
        if best is not None:
            line += f"; MOSES Table 3's lowest FCD/Test: {best[0]} {best[1]:.3f}"
        return line


ASSAY = GenerationAssay()


DEMO_NOTES = """
The baseline is the MOSES character n-gram (contexts of up to 10 characters, back-off and
smoothing 0.01 as in the MOSES reference code) trained on the full MOSES train split, 30,000
samples with seed 0, scored with every MOSES metric against the published statistics of
the test and scaffold test sets. The first run trains it (about 20 s on a quiet machine);
later runs reuse it.
"""
"""What the demo says of this suite's baseline (``Suite.demo_notes``)."""
