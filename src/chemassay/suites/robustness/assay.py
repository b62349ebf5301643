"""The robustness suite's part in ``chemassay assay``: AMORE's headline settings.

For an encoder (protocol ``encoder``): retrieval on the two molecule sets AMORE measured on
and chemassay ships, ChEBI-20 (3,300 test molecules; the paper's Tables 1 and 3) and the QM9
isomers (918, all C7H10O2; Table 2), under the paper's four rewrites — RDKit canonical,
explicit hydrogens, Kekulé form and ring-closure renumbering in AMORE's scope
(``cycle_renumber_amore``, the paper's "cycle") — scored in both directions
(original→augmented and back). For a property predictor (protocol ``property-predictor``):
the downstream task, the same four rewrites of the bundled measured solubility test set
(Huuskonen logS, 257 molecules; the model is trained on, or was fitted to, its 1,025
training molecules). AMORE's own downstream tables are MoleculeNet sets chemassay does not
ship, so this result stands apart from them; it is there because a property model's answers
changing under a rewrite is the paper's second finding, and a user's property model can
only be asked that on data it can be scored on here.

The built-in baseline is ``fingerprint`` (Morgan counts, computed from the graph: the
invariant upper bound), an encoder, so ``assay`` without a model runs the two retrieval
tasks; ``--model rf-fingerprint`` runs the downstream baseline. The data ships with
chemassay; the rewrites are computed once and cached (``robustness/augmented``).

``--limit N`` runs each task on a seeded subset of at most ``N`` molecules, the same for every
model with the same seed. The two AMORE sets are two tasks; within a set the subset is
stratified by rewrite class — which of the four rewrites change a molecule's SMILES at all (a
molecule without aromatic rings has no Kekulé form to rewrite, one without rings no ring
closure to renumber) — so each class keeps its share. Retrieval among fewer candidates is
easier, so such a result is shown beside the paper's rows with its intervals, marked as a
subset, and never ranked. The solubility test set has no strata.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from chemassay.contract.assay import (
    ENDPOINT_KINDS,
    AssayContext,
    AssayTask,
    SuiteAssay,
    TaskItems,
    metric_text,
)
from chemassay.contract.result import Result
from chemassay.data.registry import load_dataset
from chemassay.models.budget import chunk_requests
from chemassay.models.spec import option_bool, option_int, parse_spec
from chemassay.report.subsets import task_subset
from chemassay.suites.robustness.amore import augmented_rows
from chemassay.suites.robustness.api import _property_file
from chemassay.suites.robustness.downstream import read_property_csv

PAPER_AUGMENTATIONS: tuple[str, ...] = ("canonical", "explicit_h", "kekulize", "cycle_renumber_amore")
"""AMORE's four rewrites (its columns canon, hydro, kekul, cycle), in chemassay's names."""

AMORE_SETS: dict[str, tuple[str, str, int]] = {
    "chebi20": ("amore-chebi20", "ChEBI-20 test set (Tables 1 and 3)", 3300),
    "isomers": ("amore-isomers", "QM9 isomers C7H10O2 (Table 2)", 918),
}
"""AMORE's name of each set → (registered dataset, what the paper reports on it, molecules)."""

DOWNSTREAM_DATASET = "solubility-huuskonen"
DOWNSTREAM_TEST = 257
QUICK_ITEMS = 50
"""Molecules per task in ``--quick``: the first 50 of each set (and of the solubility test set)."""
QUICK_TREES = 50
"""Trees of a built-in forest in ``--quick`` (200 in the full run)."""
EMBEDDINGS_BATCH = 64
"""Texts per ``/v1/embeddings`` request of an ``openai:`` encoder unless its spec says ``batch=``."""


def list_molecules(name: str, ctx: AssayContext) -> TaskItems:
    """An AMORE set's molecules (quick: the first :data:`QUICK_ITEMS`), their rewrite class as
    strata (the rewrites that change the SMILES, ``+``-joined; ``none``), and the strings an
    encoder embeds for each: the original and its four rewrites (a rewrite that does not apply
    embeds the original again)."""
    table = load_dataset(AMORE_SETS[name][0])
    if ctx.quick:
        table = table.subset([i < QUICK_ITEMS for i in range(len(table))])
    rewrites = [augmented_rows(table, kind, seed=ctx.seed, n_jobs=ctx.n_jobs) for kind in PAPER_AUGMENTATIONS]
    texts, strata = [], []
    for index, smiles in enumerate(table.smiles):
        written = [rows[index].augmented or rows[index].original for rows in rewrites]
        texts.append([smiles, *written])
        changed = [kind for kind, text in zip(PAPER_AUGMENTATIONS, written, strict=True) if text != smiles]
        strata.append("+".join(changed) or "none")
    return TaskItems(ids=[str(i) for i in table.ids], items=list(table.smiles), strata=strata, texts=texts)


