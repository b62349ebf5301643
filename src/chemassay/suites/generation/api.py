"""The generation suite's Python API (MOSES): ``import chemassay.generation``.

* :func:`evaluate` — every MOSES metric of a set of generated SMILES (a list, a file, or a
  model sampled first), as a :class:`~chemassay.contract.result.Result`, the same one
  ``chemassay generation evaluate --out`` writes;
* :func:`compute_metrics` — the same metrics as a plain dict, keyed like MOSES's
  ``get_all_metrics``;
* :func:`sample` — draw ``n`` SMILES from a generator (a model spec such as
  ``ngram``, ``combinatorial:model.json.gz`` or ``openai:NAME,base_url=...``, or an object
  with ``sample(n, seed)``); :func:`train` — train the ``ngram``/``combinatorial`` baselines;
* :func:`filter` — the MOSES dataset filters; :func:`split` — a MOSES-style scaffold split;
* :func:`load_dataset` — the MOSES splits through the dataset registry.

Reference sets (``reference``, the test set, and ``scaffold_test``) and the training set
(``train``, for Novelty) are ``"moses"`` (the default: the MOSES authors' published
statistics, the MOSES training split), ``"moses:PART"``, a path to a SMILES file, or a list
of SMILES; ``scaffold_test=None`` and ``train=None`` leave out the ``/TestSF`` metrics and
``Novelty``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemassay.contract import Options, Run
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import (
    DatasetRef,
    InputRef,
    Interval,
    Result,
    SkippedItem,
    current_versions,
    input_ref,
    make_result,
)
from chemassay.data.registry import load_dataset as registry_load
from chemassay.models import in_memory_ref, predictions_ref, run
from chemassay.models.spec import parse_spec
from chemassay.report.intervals import attach_intervals
from chemassay.runtime.files import (
    atomic_write_text,
    ensure_writable,
    ensure_writable_dir,
    need_file,
    sha256_file,
)
from chemassay.suites.generation.baselines.kinds import train_spec
from chemassay.suites.generation.baselines.learned import KINDS as LEARNED
from chemassay.suites.generation.data import parse_moses_name
from chemassay.suites.generation.details import (
    Counts,
    EvaluateDetails,
    FilterDetails,
    SplitDetails,
)
from chemassay.suites.generation.filters import FILTER_NAMES, filter_molecules
from chemassay.suites.generation.metrics import DEFAULT_UNIQUE_K, evaluate_samples
from chemassay.suites.generation.metrics import compute_metrics as moses_metrics
from chemassay.suites.generation.pairs import INTDIV_EXACT_MAX
from chemassay.suites.generation.protocol import GENERATOR
from chemassay.suites.generation.reference import ReferenceStats, _list_digest, resolve_reference
from chemassay.suites.generation.split import scaffold_split, write_split
from chemassay.suites.generation.stream import CHUNK_ROWS, SmilesChunk

__all__ = ["compute_metrics", "evaluate", "filter", "load_dataset", "sample", "split", "train"]

SUITE = "generation"
MOSES = "moses"
"""The registered dataset a result names when it is scored against the MOSES test set."""
DEFAULT_N = 30_000
"""Samples drawn from a model by default (the MOSES protocol)."""

SmilesInput = Sequence[str] | str | os.PathLike
ReferenceInput = str | os.PathLike | Sequence[str] | None


def _check_device(device: str) -> None:
    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise UserInputError(f"--device {device}: choose cpu or cuda")
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UserInputError(f"--device {device}: no CUDA device here; use --device cpu")


def _check_n(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise UserInputError(f"--n must be a whole number of at least 1, got {n!r}")
    return n


def _describe_set(spec: Any) -> str | None:
    """How a reference/training set is named in a result's config."""
    if spec is None:
        return None
    if isinstance(spec, (list, tuple)):
        return f"list of {len(spec)} SMILES"

    if isinstance(spec, ReferenceStats):
        return spec.name
    return str(spec)


def _is_path(spec: Any) -> bool:
    return isinstance(spec, (str, os.PathLike)) and parse_moses_name(spec) is None


def _write_lines(path: str | os.PathLike, lines: Sequence[str]) -> None:
    atomic_write_text(path, "".join(f"{line}\n" for line in lines))


def _check_limit(limit: Any) -> int | None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise UserInputError(f"limit must be a whole number of at least 1, got {limit!r}")
    return limit


