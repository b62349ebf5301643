"""The robustness suite's Python API (``chemassay.robustness``): AMORE retrieval, SMILES
augmentations, downstream robustness of property models, and the SMILES language model.

* :func:`evaluate` — retrieval between originals and their rewritten forms: either two
  embedding sets you computed (arrays or ``.npy``/``.npz`` files), or a model spec (or
  object) run over a dataset's augmentations (or over an original/augmented pair of files);
* :func:`augment` — one identity-checked augmentation of a molecule set;
* :func:`downstream` — a property model on the original and augmented test sets;
* :func:`train` — the small SMILES masked language model (a Hugging Face checkpoint);
* :func:`load_dataset` — ``chebi20``, ``isomers``, ``solubility`` through the registry.

Every evaluating function returns a :class:`~chemassay.contract.result.Result`, the same one
the CLI writes with ``--out``.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from chemassay.chem.molecules import InvalidSmiles
from chemassay.contract import Options, Run
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import (
    DatasetRef,
    InputRef,
    ModelRef,
    Result,
    SkippedItem,
    input_ref,
    make_result,
)
from chemassay.data.registry import dataset_file, get_spec, is_dataset_name
from chemassay.data.registry import load_dataset as registry_load
from chemassay.models.gnn import GNNConfig, GNNEncoder
from chemassay.models.gnn import train_gnn as train_network
from chemassay.models.hf_encoder import checkpoint_digest
from chemassay.report.intervals import attach_intervals
from chemassay.runtime.files import sha256_file
from chemassay.suites.robustness.amore import (
    pair_skips,
    rows_to_csv,
    score_embeddings,
    string_statistics,
)
from chemassay.suites.robustness.augment import (
    AUGMENTATIONS,
    DEFAULT_AUGMENTATIONS,
    STATUS_FAILED,
    STATUS_NOT_APPLICABLE,
    STATUS_OK,
    AugmentedRow,
    augment_many,
    check_kind,
    molecule_identity,
)
from chemassay.suites.robustness.captions import read_captions, score_captions
from chemassay.suites.robustness.data import (
    MoleculeTable,
    amore_setting,
    dataset_ref,
    molecule_table,
)
from chemassay.suites.robustness.details import (
    PAIR,
    CaptionsDetails,
    DownstreamDetails,
    EvaluateDetails,
    IdentityMismatch,
    RetrievalMiss,
    TrainDetails,
)
from chemassay.suites.robustness.downstream import read_property_csv
from chemassay.suites.robustness.encoders import (
    check_embeddings,
    load_embeddings,
    load_encoder,
    nonfinite_rows,
)
from chemassay.suites.robustness.lm import (
    FAMILIES,
    LMConfig,
    read_smiles_corpus,
    sample_corpus,
    train_smiles_lm,
)
from chemassay.suites.robustness.retrieval import DEFAULT_KS, resolve_backend

__all__ = [
    "AUGMENTATIONS",
    "DEFAULT_AUGMENTATIONS",
    "AugmentedSet",
    "augment",
    "captions",
    "downstream",
    "evaluate",
    "load_dataset",
    "train",
    "train_gnn",
]

SUITE = "robustness"
DOWNSTREAM_TASKS = {"solubility-huuskonen": "solubility"}
"""Bundled property dataset → the ``task`` setting of its downstream results (AMORE's tables
name theirs ``bace``, ``esol``...: other data, never ranked beside these)."""
PER_LAYER_KEYS = ("o2a_acc@1", "a2o_acc@1", "o2a_mrr", "a2o_mrr")
"""Per-layer metrics an all-layers run over augmentations puts in ``metrics``."""

EmbeddingsInput = Any
"""An ``(n, d)`` array (dense or scipy sparse), a list of them (one per layer), an
``(layers, n, d)`` array, or the path of a ``.npy``/``.npz`` file."""


def load_dataset(name: str, part: str | None = None, **options: Any) -> Any:
    """A registered dataset by name or alias, through its registry loader: ``chebi20`` /
    ``isomers`` give a :class:`~.data.MoleculeTable` of the AMORE originals, ``solubility``
    (parts ``train``/``test``) a table with ``logS``, ``solubility_class`` and ``split``
    columns. Same as :func:`chemassay.load_dataset`."""
    return registry_load(name, part, **options)


# -- evaluate --------------------------------------------------------------------------------
def _ks(k: int | Sequence[int]) -> tuple[int, ...]:
    values = (k,) if isinstance(k, int) else tuple(k)
    try:
        ks = tuple(sorted({int(v) for v in values}))
    except (TypeError, ValueError):
        raise UserInputError(f"k must be whole numbers, got {k!r}") from None
    if not ks or ks[0] < 1:
        raise UserInputError(f"k values must be 1 or more, got {k!r}")
    return ks


def _augmentation_list(augmentations: str | Sequence[str]) -> list[str]:
    items = augmentations.split(",") if isinstance(augmentations, str) else list(augmentations)
    kinds = [check_kind(str(a).strip()) for a in items if str(a).strip()]
    if not kinds:
        raise UserInputError(f"no augmentation given; choose from {', '.join(AUGMENTATIONS)}")
    return kinds


def _embedding_layers(value: EmbeddingsInput, what: str) -> tuple[list, InputRef | None]:
    if isinstance(value, (str, os.PathLike)):
        layers = load_embeddings(value)
        return layers, input_ref(value)
    if sparse.issparse(value):
        return check_embeddings([value], what), None
    if isinstance(value, (list, tuple)) and value and (sparse.issparse(value[0]) or np.ndim(value[0]) == 2):
        return check_embeddings(list(value), what), None
    array = np.asarray(value)
    if array.ndim == 3:
        return check_embeddings(list(array), what), None
    return check_embeddings([array], what), None


def _array_digest(layers: list) -> str:
    digest = hashlib.sha256()
    for layer in layers:
        if sparse.issparse(layer):
            csr = sparse.csr_matrix(layer)
            for part in (csr.data, csr.indices, csr.indptr, np.asarray(csr.shape)):
                digest.update(np.ascontiguousarray(part).tobytes())
        else:
            array = np.ascontiguousarray(layer)
            digest.update(str((array.dtype.str, array.shape)).encode())
            digest.update(array.tobytes())
    return digest.hexdigest()


def _embeddings_ref(original: list, augmented: list, inputs: list[InputRef]) -> ModelRef:
    if inputs:
        checksum = hashlib.sha256("".join(ref.sha256 or "" for ref in inputs).encode()).hexdigest()
        return ModelRef(spec=f"predictions:{inputs[0].path}", name="precomputed embeddings", kind="predictions",
                        parameters={"original": inputs[0].path, "augmented": inputs[1].path}, checksum=checksum)
    checksum = hashlib.sha256((_array_digest(original) + _array_digest(augmented)).encode()).hexdigest()
    return ModelRef(spec="predictions:<memory>", name="in-memory embeddings", kind="predictions", checksum=checksum)


def _layer_metrics(per_layer: list[dict[str, float]], prefix: str = "") -> dict[str, float]:
    return {f"{prefix}layer{layer}/{key}": value for layer, values in enumerate(per_layer)
            for key, value in values.items()}


def _finish(result: Result, bootstrap: int, seed: int) -> Result:
    return attach_intervals(result, resamples=bootstrap, seed=seed)


def _skipped_items(entries: Sequence[dict]) -> list[SkippedItem]:
    """``Result.skipped`` from the pipeline's skip records; the augmentation a record names
    (one molecule may be skipped under one rewrite and scored under the others) leads its reason."""
    items = []
    for entry in entries:
        reason = str(entry["reason"])
        if entry.get("augmentation"):
            reason = f"{entry['augmentation']}: {reason}"
        items.append(SkippedItem(line=entry.get("line"), item=None if entry.get("item") is None else str(entry["item"]),
                                 index=entry.get("index"), reason=reason))
    return items


@dataclass
class _Scoring:
    """How :func:`evaluate` scores retrieval, whichever of its three forms: the cut-offs, the
    distance, the tie order, the backend, the layers, the common options and the config."""

    ks: tuple[int, ...]
    metric: str
    ties: str
    backend: str
    layers: str
    options: Options
    config: dict[str, Any]
    started: float


def _described(encoder: Any) -> dict[str, Any]:
    """The settings an encoder reports (``describe()``), for the result's config."""
    describe = getattr(encoder, "describe", None)
    described = describe() if callable(describe) else {}
    return described if isinstance(described, dict) else {}