def _amore_run(name: str, ctx: AssayContext) -> Result:
    from chemassay.suites.robustness import api

    molecules, subset = None, None
    if ctx.limit is not None:  # stratified by rewrite class, the same molecules for every model
        listing = list_molecules(name, ctx)
        molecules, subset = task_subset(ctx, listing.ids, listing.strata)
    result = api.evaluate(model=ctx.spec, reference=AMORE_SETS[name][0], augmentations=PAPER_AUGMENTATIONS,
                          n_jobs=ctx.n_jobs, seed=ctx.seed, context=dict(ctx.model_context),
                          limit=QUICK_ITEMS if ctx.quick else None, molecules=molecules)
    return result.model_copy(update={"quick": ctx.quick, "subset": subset})


def list_test_molecules(ctx: AssayContext) -> TaskItems:
    """The solubility test set's molecules (quick: the first :data:`QUICK_ITEMS`), ids their
    file lines, as :func:`~chemassay.suites.robustness.api.downstream` names them."""
    path, _dataset = _property_file(DOWNSTREAM_DATASET)
    prepared = read_property_csv(path, targets=["logS"], seed=ctx.seed)
    count = QUICK_ITEMS if ctx.quick else len(prepared.test_lines)
    return TaskItems(ids=[str(line) for line in prepared.test_lines[:count]],
                     items=list(prepared.test_smiles[:count]))


def _downstream_run(ctx: AssayContext) -> Result:
    from chemassay.suites.robustness import api

    lines, subset = None, None
    if ctx.limit is not None:  # a seeded subset of the test molecules, the same for every model
        ids, subset = task_subset(ctx, list_test_molecules(ctx).ids)
        lines = [int(i) for i in ids]
    result = api.downstream(ctx.spec, DOWNSTREAM_DATASET, targets=["logS"], augmentations=PAPER_AUGMENTATIONS,
                            n_estimators=QUICK_TREES if ctx.quick else 200, n_jobs=ctx.n_jobs, seed=ctx.seed,
                            context=dict(ctx.model_context), limit=QUICK_ITEMS if ctx.quick else None, lines=lines)
    return result.model_copy(update={"quick": ctx.quick, "subset": subset})


def embedding_requests(calls: Sequence[Sequence[str]], *, batch: int, cache: bool = True, probe: bool = False) -> int:
    """HTTP requests an ``/v1/embeddings`` client sends for these encode calls, in order: each
    call asks for its distinct texts once (the run pipeline merges identical items) and sends
    those no earlier call sent (the response cache answers those, when on) in chunks of
    ``batch``; with ``probe`` (a client without ``pooling=``) the first call's first text goes
    alone (is the endpoint sending one vector per input?)."""
    sent: set[str] = set()
    requests = 0
    for number, texts in enumerate(calls):
        todo = [text for text in dict.fromkeys(texts) if not (cache and text in sent)]
        requests += chunk_requests(len(todo), batch, probe=probe and number == 0)
        sent.update(texts)
    return requests


def _endpoint_requests(spec: str, name: str, limit: int | None) -> int | None:
    """Exact requests of an endpoint encoder on one AMORE set (``None`` for a local model):
    the originals, then each rewrite (computed now, and cached for the run)."""
    parsed = parse_spec(spec)
    if parsed.kind not in ENDPOINT_KINDS:
        return None

    table = load_dataset(AMORE_SETS[name][0])
    if limit is not None:
        table = table.subset([i < limit for i in range(len(table))])
    calls = [table.smiles] + [[row.augmented or row.original for row in augmented_rows(table, kind)]
                              for kind in PAPER_AUGMENTATIONS]
    return embedding_requests(calls, batch=option_int(parsed, "batch", EMBEDDINGS_BATCH, minimum=1),
                              cache=option_bool(parsed, "cache", True), probe=not parsed.options.get("pooling"))


def _percent(result: Result, key: str) -> str:
    return metric_text(result, key, label="", percent=True)