def _draw(model: Any, n: int, seed: int, *, context: Mapping[str, Any], cache: bool = False) -> Run:
    """``n`` samples of ``model`` (a spec or a generator object) with ``seed``, through the run
    pipeline (items: the sample slots ``0..n-1``); every sample must be a string."""
    done = run(model, GENERATOR, range(n), {"seed": seed}, context=context, cache=cache)
    if not all(isinstance(sample, str) for sample in done.outputs):
        got = ", ".join(sorted({type(s).__name__ for s in done.outputs if not isinstance(s, str)}))
        raise UserInputError(f"the generator returned {got} items for sample({n}, {seed}); expected a list of {n} strings")
    return done


def _model_context(options: Options) -> dict[str, Any]:
    """What a model kind reads when a spec is loaded: the caller's context, workers, progress."""
    return {**dict(options.context), "n_jobs": options.n_jobs, "show_progress": options.progress}


def _write_samples(out: str | os.PathLike, done: Run, seed: int) -> None:
    """The drawn samples, one per line, beside ``OUT.manifest.json`` (model, ``n``, seed, sha256)."""
    from chemassay.runtime.files import atomic_write_text, sha256_file

    target = Path(out)
    samples = done.outputs
    _write_lines(target, samples)
    requests = done.requests
    manifest = {
        "kind": "chemassay generation samples",
        "model": done.model.model_dump(),
        "n": len(samples),
        "seed": seed,
        "n_empty": sum(1 for s in samples if not s),
        "failed_samples": len(done.failures),
        "failed_requests": requests.failed if requests is not None else None,
        "requests": requests.model_dump() if requests is not None else None,
        "files": {target.name: {"rows": len(samples), "sha256": sha256_file(target)}},
        "sample_seconds": round(done.elapsed_s, 3),
        "versions": current_versions(),
    }
    atomic_write_text(target.with_name(target.name + ".manifest.json"), json.dumps(manifest, indent=2) + "\n")


def sample(
    model: Any,
    n: int = DEFAULT_N,
    seed: int = 0,
    *,
    out: str | os.PathLike | None = None,
    n_jobs: int = 1,
    show_progress: bool | None = None,
    context: Mapping[str, Any] | None = None,
) -> list[str]:
    """Draw ``n`` SMILES strings (valid or not) from a generator with ``seed``.

    ``model`` is a spec (``ngram``, ``ngram:PATH``, ``combinatorial:PATH,join=moses``,
    ``openai:NAME,base_url=URL``, ``python:module:factory``...) or an object with
    ``sample(n, seed)``; it is run through :func:`chemassay.models.run`. With ``out`` the
    samples are written there, one per line, beside ``OUT.manifest.json`` (the model, ``n``,
    ``seed``, the file's sha256, the failed requests). ``n_jobs`` worker processes sample the
    combinatorial baseline. ``context`` gives the model factory settings such as ``base_url``.
    """
    n = _check_n(n)
    if out is not None:
        ensure_writable(out, "samples file")
    done = _draw(model, n, seed, context={**dict(context or {}), "n_jobs": n_jobs, "show_progress": show_progress})
    if out is not None:
        _write_samples(out, done, seed)
    return done.outputs


def train(
    model: str,
    train: str | os.PathLike | Sequence[str] | None = None,
    *,
    limit: int | None = None,
    n_jobs: int = 1,
    show_progress: bool | None = None,
    seed: int = 0,
    device: str = "auto",
    threads: int | None = None,
    max_minutes: float | None = None,
) -> Any:
    """Train a built-in baseline and return it as a generator (``.sample(n, seed)``).

    ``model`` is ``ngram:PATH[,context_len=10]`` or ``combinatorial:PATH``: the model is
    trained and saved at ``PATH`` (replacing a file there); without ``PATH`` the cached model
    that ``--model ngram`` uses is retrained. The learned baselines are
    ``charrnn:DIR``, ``vae:DIR``, ``aae:DIR``, ``latentgan:DIR`` and ``hmm:DIR`` with
    ``size=tiny|cpu|paper`` and hyper-parameters as options: the run goes into ``DIR`` (or
    resumes the one there) with ``seed``, on ``device`` with ``threads`` CPU threads, for at
    most ``max_minutes`` in this call (the returned generator's ``finished`` says whether
    training is complete; call again to go on). ``train`` is the training set (``moses``,
    the default, ``moses:PART``, a SMILES file or a list), ``limit`` keeps its first
    molecules. The returned generator's ``spec`` names the saved model.
    """
    kind = parse_spec(model).kind
    if kind in LEARNED:
        from chemassay.suites.generation.baselines.learned import RunControls
        from chemassay.suites.generation.baselines.learned import train_spec as train_learned

        run = RunControls(seed=seed, device=device, threads=threads, max_minutes=max_minutes,
                          show_progress=show_progress)
        return train_learned(model, train, limit=limit, run=run)

    return train_spec(model, train, limit=limit, n_jobs=n_jobs, show_progress=show_progress)