def _score_pair_result(
    original_layers: list, augmented_layers: list, *, ids: Sequence[str], keep: np.ndarray, skipped: list[dict],
    details: EvaluateDetails, scoring: _Scoring, inputs: list[InputRef], dataset, model: ModelRef | None = None,
    run: Run | None = None,
) -> Result:
    if not keep.any():
        reasons = sorted({entry["reason"] for entry in skipped})
        raise UserInputError(f"no pair left to score: every row was skipped ({'; '.join(reasons)[:200]})")
    scores = score_embeddings(original_layers, augmented_layers, keep=keep, metric=scoring.metric, ties=scoring.ties,
                              backend=scoring.backend, ks=scoring.ks)
    metrics = dict(scores.metrics)
    if len(scores.per_layer) > 1:
        metrics.update(_layer_metrics(scores.per_layer))
        details.per_layer = {PAIR: scores.per_layer}
    # One pair: the scored rows are the items (left-out rows are in ``skipped``).
    item_scores = {key: [float(v) for v in values] for key, values in scores.per_query.items()}
    result = make_result(
        SUITE, "evaluate", model=model, run=run, list_failures=False, metrics=metrics, n=int(len(scores.kept)),
        started=scoring.started, inputs=inputs, item_ids=[str(ids[i]) for i in scores.kept], item_scores=item_scores,
        skipped=_skipped_items(skipped), dataset=dataset,
        setting=amore_setting(dataset.name if dataset is not None else None), config=scoring.config, details=details,
    )
    return _finish(result, scoring.options.bootstrap, scoring.options.seed)


def _identity_mismatches(orig_smiles: Sequence[str], aug_smiles: Sequence[str], keep: np.ndarray) -> list[int]:
    bad = []
    for index in np.flatnonzero(keep):
        try:
            if molecule_identity(orig_smiles[index]) != molecule_identity(aug_smiles[index]):
                bad.append(int(index))
        except InvalidSmiles:
            bad.append(int(index))
    return bad