def _signed(result: Result, key: str) -> str:
    value = result.metrics.get(key)
    if not isinstance(value, (int, float)) or value != value:
        return "–"
    text = f"{value:+.3f}"
    interval = result.intervals.get(key)
    if interval is not None and interval.low is not None and interval.high is not None:
        text += f" [{interval.low:+.3f}, {interval.high:+.3f}]"
    return text


class RobustnessAssay(SuiteAssay):
    """AMORE retrieval on ChEBI-20 and the isomers (encoders), and the downstream solubility
    task (property predictors); see the module docstring."""

    baseline = "fingerprint"
    quick_note = (f"the first {QUICK_ITEMS} molecules of ChEBI-20 and of the QM9 isomers (retrieval among "
                  f"{QUICK_ITEMS} candidates is easier than among 3,300 or 918), and the first {QUICK_ITEMS} "
                  f"molecules of the solubility test set (built-in forests with {QUICK_TREES} trees)")

    def tasks(self, protocols: set[str], *, quick: bool, spec: str, limit: int | None = None) -> list[AssayTask]:
        """Both AMORE sets for an encoder, the solubility downstream task for a property
        predictor; with ``limit``, at most ``limit`` molecules each."""
        tasks = []
        first = QUICK_ITEMS if quick else None
        cap = first or limit
        if "encoder" in protocols:
            for name, (dataset, title, size) in AMORE_SETS.items():
                items = min(size, cap) if cap else size
                tasks.append(AssayTask(
                    key=f"amore-{name}", title=f"AMORE retrieval, {title}, 4 rewrites, both directions",
                    protocol="encoder", dataset=dataset, setting={"dataset": name}, items=items,
                    run=partial(_amore_run, name), listing=partial(list_molecules, name),
                    headline=tuple(f"{kind}/o2a_acc@1" for kind in PAPER_AUGMENTATIONS),
                    # an endpoint: the exact count (with a limit: of the first molecules, the dry run
                    # counts the subset's); any other encoder: the strings it is asked to embed
                    requests=_endpoint_requests(spec, name, cap) or (1 + len(PAPER_AUGMENTATIONS)) * items,
                ))
        if "property-predictor" in protocols:
            items = min(DOWNSTREAM_TEST, cap) if cap else DOWNSTREAM_TEST
            tasks.append(AssayTask(
                key="downstream-solubility",
                title="downstream: measured solubility (logS) under the 4 rewrites (other data than AMORE's tables)",
                protocol="property-predictor", dataset=DOWNSTREAM_DATASET, setting={"task": "solubility"},
                items=items, run=_downstream_run, requests=(1 + len(PAPER_AUGMENTATIONS)) * items,
                listing=list_test_molecules,
            ))
        return tasks

    def verdict(self, results: list[Result]) -> str:
        """Original→augmented Acc@1 per rewrite on each set, and the downstream ΔMSE per rewrite."""
        parts = []
        for result in results:
            name = result.setting.get("dataset")
            if result.task == "evaluate" and name:
                cells = " · ".join(f"{kind} {_percent(result, f'{kind}/o2a_acc@1')}" for kind in PAPER_AUGMENTATIONS
                                   if f"{kind}/o2a_acc@1" in result.metrics)
                parts.append(f"{name} Acc@1 (n={result.n}) {cells}")
            elif result.task == "downstream":
                cells = " · ".join(f"{kind} {_signed(result, f'{kind}/mse_drop')}" for kind in PAPER_AUGMENTATIONS
                                   if f"{kind}/mse_drop" in result.metrics)
                rmse = result.metrics.get("original/rmse")
                head = f"solubility RMSE {rmse:.3f}" if isinstance(rmse, float) else "solubility"
                parts.append(f"{head} (n={result.n}), ΔMSE under rewrites: {cells or 'n/a'}")
        line = "; ".join(parts)
        if any(result.quick for result in results):
            line += f" (quick: first {QUICK_ITEMS} molecules)"
        return line


ASSAY = RobustnessAssay()
"""The robustness suite's assay (``Suite.assay``)."""


DEMO_NOTES = """
The baseline `fingerprint` (Morgan counts, read from the molecular graph) is AMORE's
invariant upper bound: it finds almost every molecule again under every rewrite, missing
only molecules whose fingerprints coincide exactly. A string model (`--model char-ngram`, a
language model with `hf:DIR`) shows the drop the paper reports.
"""
"""What the demo says of this suite's baseline (``Suite.demo_notes``)."""