def _unique_k(unique_at: int | Sequence[int] | None) -> tuple[int, ...]:
    """The ``unique@k`` values to compute (``k`` as MOSES's ``get_all_metrics`` takes it)."""
    if unique_at is None:
        return tuple(DEFAULT_UNIQUE_K)
    values = [unique_at] if isinstance(unique_at, int) else list(unique_at)
    if not values or any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in values):
        raise UserInputError(f"unique_at must be a positive whole number or a list of them (unique@k), got {unique_at!r}")
    return tuple(dict.fromkeys(values))


@dataclass
class _Generated:
    """The generated SMILES to score, and what the result says about where they came from."""

    smiles: Any
    """A list of strings, or the chunks of a file streamed (:class:`.stream.SmilesChunk`)."""
    model: Any = None
    """The identity of given samples (``None`` for drawn ones: the run names the model)."""
    inputs: list[InputRef] = field(default_factory=list)
    input_sha256: str | None = None
    failures: dict[int, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)


@dataclass
class _References:
    """The test and scaffold-test statistics, and the seconds their loading took."""

    test: Any
    scaffold_test: Any
    seconds: float


def _check_call(samples: Any, model: Any, n: Any, *, device: str, scheduler: str | None,
                plot: str | os.PathLike | None, out: str | os.PathLike | None, limit: Any) -> None:
    """The arguments that are wrong whatever the data: one clear error before any work."""
    _check_device(device)
    _check_limit(limit)
    if scheduler is not None and scheduler != "dask-local" and "://" not in scheduler:
        raise UserInputError(f"--scheduler {scheduler}: give a Dask address (tcp://host:8786) or dask-local")
    if (samples is None) == (model is None):
        raise UserInputError("give the generated SMILES (a list or a file) or model=SPEC, not both and not neither")
    if model is not None:
        _check_n(n)
    for target, what in ((plot, "plot"), (out, "samples file")):
        if target is not None:
            ensure_writable(target, what)


def _load_references(reference: ReferenceInput, scaffold_test: ReferenceInput, train: ReferenceInput,
                     options: Options, *, device: str, batch_size: int) -> _References:
    """The statistics the samples are compared with (the training set, for Novelty, is only
    checked here: the scoring indexes it, keyed by its name in a resumable run's manifest)."""
    for spec in (reference, scaffold_test, train):
        if spec is not None and _is_path(spec) and not str(spec).endswith(".npz"):
            need_file(spec, "reference SMILES")
    started = time.perf_counter()
    settings = {"n_jobs": options.n_jobs, "device": device, "batch_size": batch_size,
                "show_progress": options.progress}
    test = resolve_reference(reference, moses_set="test", **settings)
    scaffold = None if scaffold_test is None else resolve_reference(scaffold_test, moses_set="test_scaffolds",
                                                                    **settings)
    return _References(test, scaffold, time.perf_counter() - started)


def _drawn(done: Run, options: Options) -> _Generated:
    """The samples a model gave, written to ``options.out`` if given; a failed request's
    samples are empty strings (invalid), listed in ``skipped`` with the request's reason."""
    warnings = []
    if done.failures:
        first = next(iter(done.failures.values()))
        warnings.append(
            f"{len(done.failures)} samples were not drawn because requests to the model failed (first: {first}); "
            "they are empty strings, counted invalid and listed in skipped with the reason"
        )
    inputs = []
    if options.out is not None:
        _write_lines(options.out, done.outputs)
        inputs.append(input_ref(options.out))
    return _Generated(done.outputs, inputs=inputs, failures=dict(done.failures), warnings=warnings,
                      config={"n": done.n, "seed": options.seed})