def _lines(values: Sequence[int], limit: int = 5) -> str:
    shown = ", ".join(str(v) for v in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def evaluate(
    original_embeddings: EmbeddingsInput | None = None,
    augmented_embeddings: EmbeddingsInput | None = None,
    *,
    model: Any = None,
    reference: str | os.PathLike | Sequence[str] | MoleculeTable = "chebi20",
    augmented: str | os.PathLike | Sequence[str] | MoleculeTable | None = None,
    augmentations: str | Sequence[str] = DEFAULT_AUGMENTATIONS,
    layers: str = "last",
    metric: str = "l2",
    ties: str = "index",
    backend: str = "auto",
    k: int | Sequence[int] = DEFAULT_KS,
    ids: Sequence[str] | None = None,
    check_identity: bool = True,
    drop_mismatched: bool = False,
    smiles_column: str | None = None,
    seed: int | None = None,
    bootstrap: int | None = None,
    limit: int | None = None,
    n_jobs: int | None = None,
    cache: bool | None = None,
    context: dict[str, Any] | None = None,
    options: Options | None = None,
    molecules: Sequence[str] | None = None,
) -> Result:
    """AMORE retrieval: can each molecule be found again from a rewritten SMILES of itself?

    Three ways to call it. (1) ``evaluate(original_embeddings, augmented_embeddings)``:
    row ``i`` of both sets is the same molecule (arrays, lists of per-layer arrays, or
    ``.npy``/``.npz`` paths), scored as given; Acc@k and MRR in both directions (``o2a_*``:
    originals query the augmented set; ``a2o_*``: the reverse). (2) ``evaluate(model=SPEC,
    reference=...)``: the encoder (a spec such as ``fingerprint``, ``char-ngram``, ``hf:DIR``,
    ``openai:NAME,base_url=URL``, or an object with ``encode``) embeds the reference molecules
    (a dataset name — ``chebi20`` by default, ``isomers`` — a CSV/TSV path or a list of SMILES)
    and each of their ``augmentations`` (default :data:`DEFAULT_AUGMENTATIONS`); keys are
    ``<augmentation>/<direction>_<metric>``. (3) ``evaluate(model=SPEC, reference=ORIG,
    augmented=AUG)``: one given pair of molecule files or lists, with an identity check of each
    pair (mismatches are warned about in ``result.warnings``; ``drop_mismatched`` leaves them
    out). The encoder is loaded once and runs through :func:`chemassay.models.run` (identical
    SMILES embedded once; the result's ``model`` and ``requests`` come from the run), behind
    the suite's embeddings cache. Ranks are exact, ties ordered by ``ties`` (``index`` =
    FAISS's order, as AMORE); ``k`` are the Acc@k (top-k) cut-offs; rows that cannot be scored
    (failed augmentation, unparsable SMILES, NaN embeddings) are left out of both sides and
    listed in ``skipped``. ``layers="all"`` scores every hidden layer. Per-molecule values of
    Acc@k, MRR and mean rank are in ``item_scores`` with ``bootstrap`` seeded intervals
    (``seed`` also seeds the random augmentations). The paper's table rows, per-layer metrics,
    string statistics and retrieval misses are in ``result.details``
    (:class:`~.details.EvaluateDetails`); a run over ``chebi20`` or ``isomers`` records
    ``setting={"dataset": ...}`` in the paper's words. ``limit`` scores only the first
    ``limit`` reference molecules (a smoke test: retrieval among fewer candidates is easier),
    ``molecules`` only the reference molecules of those ids (a seeded subset: ``chemassay assay
    --limit``; retrieval among them, likewise easier).

    The common options (``seed``, ``bootstrap``, ``limit``, ``n_jobs``: augmentation workers,
    ``cache``, ``context``: the settings a spec is loaded with) may come as one ``options``
    object (:class:`~chemassay.contract.Options`). ``cache`` is on unless said otherwise (an
    ``options`` object says so itself): it reuses the suite's cached rewrites and embeddings.
    This command writes no model outputs, so ``out`` is refused.

    >>> import numpy as np
    >>> import chemassay.robustness as robustness
    >>> originals = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> robustness.evaluate(originals, originals + 0.1).metrics["o2a_acc@1"]
    1.0
    >>> result = robustness.evaluate(model="fingerprint", reference="isomers", augmentations=["kekulize"],
    ...                              cache=False, bootstrap=100)
    >>> result.n, round(result.metrics["kekulize/o2a_acc@1"], 3)
    (918, 0.993)
    """
    options = Options.merged(options or Options(cache=True), seed=seed, bootstrap=bootstrap, limit=limit,
                             n_jobs=n_jobs, cache=cache, context=context)
    if options.out is not None:
        raise UserInputError("robustness evaluate writes no model outputs: leave out 'out' (--per-row and --table "
                             "write its per-molecule ranks and its table)")
    ks = _ks(k)
    if layers not in ("last", "all"):
        raise UserInputError(f"layers must be 'last' or 'all', got {layers!r}")
    config = {"metric": metric, "ties": ties, "backend": resolve_backend(backend), "k": list(ks)}
    scoring = _Scoring(ks, metric, ties, backend, layers, options, config, time.perf_counter())
    if (original_embeddings is None) != (augmented_embeddings is None):
        raise UserInputError("give both embedding sets (original and augmented), or neither and a model")
    if options.limit is not None and (options.limit < 1 or original_embeddings is not None or augmented is not None):
        raise UserInputError("limit must be 1 or more, and applies to a dataset's augmentations only")
    if molecules is not None and (original_embeddings is not None or augmented is not None):
        raise UserInputError("molecules applies to a dataset's augmentations only")
    if original_embeddings is not None:
        if model is not None:
            raise UserInputError("give embeddings or a model, not both")
        return _evaluate_embeddings(original_embeddings, augmented_embeddings, ids, scoring)
    if model is None:
        raise UserInputError("nothing to evaluate: give two embedding sets, or model=SPEC with a dataset")
    loaded = load_encoder(model, layers, dict(options.context))
    scoring.config = {**_described(loaded.model_object), **config, "layers": layers}
    if augmented is not None:
        return _evaluate_pair(loaded, reference, augmented, scoring, check_identity=check_identity,
                              drop_mismatched=drop_mismatched, smiles_column=smiles_column)
    return _evaluate_augmentations(loaded, reference, _augmentation_list(augmentations), scoring,
                                   smiles_column=smiles_column, molecules=molecules)


def _evaluate_embeddings(original, augmented, ids: Sequence[str] | None, scoring: _Scoring) -> Result:
    """Form (1): two embedding sets, scored as they are (named like a predictions file)."""
    original_layers, original_ref = _embedding_layers(original, "original embeddings")
    augmented_layers, augmented_ref = _embedding_layers(augmented, "augmented embeddings")
    first = original_ref.path if original_ref else "original embeddings"
    second = augmented_ref.path if augmented_ref else "augmented embeddings"
    if len(original_layers) != len(augmented_layers):
        raise UserInputError(f"{second}: {len(augmented_layers)} layers but {first} has {len(original_layers)}")
    for index, (a, b) in enumerate(zip(original_layers, augmented_layers, strict=True)):
        if a.shape != b.shape:
            raise UserInputError(f"{second}: layer {index} has shape {b.shape}, {first} has {a.shape}; "
                                 "row i of both must be the same molecule")
    n = original_layers[0].shape[0]
    if n == 0:
        raise UserInputError(f"{first}: no embeddings (0 rows); nothing to score")
    if original_layers[0].shape[1] == 0:
        raise UserInputError(f"{first}: embeddings have 0 dimensions; nothing to score")
    ids = [str(i) for i in range(n)] if ids is None else [str(i) for i in ids]
    if len(ids) != n:
        raise UserInputError(f"{len(ids)} ids for {n} embedding rows; give one id per row")
    keep = np.ones(n, dtype=bool)
    skipped = []
    for side, layers_, name in (("original", original_layers, first), ("augmented", augmented_layers, second)):
        for row in nonfinite_rows(layers_):
            if keep[row]:
                keep[row] = False
                skipped.append({"item": ids[row], "index": int(row),
                                "reason": f"{side} embedding (row {int(row)} of {name}) has NaN or infinite values"})
    inputs = [ref for ref in (original_ref, augmented_ref) if ref is not None]
    scoring.config = {**scoring.config, "input": "embeddings", "layers": "all" if len(original_layers) > 1 else "last"}
    warnings = []
    if skipped:
        warnings.append(f"{len(skipped)} of {n} rows have NaN or infinite embedding values and were left out "
                        f"(rows {_lines([s['index'] for s in skipped])})")
    return _score_pair_result(original_layers, augmented_layers, ids=ids, keep=keep, skipped=skipped,
                              details=EvaluateDetails(warnings=warnings), scoring=scoring, inputs=inputs, dataset=None,
                              model=_embeddings_ref(original_layers, augmented_layers, inputs))


def _evaluate_pair(loaded: Run, originals, augmented, scoring: _Scoring, *, check_identity: bool,
                   drop_mismatched: bool, smiles_column: str | None) -> Result:
    """Form (3): one given pair of molecule lists, both embedded by the loaded encoder."""
    from chemassay.suites.robustness.encoders import encode_cached, nonfinite_rows

    orig_table, orig_bad, orig_kind = molecule_table(originals, smiles_column=smiles_column)
    aug_table, aug_bad, _ = molecule_table(augmented, smiles_column=smiles_column,
                                           keep_columns=("status", "reason", "original"))
    if orig_bad or aug_bad:
        where = orig_table.path if orig_bad else aug_table.path
        line, reason = (orig_bad or aug_bad)[0]
        raise UserInputError(f"{where}: line {line}: {reason}; original and augmented rows must stay aligned, fix the file")
    if len(orig_table) != len(aug_table):
        raise UserInputError(
            f"{aug_table.path or 'augmented'}: {len(aug_table)} rows but {orig_table.path or 'originals'} has "
            f"{len(orig_table)}; row i of both files must be the same molecule"
        )
    if not len(orig_table):
        raise UserInputError("no molecules to score")
    statuses = aug_table.columns.get("status")
    reasons = aug_table.columns.get("reason") or [""] * len(aug_table)
    rows = []
    for i, (smiles, text) in enumerate(zip(orig_table.smiles, aug_table.smiles, strict=True)):
        status = statuses[i].strip() if statuses else STATUS_OK
        if status not in (STATUS_OK, STATUS_NOT_APPLICABLE, STATUS_FAILED):
            raise UserInputError(f"{aug_table.path}: line {aug_table.lines[i]}: unknown status {status!r}")
        if not text and status != STATUS_FAILED:
            status, reasons[i] = STATUS_FAILED, "empty SMILES cell"
        if not smiles and status != STATUS_FAILED:
            status, reasons[i] = STATUS_FAILED, "original: empty SMILES cell"
        rows.append(AugmentedRow(i, smiles, text, status, reasons[i]))
    aug_text = [r.augmented or r.original for r in rows]
    encoder, use_cache = loaded.model_object, scoring.options.cache
    orig_set = encode_cached(encoder, orig_table.smiles, scoring.layers, use_cache=use_cache)
    aug_set = encode_cached(encoder, aug_text, scoring.layers, use_cache=use_cache)
    nonfinite = sorted(set(nonfinite_rows(orig_set.layers).tolist()) | set(nonfinite_rows(aug_set.layers).tolist()))
    keep, skipped = pair_skips(rows, orig_table, {**orig_set.failures, **aug_set.failures}, nonfinite)
    details = EvaluateDetails()
    if check_identity:
        mismatched = _identity_mismatches(orig_table.smiles, aug_text, keep)
        details.identity_mismatches = [IdentityMismatch(line=orig_table.lines[i], id=str(orig_table.ids[i]))
                                       for i in mismatched]
        if mismatched and drop_mismatched:
            keep[mismatched] = False
            skipped += [{"line": orig_table.lines[i], "item": orig_table.ids[i],
                         "reason": "augmented SMILES is not the same molecule"} for i in mismatched]
            details.warnings.append(f"{len(mismatched)} of {len(rows)} pairs are not the same molecule and were left "
                                    f"out (lines {_lines([orig_table.lines[i] for i in mismatched])})")
        elif mismatched:
            details.warnings.append(
                f"{len(mismatched)} of {len(rows)} pairs are not the same molecule (lines "
                f"{_lines([orig_table.lines[i] for i in mismatched])}): are the two files aligned row by row? "
                "They are scored as given, so each counts as a miss; drop_mismatched (--drop-mismatched) leaves them out"
            )
    details.not_applied = {PAIR: sum(r.status == STATUS_NOT_APPLICABLE for r in rows)}
    details.truncated = sorted(set(orig_set.truncated) | set(aug_set.truncated))
    kept = np.flatnonzero(keep)
    details.strings = {PAIR: string_statistics([orig_table.smiles[i] for i in kept], [aug_text[i] for i in kept])}
    inputs = [input_ref(t.path) for t in (orig_table, aug_table) if t.path is not None]
    scoring.config = {**scoring.config, "input": "molecules"}
    # the encoder's latest run (the loading one when the embeddings cache answered both lists)
    latest = aug_set.run or orig_set.run or loaded
    return _score_pair_result(orig_set.layers, aug_set.layers, ids=orig_table.ids, keep=keep, skipped=skipped,
                              details=details, scoring=scoring, inputs=inputs,
                              dataset=dataset_ref(orig_table, orig_kind), run=latest)


def _evaluate_augmentations(loaded: Run, reference, kinds: list[str], scoring: _Scoring, *,
                            smiles_column: str | None, molecules: Sequence[str] | None = None) -> Result:
    """Form (2): the reference molecules (only those of the ids ``molecules`` when given) and
    each of their rewrites, embedded by the loaded encoder and scored (AMORE's tables)."""
    from chemassay.suites.robustness.amore import run_amore

    options = scoring.options
    table, malformed, kind = molecule_table(reference, smiles_column=smiles_column)
    if options.limit is not None:
        # The first rows only (a smoke test): retrieval among fewer candidates is easier, so such
        # a result says so in its config and is never ranked against the full benchmark.
        table = table.subset([i < options.limit for i in range(len(table))])
    if molecules is not None:
        wanted = {str(i) for i in molecules}
        table = table.subset([i in wanted for i in table.ids])
    if not len(table):
        raise UserInputError(f"{table.path or table.name}: no molecules to score")
    outcome = run_amore(table, loaded.model_object, augmentations=kinds, layers=scoring.layers, metric=scoring.metric,
                        ties=scoring.ties, backend=scoring.backend, seed=options.seed, n_jobs=options.n_jobs,
                        use_cache=options.cache, ks=scoring.ks)
    if not any(outcome.n_scored.values()):
        reasons = sorted({entry["reason"] for entry in outcome.skipped})
        raise UserInputError(f"{table.path or table.name}: no molecule could be scored ({'; '.join(reasons)[:200]})")
    # Headline first (summaries show the first scalars): original->augmented Acc@1 of every augmentation.
    headline = {key: value for key, value in outcome.metrics.items() if key.endswith("/o2a_acc@1")}
    metrics = {**headline, **{key: value for key, value in outcome.metrics.items() if key not in headline}}
    details = EvaluateDetails(table=outcome.table_rows, not_applied=outcome.not_applied, strings=outcome.string_stats,
                              truncated=outcome.truncated, misses=[RetrievalMiss(**miss) for miss in outcome.misses])
    if any(len(values) > 1 for values in outcome.per_layer.values()):
        details.per_layer = outcome.per_layer
        for aug, per_layer in outcome.per_layer.items():
            for layer, values in enumerate(per_layer):
                for key in PER_LAYER_KEYS:
                    metrics[f"{aug}/layer{layer}/{key}"] = values[key]
    skipped = _skipped_items(outcome.skipped)
    skipped += [SkippedItem(line=line, reason=f"malformed input row: {reason}") for line, reason in malformed]
    if table.empty_lines:
        details.warnings.append(f"{len(table.empty_lines)} rows have an empty SMILES cell (lines "
                                f"{_lines(table.empty_lines)}); they are skipped")
    reference_ref = dataset_ref(table, kind)
    result = make_result(
        SUITE, "evaluate", run=outcome.run or loaded, list_failures=False, metrics=metrics,
        n=max(outcome.n_scored.values(), default=0), started=scoring.started,
        inputs=[table.path] if kind == "file" else [], item_ids=list(table.ids), item_scores=outcome.item_scores,
        skipped=skipped, dataset=reference_ref, setting=amore_setting(reference_ref.name),
        config={**scoring.config, "input": "dataset", "augmentations": list(kinds), "seed": options.seed,
                **({"limit": options.limit} if options.limit is not None else {}),
                **({"molecules": len(table)} if molecules is not None else {})},
        details=details,
    )
    return _finish(result, options.bootstrap, options.seed)


# -- augment ---------------------------------------------------------------------------------
@dataclass
class AugmentedSet:
    """One augmentation of a molecule set: a row per molecule with its status.

    ``rows[i]`` is molecule ``i`` of ``table``: status ``ok`` (rewritten, same molecule),
    ``not_applicable`` (nothing to rewrite; the SMILES is kept, as in AMORE's files) or
    ``failed`` (with the reason: unparsable input, or an output that is a different molecule).
    """

    kind: str
    seed: int
    table: MoleculeTable
    rows: list[AugmentedRow]
    malformed: list[tuple[int, str]] = field(default_factory=list)
    use_inchikey: bool = True

    @property
    def smiles(self) -> list[str]:
        """The augmented SMILES, one per input molecule (``""`` where the augmentation failed)."""
        return [row.augmented for row in self.rows]

    def counts(self) -> dict[str, int]:
        """How many rows have each status."""
        return {status: sum(r.status == status for r in self.rows)
                for status in (STATUS_OK, STATUS_NOT_APPLICABLE, STATUS_FAILED)}

    def problems(self) -> list[dict]:
        """Every row that is not ``ok`` and every malformed input row, with its line number."""
        found = [{"line": self.table.lines[r.index], "id": self.table.ids[r.index], "status": r.status,
                  "reason": r.reason} for r in self.rows if not r.ok]
        return found + [{"line": line, "status": "malformed", "reason": reason} for line, reason in self.malformed]

    def to_csv(self) -> str:
        """CSV text ``row,id,SMILES,original,status,reason`` (what ``augment --out`` writes)."""
        return rows_to_csv(self.rows, self.table.ids)

    def manifest(self) -> dict[str, Any]:
        """Seed, counts, identity check and problems (the ``--out`` file's manifest, without paths)."""
        return {
            "suite": SUITE, "kind": self.kind, "seed": self.seed, "input": str(self.table.path or self.table.name),
            "input_sha256": self.table.file_sha256() or self.table.checksum(), "rows": len(self.rows),
            "counts": self.counts(), "malformed_input_rows": len(self.malformed),
            "identity_check": "canonical SMILES" + (" + InChIKey" if self.use_inchikey else ""),
            "problems": self.problems(),
        }


def augment(
    molecules: str | os.PathLike | Sequence[str] | MoleculeTable,
    kind: str,
    *,
    seed: int = 0,
    n_jobs: int = 1,
    use_inchikey: bool = True,
    smiles_column: str | None = None,
) -> AugmentedSet:
    """Rewrite every molecule with augmentation ``kind`` (``canonical``, ``explicit_h``,
    ``kekulize``, ``cycle_renumber``, ``randomized``, ``cycle_renumber_amore``) and check that
    each output is the same molecule (canonical SMILES and, unless ``use_inchikey=False``,
    InChIKey). ``molecules`` is a dataset name (``chebi20``, ``isomers``), a CSV/TSV path or a
    list of SMILES; ``seed`` drives the random augmentations (per molecule, so a row's output
    does not depend on the others).

    >>> from chemassay.robustness import augment
    >>> augment(["CCO", "c1ccccc1"], "kekulize").smiles
    ['CCO', 'C1=CC=CC=C1']
    """
    check_kind(kind)
    table, malformed, _ = molecule_table(molecules, smiles_column=smiles_column)
    rows = augment_many(table.smiles, kind, seed=seed, n_jobs=n_jobs, use_inchikey=use_inchikey)
    return AugmentedSet(kind, seed, table, rows, malformed, use_inchikey)


# -- downstream ------------------------------------------------------------------------------
def downstream(
    model: Any = "rf-fingerprint",
    data: str | os.PathLike = "solubility",
    *,
    targets: Sequence[str] | None = None,
    task: str = "auto",
    augmentations: str | Sequence[str] = DEFAULT_AUGMENTATIONS,
    test_fraction: float = 0.2,
    n_estimators: int = 200,
    smiles_column: str | None = None,
    n_jobs: int = 1,
    context: dict[str, Any] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    limit: int | None = None,
    lines: Sequence[int] | None = None,
) -> Result:
    """Score a property model on a test set and on every augmentation of it: the metric per
    augmentation and its drop against the original (``rmse``/``rmse_drop`` for regression,
    ``accuracy``/``roc_auc`` and drops for classification), with the string statistics of
    each augmentation. ``data`` is ``solubility`` (bundled measured logS, the RDKit book's
    train/test split) or a MoleculeNet-style CSV (SMILES, targets, optional ``split`` column;
    else a seeded random ``test_fraction``). ``model`` is a property-predictor spec —
    ``rf-fingerprint`` / ``rf-char-ngram`` (random forests with ``n_estimators`` trees trained
    here on the training split), ``python:MODULE:CALLABLE``, ``predictions:FILE.csv`` — or an
    object with ``predict_properties``; it is loaded once and asked for the original test set
    and for each rewrite through :func:`chemassay.models.run` (the result's ``model`` comes
    from the run). Rows a model cannot predict or an augmentation fails on are listed in
    ``skipped``. A rewrite whose predictions equal the original's up to
    floating-point rounding has a drop of exactly 0. The per-test-set table and the class
    labels are in ``result.details`` (:class:`~.details.DownstreamDetails`); the bundled set
    records ``setting={"task": "solubility"}``. ``limit`` scores only the first ``limit`` test
    molecules (a smoke test; the model still trains on the whole training split), ``lines``
    only the test molecules of those file lines (a seeded subset: ``chemassay assay --limit``).

    >>> from chemassay.robustness import downstream
    >>> result = downstream("rf-fingerprint", targets=["logS"], augmentations=["kekulize"], n_estimators=10)
    >>> result.n, result.metrics["kekulize/rmse_drop"], result.setting
    (257, 0.0, {'task': 'solubility'})
    """
    from chemassay.suites.robustness.downstream import evaluate_downstream, read_property_csv

    started = time.perf_counter()
    kinds = _augmentation_list(augmentations)
    path, dataset = _property_file(data)
    prepared = read_property_csv(path, targets=list(targets) if targets else None, smiles_column=smiles_column,
                                 task=task, test_fraction=test_fraction, seed=seed)
    # what a built-in forest is trained on when the first run loads it: the whole training split
    settings = {"train_smiles": prepared.train_smiles, "train_targets": prepared.train_targets,
                "task": prepared.task, "seed": seed, "n_estimators": n_estimators, "n_jobs": n_jobs,
                "trained_on": f"{dataset.name} train split ({prepared.split_source})", **(context or {})}
    prepared = _test_subset(prepared, limit, lines, path)
    report = evaluate_downstream(prepared, model, kinds, seed=seed, n_jobs=n_jobs, context=settings)
    ref = report.run.model
    skipped = _skipped_items(report.skipped)
    skipped += [SkippedItem(line=line, reason=f"malformed row: {reason}") for line, reason in prepared.malformed]
    inputs: list[Any] = [path]
    if ref.kind == "predictions" and Path(ref.spec.partition(":")[2]).is_file():
        inputs.append(ref.spec.partition(":")[2])
    is_forest = ref.kind in ("rf-fingerprint", "rf-char-ngram")
    result = make_result(
        SUITE, "downstream", run=report.run, list_failures=False, metrics=report.metrics, n=report.n_scored,
        started=started, inputs=inputs,
        item_ids=[str(line) for line in prepared.test_lines], item_scores=report.item_scores, skipped=skipped,
        dataset=DatasetRef(name=dataset.name, sha256=sha256_file(path)),
        setting={"task": DOWNSTREAM_TASKS[dataset.name]} if dataset.name in DOWNSTREAM_TASKS else {},
        config={"model": ref.spec, "task": prepared.task, "targets": prepared.target_names, "augmentations": kinds,
                "split": prepared.split_source, "n_train": len(prepared.train_smiles),
                "n_test": len(prepared.test_smiles), "seed": seed,
                "n_estimators": ref.parameters.get("n_estimators") if is_forest else None,
                **({"limit": limit} if limit is not None else {}),
                **({"lines": len(prepared.test_lines)} if lines is not None else {})},
        details=DownstreamDetails(table=report.table, classes=prepared.classes),
    )
    return _finish(result, bootstrap, seed)


def _test_subset(prepared, limit: int | None, lines: Sequence[int] | None, path: Any):
    """The test molecules scored: the first ``limit`` (a smoke test), or those of the file
    ``lines`` (a seeded subset); the model is still trained on the full training split."""
    if limit is not None:
        if limit < 1:
            raise UserInputError(f"limit must be 1 or more, got {limit}")
        prepared = replace(prepared, test_smiles=prepared.test_smiles[:limit], test_targets=prepared.test_targets[:limit],
                           test_lines=prepared.test_lines[:limit])
    if lines is not None:
        wanted = {int(line) for line in lines}
        keep = [i for i, line in enumerate(prepared.test_lines) if line in wanted]
        if not keep:
            raise UserInputError(f"{path}: none of the chosen lines is a test molecule")
        prepared = replace(prepared, test_smiles=[prepared.test_smiles[i] for i in keep],
                           test_targets=prepared.test_targets[keep],
                           test_lines=[prepared.test_lines[i] for i in keep])
    return prepared


def _property_file(data: str | os.PathLike):
    text = os.fspath(data)
    if is_dataset_name(text) and not Path(text).exists():
        spec = get_spec(text)
        if spec.loader != "chemassay.suites.robustness.data:load_solubility":
            raise UserInputError(f"dataset {spec.name!r} is not a property table; use solubility or a CSV file")
        return dataset_file(spec.name, spec.files[0].name), DatasetRef(name=spec.name)
    path = Path(text)
    if not path.exists():
        raise UserInputError(f"{path}: no such property dataset file (or pass 'solubility', the bundled one)")
    return path, DatasetRef(name=path.name)


# -- train -----------------------------------------------------------------------------------
def train(
    out: str | os.PathLike,
    *,
    family: str = "encoder",
    data: str | os.PathLike = "moses",
    n_train: int = 20000,
    n_valid: int = 1000,
    steps: int = 600,
    steps_per_epoch: int = 100,
    batch_size: int = 32,
    layers: int = 4,
    hidden: int = 128,
    heads: int = 4,
    learning_rate: float = 5e-4,
    device: str = "cpu",
    threads: int | None = None,
    max_minutes: float | None = None,
    seed: int = 0,
) -> Result:
    """Train a small SMILES language model of one of the paper's three families and save it
    to ``out`` (a Hugging Face checkpoint, then usable as ``model="hf:OUT"``): ``encoder``
    (RoBERTa masked LM), ``decoder`` (GPT-2 causal LM) or ``encoder-decoder`` (BART
    denoiser). ``data`` is ``moses`` (the registry's MOSES training split) or a SMILES file
    (a ``SMILES`` column, or one per line; gzip allowed); ``n_train`` + ``n_valid`` SMILES are
    drawn with ``seed``. Training runs through :func:`chemassay.models.training.fit` in epochs
    of ``steps_per_epoch`` steps: with ``max_minutes`` a call trains one piece and the same
    call again resumes (``result.details.finished`` says whether it is done). Returns a Result
    (``task="train"``) with the validation loss, perplexity and token accuracy of the family;
    ``model`` names the checkpoint (checksum of its files). Needs the ``hf`` and ``train``
    extras (torch, transformers, pytorch-lightning)."""
    from chemassay.runtime.files import ensure_writable_dir, sha256_file

    if family not in FAMILIES:
        raise UserInputError(f"unknown family {family!r}; choose one of {', '.join(FAMILIES)}")
    if hidden % heads:
        raise UserInputError(f"hidden size ({hidden}) must be a multiple of the number of heads ({heads})")
    for name, value in (("n_train", n_train), ("steps", steps), ("batch_size", batch_size), ("layers", layers),
                        ("steps_per_epoch", steps_per_epoch)):
        if value < 1:
            raise UserInputError(f"{name} must be at least 1, got {value}")
    target = ensure_writable_dir(out, "checkpoint folder")
    started = time.perf_counter()
    if os.fspath(data) == "moses":
        from chemassay.data import dataset_file

        corpus_path = dataset_file("moses", "train.csv.gz")
    else:
        corpus_path = Path(data)
    corpus = read_smiles_corpus(corpus_path)
    steps_per_epoch = min(steps_per_epoch, steps)
    config = LMConfig(family=family, layers=layers, hidden=hidden, heads=heads, intermediate=4 * hidden,
                      n_train=n_train, n_valid=n_valid, steps=steps, steps_per_epoch=steps_per_epoch,
                      batch_size=batch_size, learning_rate=learning_rate,
                      warmup_steps=min(100, max(1, steps // 10)), seed=seed)
    train_set, valid_set = sample_corpus(corpus, n_train, n_valid, seed)
    manifest = train_smiles_lm(train_set, valid_set, target, config, device=device, threads=threads,
                               max_minutes=max_minutes, data_name=f"{os.fspath(data)} ({corpus_path.name})")
    metrics = {**manifest["validation"]}
    for key in ("train_loss_first", "train_loss_last"):
        if manifest[key] is not None:
            metrics[key] = manifest[key]
    ref = ModelRef(spec=f"hf:{target}", name=target.name, kind="hf",
                   parameters={"parameters": manifest["parameters"], **manifest["config"]},
                   checksum=checkpoint_digest(target) if manifest["finished"] else None)
    return make_result(
        SUITE, "train", model=ref, metrics=metrics, n=len(valid_set), started=started, inputs=[corpus_path],
        dataset=DatasetRef(name=os.fspath(data) if os.fspath(data) == "moses" else corpus_path.name,
                           sha256=sha256_file(corpus_path)),
        config={**manifest["config"], "device": device},
        details=TrainDetails(checkpoint=str(target), family=family, parameters=manifest["parameters"],
                             n_train=len(train_set), finished=manifest["finished"],
                             epochs_done=manifest["epochs_done"], train_seconds=manifest["train_seconds"]),
    )


def train_gnn(
    out: str | os.PathLike,
    *,
    data: str | os.PathLike = "solubility",
    target: str = "logS",
    hidden: int = 128,
    layers: int = 4,
    epochs: int = 60,
    steps_per_epoch: int = 32,
    batch_size: int = 32,
    learning_rate: float = 1e-3,
    valid_fraction: float = 0.1,
    patience: int | None = 10,
    device: str = "cpu",
    threads: int | None = None,
    max_minutes: float | None = None,
    seed: int = 0,
) -> Result:
    """Train the graph neural network (:mod:`chemassay.models.gnn`) on a regression target of
    a property table and save it to ``out`` (then ``model="gnn:OUT"``, an encoder and a
    property predictor). ``data`` is ``solubility`` (the bundled measured logS; its training
    split) or a MoleculeNet-style CSV (its ``split`` column's training rows, else all rows);
    ``valid_fraction`` of the training rows (seeded) are held out for early stopping.
    Resumable like :func:`train`. Returns a Result (``task="train"``) with the validation
    RMSE in the target's units."""
    from chemassay.runtime.files import ensure_writable_dir, sha256_file

    target_dir = ensure_writable_dir(out, "graph-network folder")
    started = time.perf_counter()
    path, dataset = _property_file(data)
    prepared = read_property_csv(path, targets=[target], task="regression", seed=seed)
    smiles, values = prepared.train_smiles, prepared.train_targets[:, 0]
    order = np.random.default_rng(seed).permutation(len(smiles))
    n_valid = max(1, int(round(valid_fraction * len(smiles))))
    valid_rows, train_rows = order[:n_valid], order[n_valid:]
    config = GNNConfig(hidden=hidden, layers=layers, learning_rate=learning_rate, batch_size=batch_size,
                       steps_per_epoch=steps_per_epoch, epochs=epochs, seed=seed, target=target)
    manifest = train_network([smiles[i] for i in train_rows], values[train_rows], [smiles[i] for i in valid_rows],
                             values[valid_rows], target_dir, config, device=device, threads=threads,
                             max_minutes=max_minutes, patience=patience, data_name=f"{dataset.name} ({target})")
    metrics: dict[str, float] = {}
    if manifest["finished"]:
        model = GNNEncoder(target_dir)
        predicted = model.predict_properties([smiles[i] for i in valid_rows])
        metrics["valid_rmse"] = float(np.sqrt(np.nanmean((predicted - values[valid_rows]) ** 2)))
    ref = ModelRef(spec=f"gnn:{target_dir}", name=target_dir.name, kind="gnn",
                   parameters={"parameters": manifest.get("parameters"), **manifest["config"]},
                   checksum=sha256_file(target_dir / "gnn.pt") if manifest["finished"] else None)
    return make_result(
        SUITE, "train", model=ref, metrics=metrics, n=len(valid_rows), started=started, inputs=[path],
        dataset=DatasetRef(name=dataset.name, sha256=sha256_file(path)),
        config={**manifest["config"], "device": device, "valid_fraction": valid_fraction, "patience": patience},
        details=TrainDetails(checkpoint=str(target_dir), family="gnn", parameters=manifest.get("parameters"),
                             n_train=len(train_rows), finished=manifest["finished"],
                             epochs_done=manifest["epochs_done"], train_seconds=manifest["train_seconds"]),
    )


# -- captions (Tables 3 and 11) ----------------------------------------------------------------
def captions(
    predictions: str | os.PathLike,
    *,
    references: str | os.PathLike | None = None,
    retrieval: str | os.PathLike | Result | None = None,
    meteor: bool = True,
    bootstrap: int = 1000,
    seed: int = 0,
) -> Result:
    """Score a predictions file of captions per rewrite (AMORE's Tables 3 and 11): ROUGE-1/2/L
    (``rouge-score``) and METEOR (``nltk``) per rewrite, with intervals; with ``retrieval``
    (an AMORE ``evaluate`` result of the same model on the same molecules, a path or a Result)
    the Spearman correlation between retrieval success (Acc@1) and ROUGE-2 / METEOR per
    rewrite; with a ``SMILES`` column the paper's string analysis (length, Levenshtein ratio =
    edit distance / original length, and its Spearman correlation with ROUGE-1 and METEOR).
    The layout of the file is in :mod:`.captions`. Needs the ``captions`` extra."""
    started = time.perf_counter()
    table = read_captions(predictions, references)
    retrieval_data = None
    inputs = [input_ref(predictions)] + ([input_ref(references)] if references is not None else [])
    if isinstance(retrieval, Result):
        retrieval_data = json.loads(retrieval.to_json())
    elif retrieval is not None:
        path = Path(retrieval)
        try:
            retrieval_data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UserInputError(f"{path}: not a readable AMORE result JSON ({type(exc).__name__})") from None
        if retrieval_data.get("suite") != SUITE or not retrieval_data.get("item_scores"):
            raise UserInputError(f"{path}: not a robustness evaluate result with per-molecule scores")
        inputs.append(input_ref(path))
    metrics, item_scores, rows, warnings = score_captions(table, retrieval_data, use_meteor=meteor)
    result = make_result(
        SUITE, "captions", metrics=metrics, n=len(table.ids), started=started, inputs=inputs,
        item_ids=list(table.ids), item_scores=item_scores, skipped=_skipped_items(table.skipped),
        dataset=DatasetRef(name=Path(predictions).name, sha256=sha256_file(predictions)),
        config={"rouge": "rouge-score, default tokenizer, no stemming", "meteor": "nltk meteor_score" if meteor else None,
                "retrieval": str(retrieval) if retrieval is not None and not isinstance(retrieval, Result) else None},
        details=CaptionsDetails(table=rows, warnings=warnings),
    )
    return _finish(result, bootstrap, seed)