def _first_rows(chunks: Iterator[Any], limit: int | None) -> Iterator[Any]:
    """The chunks of a streamed file up to ``limit`` strings (all of them for ``None``)."""
    left = limit
    for chunk in chunks:
        if left is not None:
            if left <= 0:
                return
            if len(chunk.smiles) > left:
                chunk = SmilesChunk(chunk.smiles[:left], None if chunk.lines is None else chunk.lines[:left])
            left -= len(chunk.smiles)
        yield chunk


def _given(samples: SmilesInput, *, chunk_rows: int | None, limit: int | None) -> _Generated:
    """Given samples, scored as they are: a file is streamed in chunks, a list kept whole."""
    if isinstance(samples, (str, os.PathLike)):
        from chemassay.suites.generation.stream import CHUNK_ROWS, iter_smiles_file

        chunks = _first_rows(iter_smiles_file(samples, chunk_rows=chunk_rows or CHUNK_ROWS), limit)
        first_chunk = next(chunks, None)
        if first_chunk is None:
            raise UserInputError(f"{samples}: no SMILES in the file; give one SMILES per line or a CSV with a SMILES column")
        source = input_ref(samples)
        return _Generated(_prepend(first_chunk, chunks), model=predictions_ref(samples, name=Path(samples).name),
                          inputs=[source], input_sha256=source.sha256)
    if isinstance(samples, (bytes, bytearray)) or not isinstance(samples, Sequence):
        raise UserInputError(f"samples must be a list of SMILES strings or a file path, not {type(samples).__name__}")
    smiles = [s if isinstance(s, str) else str(s) for s in samples][:limit]
    if not smiles:
        raise UserInputError("no SMILES to evaluate: the list is empty")
    return _Generated(smiles, model=in_memory_ref(smiles, name="in-memory samples"))


def _skipped(evaluation: Any, failures: Mapping[int, str]) -> list[SkippedItem]:
    """Invalid strings (a failed request's samples with the request's reason) and molecules
    that parse but cannot be processed, each with its line and reason."""
    return [
        SkippedItem(line=bad.line, item=bad.smiles, reason=failures.get(bad.index) or f"invalid SMILES: {bad.reason}",
                    index=bad.index)
        for bad in evaluation.invalid
    ] + [
        SkippedItem(line=bad.line, item=bad.smiles, reason=bad.reason, index=bad.index)
        for bad in evaluation.dropped
    ]


def _reference_inputs(*specs: ReferenceInput) -> list[InputRef]:
    """The reference and training files given as paths (hashed into ``inputs``)."""
    return [input_ref(spec) for spec in specs if spec is not None and _is_path(spec)]


def _dataset(reference: ReferenceInput, evaluation: Any) -> DatasetRef:
    """``moses`` when the reference is the MOSES test set, else the reference set's name."""
    test_stats = evaluation.references["Test"]
    return DatasetRef(name=MOSES if _is_moses_test(reference) else test_stats.name, sha256=test_stats.sha256)


def _config(generated: _Generated, sets: Mapping[str, ReferenceInput], evaluation: Any, options: Options,
            engine: Mapping[str, Any], unique_k: Sequence[int]) -> dict[str, Any]:
    """The result's ``config``: the draw (with a model), the sets, how the metrics were computed."""
    config = dict(generated.config)
    config.update({
        "test": _describe_set(sets["test"]), "scaffold_test": _describe_set(sets["scaffold_test"]),
        "train": _describe_set(sets["train"]), "n_jobs": options.n_jobs, "device": engine["device"],
        "batch_size": engine["batch_size"], "unique_k": list(unique_k),
        "fingerprint": "Morgan radius 2, 1024 bits", "bootstrap": options.bootstrap,
        "scheduler": engine["scheduler"], "chunk_rows": engine["chunk_rows"] or CHUNK_ROWS,
        "intdiv": "estimate" if "IntDiv" in evaluation.estimates else "exact",
        "intdiv_exact_max": INTDIV_EXACT_MAX if engine["intdiv_exact_max"] is None else engine["intdiv_exact_max"],
    })
    if engine["work_dir"] is not None:
        config["work_dir"] = str(engine["work_dir"])
    if options.limit is not None:
        config["limit"] = options.limit
    return config


def _details(evaluation: Any, warnings: list[str], plot: str | os.PathLike | None) -> EvaluateDetails:
    """The typed details; with ``plot`` the property-distribution PNG is drawn there."""
    png = None
    if plot is not None:
        from chemassay.suites.generation.metrics import PROPERTY_NAMES
        from chemassay.suites.generation.plots import plot_property_distributions

        test_stats = evaluation.references["Test"]
        png = plot_property_distributions(
            evaluation.properties, test_stats.properties, plot,
            distances={name: evaluation.metrics.get(name, float("nan")) for name in PROPERTY_NAMES},
            reference_label=test_stats.name,
        )
    return EvaluateDetails(
        counts=Counts(input=evaluation.n_input, valid=evaluation.n_valid, invalid=len(evaluation.invalid),
                      unique_valid=evaluation.n_unique_valid),
        warnings=warnings + evaluation.warnings,
        references={label: stats.describe() for label, stats in evaluation.references.items()},
        timings_s=evaluation.timings,
        estimates=evaluation.estimates or None,
        chunks=evaluation.chunks,
        resumed_chunks=evaluation.resumed_chunks,
        plot=str(png) if png is not None else None,
    )


def _attach_intervals(result: Result, evaluation: Any, options: Options) -> Result:
    """Bootstrap intervals of the per-molecule metrics; an estimated IntDiv's own interval."""
    attach_intervals(result, resamples=options.bootstrap, seed=options.seed)
    if evaluation.estimates:
        estimate = evaluation.estimates["IntDiv"]
        for key in ("IntDiv", "IntDiv2"):
            result.intervals[key] = Interval(low=estimate[key]["low"], high=estimate[key]["high"], level=0.95,
                                             method="sampled molecules (estimate)", resamples=estimate["rows"],
                                             seed=estimate["seed"])
    return result


def evaluate(
    samples: SmilesInput | None = None,
    *,
    model: Any = None,
    reference: ReferenceInput = "moses",
    scaffold_test: ReferenceInput = "moses",
    train: ReferenceInput = "moses",
    n: int = DEFAULT_N,
    unique_at: int | Sequence[int] | None = None,
    device: str = "cpu",
    batch_size: int = 512,
    plot: str | os.PathLike | None = None,
    scheduler: str | None = None,
    n_threads: int | None = None,
    work_dir: str | os.PathLike | None = None,
    chunk_rows: int | None = None,
    intdiv_exact_max: int | None = None,
    seed: int | None = None,
    bootstrap: int | None = None,
    limit: int | None = None,
    n_jobs: int | None = None,
    cache: bool | None = None,
    progress: bool | None = None,
    out: str | os.PathLike | None = None,
    context: Mapping[str, Any] | None = None,
    options: Options | None = None,
) -> Result:
    """Every MOSES metric of generated molecules, as ``moses.get_all_metrics`` computes them.

    Give ``samples`` (a list of SMILES or a SMILES file: one per line, or a CSV with a
    ``SMILES`` column), scored as they are, or ``model`` (a spec or a generator object: ``n``
    samples are drawn with ``seed`` first through :func:`chemassay.models.run`, and written to
    ``out`` if given; ``context`` gives the model factory settings such as ``base_url``).
    ``reference`` (the test set) and ``scaffold_test`` are compared against (the published
    MOSES statistics by default) and ``train`` gives Novelty (the MOSES training split by
    default); each also takes ``"moses:PART"``, a file or a list, and ``None`` leaves the
    scaffold-test or Novelty metrics out. Invalid strings are counted (``valid``) and listed in
    ``skipped`` with their reason; ``valid``, ``Filters``, ``SNN`` and ``Novelty`` get 95 %
    bootstrap intervals (``bootstrap`` resamples seeded with ``seed``; 0: none). ``limit``
    scores only the first ``limit`` samples (given, or drawn: the first ``limit`` of ``n``).
    ``unique_at`` chooses the ``unique@k`` metrics as ``get_all_metrics(gen, k=...)`` does (an
    int or a list; default 1,000 and 10,000; the CLI's ``--k``). When fewer valid molecules
    than ``k`` are given, MOSES divides by the number available: the value is then ``unique@N``
    of all ``N``, and a warning (in ``details.warnings`` and once through the ``chemassay``
    logger) says so. ``plot`` writes the property-distribution PNG there; ``progress`` reports
    progress to the installed renderer. The common options (``seed``, ``bootstrap``, ``limit``,
    ``n_jobs``, ``cache``, ``progress``, ``out``, ``context``) can also come as one
    ``options=`` :class:`~chemassay.contract.Options` (keyword arguments given win). The result
    names the dataset ``moses`` when the test set is MOSES's, with the setting
    ``{"samples": N}`` (the MOSES protocol draws 30,000; its published tables state no other
    setting), and carries typed details
    (:class:`~chemassay.suites.generation.details.EvaluateDetails`): ``counts``, ``warnings``,
    ``references``, ``timings_s``, ``estimates``, ``chunks``, ``resumed_chunks`` and ``plot``.

    Scale: a file is streamed in chunks of ``chunk_rows`` strings (50,000), so memory stays
    bounded at a million molecules; with ``work_dir`` each finished chunk is kept there and
    an interrupted run resumes. ``n_jobs`` worker processes do the RDKit work and
    ``n_threads`` threads ChemNet and the similarity blocks; ``scheduler`` (a Dask address,
    or ``"dask-local"``) runs the RDKit work and the similarity blocks on a cluster;
    ``device="cuda"`` runs ChemNet, SNN and IntDiv on the GPU. IntDiv of more than
    ``intdiv_exact_max`` distinct molecules (100,000) on one CPU without a scheduler is an
    estimate, marked in the result (``details.estimates``, ``config["intdiv"]``, a warning).

    >>> import chemassay.generation as generation
    >>> reference = ["CCOc1ccccc1", "CC(=O)Nc1ccc(O)cc1", "c1ccc2ccccc2c1", "OC(=O)c1ccccc1O",
    ...              "CC(C)Cc1ccc(cc1)C(C)C(=O)O", "CN1CCC[C@H]1c1cccnc1"]
    >>> result = generation.evaluate(["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "C1CC"],
    ...                              reference=reference, scaffold_test=None, train=reference, bootstrap=200)
    >>> result.metrics["valid"], round(result.metrics["Novelty"], 4), result.n
    (0.75, 0.6667, 3)
    >>> result.skipped[0].item, result.skipped[0].reason
    ('C1CC', 'invalid SMILES: SMILES syntax error')
    >>> sorted(result.intervals)
    ['Filters', 'Novelty', 'SNN/Test', 'valid']
    """
    options = Options.merged(options, seed=seed, bootstrap=bootstrap, limit=limit, n_jobs=n_jobs, cache=cache,
                             progress=progress, out=out, context=context)
    started = time.perf_counter()
    _check_call(samples, model, n, device=device, scheduler=scheduler, plot=plot, out=options.out,
                limit=options.limit)
    unique_k = _unique_k(unique_at)
    engine = {"device": device, "batch_size": batch_size, "scheduler": scheduler, "n_threads": n_threads,
              "work_dir": work_dir, "chunk_rows": chunk_rows, "intdiv_exact_max": intdiv_exact_max}
    sets = {"test": reference, "scaffold_test": scaffold_test, "train": train}
    references = _load_references(reference, scaffold_test, train, options, device=device, batch_size=batch_size)
    done = None
    if model is not None:
        done = _draw(model, min(n, options.limit or n), options.seed, context=_model_context(options),
                     cache=options.cache)
        generated = _drawn(done, options)
    else:
        generated = _given(samples, chunk_rows=chunk_rows, limit=options.limit)
    evaluation = evaluate_samples(
        generated.smiles, test=references.test, scaffold_test=references.scaffold_test, train=train,
        n_jobs=options.n_jobs, show_progress=options.progress, input_sha256=generated.input_sha256,
        seed=options.seed, unique_k=unique_k, **engine,
    )
    evaluation.timings["references"] += references.seconds
    dataset = _dataset(reference, evaluation)
    result = make_result(
        SUITE, "evaluate",
        run=done,
        model=generated.model,
        metrics=evaluation.metrics,
        n=evaluation.n_valid - len(evaluation.dropped),
        item_ids=[str(i) for i in range(evaluation.n_input)],
        item_scores=evaluation.item_scores,
        skipped=_skipped(evaluation, generated.failures),
        dataset=dataset,
        # the MOSES protocol draws 30,000 samples per model; the setting says how many these are
        setting={"samples": str(evaluation.n_input)} if dataset.name == MOSES else {},
        inputs=generated.inputs + _reference_inputs(reference, scaffold_test, train),
        config=_config(generated, sets, evaluation, options, engine, unique_k),
        started=started,
        details=_details(evaluation, generated.warnings, plot),
    )
    return _attach_intervals(result, evaluation, options)


def _is_moses_test(spec: Any) -> bool:
    """Whether a test-set argument names the MOSES test set (``moses`` or ``moses:test``)."""
    return parse_moses_name(spec) in ("", "test")


def _prepend(first: Any, rest: Any) -> Any:
    yield first
    yield from rest


def compute_metrics(
    samples: Sequence[str],
    *,
    reference: ReferenceInput = "moses",
    scaffold_test: ReferenceInput = "moses",
    train: ReferenceInput = "moses",
    n_jobs: int = 1,
    device: str = "cpu",
    batch_size: int = 512,
) -> dict[str, float]:
    """The MOSES metrics of ``samples`` as a plain dict, keyed and valued like MOSES's
    ``get_all_metrics`` (same defaults as :func:`evaluate`, no intervals or details;
    ``reference`` is ``get_all_metrics``'s ``test``)."""
    _check_device(device)
    return moses_metrics(list(samples), test=reference, scaffold_test=scaffold_test, train=train, n_jobs=n_jobs,
                         device=device, batch_size=batch_size)


def _molecules(molecules: SmilesInput, column: str | None
               ) -> tuple[list[str], list[int] | None, Path | None, str | None]:
    """SMILES, their line numbers, the file and the column read (files: the one reader)."""
    if isinstance(molecules, (str, os.PathLike)):
        from chemassay.data.readers import read_smiles_file

        table = read_smiles_file(molecules, column=column)
        return table.smiles, table.lines, Path(molecules), table.column
    if isinstance(molecules, (bytes, bytearray)) or not isinstance(molecules, Sequence):
        raise UserInputError(f"molecules must be a list of SMILES strings or a file path, not {type(molecules).__name__}")
    return [s if isinstance(s, str) else str(s) for s in molecules], None, None, None


def _dataset_ref(path: Path | None, smiles: Sequence[str]) -> DatasetRef:
    if path is not None:
        return DatasetRef(name=str(path), sha256=sha256_file(path))
    return DatasetRef(name=f"list of {len(smiles)} SMILES", sha256=_list_digest(list(smiles)))


def filter(  # noqa: A001 - the suite's verb; shadows the builtin only inside this module's namespace
    molecules: SmilesInput,
    *,
    out: str | os.PathLike | None = None,
    rejected: str | os.PathLike | None = None,
    column: str | None = None,
    max_ring_size: int = 7,
    screen: bool = True,
    n_jobs: int = 1,
    show_progress: bool | None = None,
) -> Result:
    """Apply the MOSES dataset filters and count what each removes (a ``filter`` Result).

    ``molecules`` is a list of SMILES or a SMILES file (an empty table cell is an invalid,
    empty SMILES that fails ``parse``). The filters run in MOSES's order (parse, ring size,
    charge, atoms, MCF, PAINS, roundtrip); ``removed/NAME`` counts molecules by their first
    failing filter, ``failing/NAME`` every molecule failing it. With ``out`` the kept SMILES
    are written there, with ``rejected`` a CSV of the removed ones (line, smiles, filter,
    failures, alerts). ``screen=False`` matches every alert without the fingerprint screen.
    """
    from chemassay.runtime.files import atomic_write_text, ensure_writable, sha256_file

    started = time.perf_counter()
    for target, what in ((out, "output"), (rejected, "rejected-molecules file")):
        if target is not None:
            ensure_writable(target, what)
    smiles, lines, path, column = _molecules(molecules, column)
    summary = filter_molecules(smiles, max_ring_size=max_ring_size, screen=screen, n_jobs=n_jobs,
                               show_progress=show_progress)

    def line_of(index: int) -> int:
        return lines[index] if lines is not None else index + 1

    output: dict[str, Any] = {}
    if out is not None:
        _write_lines(out, [smiles[i] for i in summary.kept])
        output.update({"kept": str(out), "sha256": sha256_file(out)})
    if rejected is not None:
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["line", "smiles", "filter", "failures", "alerts"])
        for index, verdict in enumerate(summary.verdicts):
            if not verdict.passed:
                writer.writerow([line_of(index), smiles[index], verdict.first_failure, ";".join(verdict.failures),
                                 ";".join(verdict.alerts) or verdict.reason])
        atomic_write_text(rejected, buffer.getvalue())
        output["rejected"] = str(rejected)
    skipped = [
        SkippedItem(line=line_of(i), item=smiles[i], reason=f"unparseable SMILES: {v.reason}")
        for i, v in enumerate(summary.verdicts) if v.first_failure == "parse"
    ]
    metrics: dict[str, float | int] = {
        "n_input": summary.n_input,
        "n_kept": len(summary.kept),
        "n_removed": summary.n_removed,
        "fraction_kept": len(summary.kept) / summary.n_input if summary.n_input else 0.0,
    }
    metrics.update({f"removed/{name}": summary.removed_by[name] for name in FILTER_NAMES})
    metrics.update({f"failing/{name}": summary.failing[name] for name in FILTER_NAMES})
    return make_result(
        SUITE, "filter",
        metrics=metrics,
        n=summary.n_input,
        skipped=skipped,
        dataset=_dataset_ref(path, smiles),
        inputs=[path] if path is not None else [],
        config={"max_ring_size": max_ring_size, "screen": screen, "column": column,
                "allowed_atoms": "C N S O F Cl Br H", "order": list(FILTER_NAMES)},
        started=started,
        details=FilterDetails(output=output, alert_hits=summary.alert_hits),
    )


def split(
    molecules: SmilesInput,
    out_dir: str | os.PathLike,
    *,
    test_fraction: float = 0.1,
    scaffold_test_fraction: float = 0.1,
    seed: int = 0,
    keep_duplicates: bool = False,
    column: str | None = None,
    n_jobs: int = 1,
    show_progress: bool | None = None,
) -> Result:
    """A MOSES-style split written to ``out_dir`` (a ``split`` Result with the part sizes).

    Random Bemis-Murcko scaffolds are held out as the scaffold test set, then a random
    ``test_fraction`` of the valid molecules is the test set and the rest the training set
    (repeats of a molecule are dropped unless ``keep_duplicates``). ``out_dir`` receives
    ``train.csv``, ``test.csv``, ``test_scaffolds.csv``, ``skipped.csv`` (invalid and
    repeated inputs, with their line and reason), ``held_out_scaffolds.txt`` and a
    ``manifest.json`` with every file's sha256, so the split reproduces byte for byte.
    """
    started = time.perf_counter()
    ensure_writable_dir(out_dir, "split folder")
    smiles, lines, path, _ = _molecules(molecules, column)
    if not smiles:
        raise UserInputError(f"{path or 'the list'}: no SMILES to split")
    result = scaffold_split(
        smiles, test_fraction=test_fraction, scaffold_test_fraction=scaffold_test_fraction, seed=seed,
        deduplicate=not keep_duplicates, n_jobs=n_jobs, show_progress=show_progress,
    )
    manifest_path = write_split(result, smiles, out_dir, lines=lines, input_path=path)
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))

    def line_of(index: int) -> int:
        return lines[index] if lines is not None else index + 1

    return make_result(
        SUITE, "split",
        metrics={
            "n_input": len(smiles), "n_train": len(result.train), "n_test": len(result.test),
            "n_test_scaffolds": len(result.test_scaffolds), "n_skipped": len(result.skipped),
            "n_scaffolds": manifest["n_scaffolds"], "n_held_out_scaffolds": len(result.held_out_scaffolds),
            "n_acyclic": manifest["n_acyclic"],
        },
        n=len(smiles),
        skipped=[SkippedItem(line=line_of(s["index"]), item=s["smiles"], reason=s["reason"]) for s in result.skipped],
        dataset=_dataset_ref(path, smiles),
        inputs=[path] if path is not None else [],
        config=result.config,
        started=started,
        details=SplitDetails(output={"folder": str(out_dir), "manifest": str(manifest_path)}),
    )


def load_dataset(name: str = "moses", part: str | None = None, **options: Any) -> Any:
    """A dataset through the registry; for MOSES (the default) the SMILES of one split.

    ``part`` is ``train`` (default), ``test`` or ``test_scaffolds``; ``limit=N`` keeps the
    first N SMILES. Same as ``chemassay.load_dataset("moses", part=...)``.
    """
    return registry_load(name, part=part, **options)
