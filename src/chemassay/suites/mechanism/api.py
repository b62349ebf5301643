"""The mechanism suite's Python API (``chemassay.mechanism``): oMeBench data, the oMeS
scorer, mechanism predictors (chat models, local checkpoints, the built-in baselines).

* :func:`evaluate` — score predictions (a JSONL file, a dict ``reaction_id → answer``, a list
  of records) against gold mechanisms, or run ``model=`` first and score its answers;
  returns a :class:`~chemassay.contract.result.Result` with S_total, S_partial, V, L, their
  bootstrap intervals and per-reaction scores.
* :func:`predict` — run a mechanism predictor over reactions with the paper's prompts
  (``default``, ``cot``, ``kshot``); optional resumable JSON Lines output.
* :func:`verify` (alias :func:`validate`) — check an oMeBench file record by record.
* :func:`expand` — R-group expansion of templates (oMe-Silver style).
* :func:`train` — the learned mechanism model (``mechanism-seq2seq:DIR``) on an expansion.
* :func:`load_reactions` / :func:`load_dataset` — the bundled oMe-Gold and oMe-Template.
* :func:`parse_response` — one raw model answer into predicted steps.

The CLI (``chemassay mechanism ...``) and the demo call these functions and nothing else.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from chemassay.contract import Options, Run
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import DatasetRef, Result, SkippedItem, make_result
from chemassay.data.registry import load_dataset as registry_load
from chemassay.models.identity import in_memory_ref, predictions_ref
from chemassay.models.registry import resolve_model
from chemassay.report.intervals import attach_intervals
from chemassay.runtime.files import atomic_write_text, ensure_writable, sha256_file
from chemassay.runtime.progress import progress_task
from chemassay.suites.mechanism.data import reactions_path
from chemassay.suites.mechanism.details import EvaluateDetails, VerifyDetails
from chemassay.suites.mechanism.expand import (
    default_substituents_path,
    expand_templates,
    load_substituents,
)
from chemassay.suites.mechanism.oms import TAU
from chemassay.suites.mechanism.parse import parse_response
from chemassay.suites.mechanism.prompts import paper_protocol
from chemassay.suites.mechanism.records import Reaction, read_records
from chemassay.suites.mechanism.records import load_reactions as load_file
from chemassay.suites.mechanism.runners import PredictionRun, prepare_jobs, run_model
from chemassay.suites.mechanism.scoring import (
    ScoreConfig,
    ScoreReport,
    dataset_ref,
    gold_cache,
    load_gold,
    load_predictions,
    predictions_from_items,
    score_all,
)
from chemassay.suites.mechanism.validate import validate_file
from chemassay.suites.mechanism.weights import WEIGHT_MODES

__all__ = [
    "PredictionRun", "Reaction", "ScoreConfig", "evaluate", "expand", "load_dataset", "load_reactions",
    "parse_response", "predict", "train", "validate", "verify",
]

Source = str | os.PathLike
PROTOCOL = "mechanism-predictor"


def load_reactions(source: Source | Sequence[Reaction] = "gold") -> list[Reaction]:
    """The usable reactions of an oMeBench file or dataset name (``gold``, ``template``,
    ``omebench:PART``, or a JSON / JSONL path); a list of :class:`Reaction` passes through.

    Unusable records (no id, a mechanism that is not a step list, a repeated id) are left
    out; :func:`verify` lists them.
    """
    if isinstance(source, (list, tuple)):
        return list(source)

    return load_file(reactions_path(source)).reactions


def load_dataset(part: str = "gold", *, records: bool = False) -> list[Any]:
    """oMeBench through the dataset registry: ``part`` is ``gold`` (196 reactions) or
    ``templates`` (167); ``records=True`` gives the raw JSON objects. The same as
    ``chemassay.load_dataset("omebench", part=part)``."""
    return registry_load("omebench", part=part, records=records)


# ----------------------------------------------------------------------------- predict


def load_predictor(model: Any, context: Mapping[str, Any] | None = None) -> Any:
    """A mechanism predictor from a spec string (``openai:MODEL``, ``hf:PATH``,
    ``nearest-neighbour``, ``gold-oracle``, ``python:module:fn``...) or an object/callable.

    The paper's prompt is the whole conversation (it starts with its own persona and the CoT
    variant asks for reasoning): a chat model gets no system prompt unless its spec asks for
    one (``system=default``); the suite says so through the model context (``system``)."""
    return resolve_model(model, PROTOCOL, {"system": "none", **dict(context or {})})


def _prepare(reactions: list[Reaction], prompt: str, shots: int, pool: Source | Sequence[Reaction],
             allow_same_family: bool, info: Callable[[str], None] | None):
    index = None
    if prompt == "kshot":
        from chemassay.suites.mechanism.retrieval import ReactionIndex, usable_exemplars

        candidates = load_reactions(pool)
        exemplars = usable_exemplars(candidates)
        if info is not None:
            info(f"k-shot pool {pool if isinstance(pool, (str, os.PathLike)) else 'given'}: "
                 f"{len(exemplars)} of {len(candidates)} reactions usable as exemplars")
        index = ReactionIndex(exemplars)
    return prepare_jobs(reactions, prompt, k=shots, pool_index=index, exclude_family=not allow_same_family)


def _style(prompt: str, shots: int) -> str:
    return f"kshot{shots}" if prompt == "kshot" else prompt


def predict(
    model: Any,
    reactions: Source | Sequence[Reaction] = "gold",
    *,
    prompt: str = "default",
    shots: int = 3,
    pool: Source | Sequence[Reaction] = "template",
    allow_same_family: bool = False,
    limit: int | None = None,
    out: Source | None = None,
    overwrite: bool = False,
    cache: bool = False,
    context: Mapping[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
    info: Callable[[str], None] | None = None,
    ids: Sequence[str] | None = None,
) -> PredictionRun:
    """Ask a mechanism predictor for the mechanism of every reaction (the paper's prompts).

    ``model`` is a spec (``openai:gpt-4o-mini,base_url=URL``, ``hf:./ckpt``,
    ``nearest-neighbour:pool=template``, ``gold-oracle``...) or an object with
    ``predict_mechanisms(records)``. ``prompt`` is ``default`` (the paper's one-shot prompt),
    ``cot`` or ``kshot`` (``shots`` exemplars from ``pool`` by DRFP similarity, never of the
    query's family unless ``allow_same_family``). ``limit`` keeps the first N reactions,
    ``ids`` only the reactions of those ids (a seeded subset: ``chemassay assay --limit``).
    With ``out`` the answers go to a JSON Lines file as they arrive and a second call
    resumes it (only unanswered reactions are asked; ``overwrite`` starts again). Chat models
    on a server stream their answers; the others are asked through the run pipeline
    (:func:`chemassay.models.run`; ``cache``: its response cache). ``context`` gives the model
    factory settings such as ``base_url``; ``progress(n)`` is called as answers arrive. Returns
    the rows (``{"reaction_id", "response"|"mechanism"|"error", ...}``), counts and the
    :class:`~chemassay.contract.Run` (``.run``); an endpoint that refuses connections raises
    ``EndpointUnreachable`` (a one-line user error) at once.
    """
    if limit is not None and limit < 1:
        raise UserInputError("--limit must be at least 1")
    target = None
    if out is not None:
        from chemassay.runtime.files import ensure_writable

        target = ensure_writable(out, "predictions file")
    chosen = _chosen(load_reactions(reactions), limit, ids)
    settings = dict(context or {})
    # The gold-oracle repeats the reactions asked about (by name when they have one).
    settings.setdefault("gold", str(reactions) if isinstance(reactions, (str, os.PathLike)) else chosen)
    loaded = load_predictor(model, settings)
    jobs = _prepare(chosen, prompt, shots, pool, allow_same_family, info)

    return run_model(loaded, jobs, style=_style(prompt, shots), out=target, overwrite=overwrite, progress=progress,
                     cache=cache)


def _chosen(reactions: list[Reaction], limit: int | None, ids: Sequence[str] | None) -> list[Reaction]:
    """The first ``limit`` reactions, only those of the ids ``ids`` when given."""
    chosen = reactions[:limit]
    if ids is not None:
        wanted = {str(i) for i in ids}
        chosen = [reaction for reaction in chosen if reaction.reaction_id in wanted]
    return chosen


# ---------------------------------------------------------------------------- evaluate


def _model_ref_of_items(items: Any):
    try:
        json.dumps(items, default=str)
    except (TypeError, ValueError, RecursionError):
        return in_memory_ref(repr(items)[:100_000])  # an object JSON cannot hold: identified by its text
    return in_memory_ref(items)


def _domain_pool(domain_pool: Any, model_object: Any, prompt: str, pool: Any) -> tuple[list[Reaction] | None, dict]:
    """The reactions defining in-domain (Table 16) and how the result names them.

    ``domain_pool`` given: that (a dataset name, a file, reactions; ``"none"``: no split).
    Otherwise the model's own pool when it has one (``domain_pool`` attribute: the
    nearest-neighbour pool, a learned model's training set), the k-shot exemplars (the
    usable ones of ``pool``), else oMe-Template (the family list oMe-Silver is expanded from).
    """
    if isinstance(domain_pool, str) and domain_pool == "none":
        return None, {}
    source = domain_pool
    origin = "domain_pool"
    if source is None and model_object is not None and getattr(model_object, "domain_pool", None) is not None:
        source, origin = model_object.domain_pool, "model"
    if source is None and prompt == "kshot":
        from chemassay.suites.mechanism.retrieval import usable_exemplars

        reactions = usable_exemplars(load_reactions(pool))
        label = str(pool) if isinstance(pool, (str, os.PathLike)) else "given"
        return reactions, {"source": f"k-shot exemplar pool {label} (usable exemplars)", "origin": "kshot", "size": len(reactions)}
    if source is None:
        source, origin = "template", "default"
    reactions = load_reactions(source)
    label = str(source) if isinstance(source, (str, os.PathLike)) else getattr(model_object, "domain_pool_name", "given")
    return reactions, {"source": label, "origin": origin, "size": len(reactions)}


def result_setting(part: str | None, prompt_style: str | None) -> dict[str, str]:
    """A result's benchmark setting in the paper's words: the oMeBench part scored
    (``dataset``: ``gold``...) and the protocol of the prompt the answers came from
    (``prompt``: ``one-shot``, ``one-shot-cot``, ``three-shot-icl``; see
    :func:`~chemassay.suites.mechanism.prompts.paper_protocol`). Unknown parts are left out."""
    setting = {"dataset": part, "prompt": paper_protocol(prompt_style) if prompt_style else None}
    return {key: value for key, value in setting.items() if value}


def _prompt_style_of(rows: Any) -> str | None:
    """The prompt style every attributed prediction row names (``prompt_style``, written by
    :func:`predict`), or ``None`` when they name none or disagree."""
    styles = {record.data.get("prompt_style") for record in rows.values()}
    if len(styles) == 1:
        style = styles.pop()
        return style if isinstance(style, str) and style else None
    return None


def _result(report: ScoreReport, answers: _Answers, *, gold_path: Path, started: float, options: Options) -> Result:
    sources = Counter(result.weight_source for result in report.results)
    dataset, part = dataset_ref(gold_path)
    details = EvaluateDetails(
        warnings=report.warnings(),
        by_level=report.summary["by_level"],
        by_domain=report.summary["by_domain"],
        by_length=report.summary["by_length"],
        by_type=report.summary["by_type"],
        by_subtype=report.summary["by_subtype"],
        alignment_tags=report.summary["alignment_tags"],
        error_taxonomy=report.error_taxonomy().as_dict(),
        reactions=[r.row() for r in report.results],
    )
    # A failed request is an unparsed answer the scorer lists by reaction id ("unparsed
    # prediction: request failed: ..."), so the run hands make_result its identity and
    # request counts only.
    run = replace(answers.run, failures={}) if answers.run is not None else None
    result = make_result(
        "mechanism", "evaluate",
        model=answers.ref,
        run=run,
        metrics=report.metrics,
        n=len(report.results),
        item_ids=[r.reaction.reaction_id for r in report.results],
        item_scores=report.item_scores(),
        skipped=[SkippedItem(**row) for row in report.skipped_items()],
        dataset=DatasetRef(**dataset),
        setting=result_setting(part, answers.prompt_style),
        inputs=answers.inputs,
        config={**report.config.as_dict(), "weights": dict(sources), **answers.config},
        started=started,
        details=details,
    )
    return attach_intervals(result, resamples=options.bootstrap, seed=options.seed)


def _nothing_attributable(predictions, where: str) -> None:
    if predictions.rows:
        return
    first = predictions.skipped[0] if predictions.skipped else None
    detail = f" (first row: {first['reason']}" + (f", id {first['item']!r})" if first and first.get("item") else ")") if first else ""
    raise UserInputError(
        f"{where}: not one prediction has the reaction_id of a gold reaction scored{detail}; "
        "were these predictions made for another gold file?"
    )


@dataclass
class _Answers:
    """What is scored: the gold reactions and their set, the answers attributed to them, the
    input files, the prompt style they came from, the result's ``config`` entries, and where
    they came from: the model's ``run`` (and object), or predictions given (``ref``)."""

    reactions: list[Reaction]
    gold_set: Any
    attributed: Any
    inputs: list[Path]
    prompt_style: str | None
    config: dict[str, Any] = field(default_factory=dict)
    run: Run | None = None
    ref: Any = None
    model_object: Any = None


def _score_config(tau: float, round_to: int | None, strict: bool, weights: str) -> ScoreConfig:
    if not 0.0 <= tau <= 1.0:
        raise UserInputError(f"--tau {tau}: must be between 0 and 1")
    if round_to is not None and round_to < 0:
        raise UserInputError("--round must be a non-negative number of decimals")
    if weights not in WEIGHT_MODES:
        raise UserInputError(f"--weights {weights!r}: choose from {', '.join(WEIGHT_MODES)}")
    return ScoreConfig(tau, round_to, strict, weights)


def _given_answers(predictions: Source | Mapping[str, Any] | Sequence[Any], gold_path: Path,
                   ids: Sequence[str] | None = None) -> _Answers:
    """Predictions handed over (a file, a dict or a list of rows), scored as they are against
    every gold reaction (only those of the ids ``ids`` when given)."""
    reactions, gold_set = load_gold(gold_path, [str(i) for i in ids] if ids is not None else None)
    known = [r.reaction_id for r in reactions]
    if not isinstance(predictions, (str, os.PathLike)):
        attributed = predictions_from_items(predictions, known)
        _nothing_attributable(attributed, "predictions")
        return _Answers(reactions, gold_set, attributed, [gold_path], _prompt_style_of(attributed.rows),
                        ref=_model_ref_of_items(predictions))
    path = Path(predictions)
    if not path.is_file():
        raise UserInputError(f"{path}: no such prediction file" if not path.exists()
                             else f"{path}: is a directory, expected a prediction file")
    attributed = load_predictions(path, known)
    _nothing_attributable(attributed, str(path))
    return _Answers(reactions, gold_set, attributed, [gold_path, path], _prompt_style_of(attributed.rows),
                    ref=predictions_ref(path))


def _model_answers(model: Any, reference: Source, gold_path: Path, options: Options, *, prompt: str, shots: int,
                   pool: Any, allow_same_family: bool, overwrite: bool, info: Callable[[str], None] | None,
                   ids: Sequence[str] | None = None) -> _Answers:
    """Ask the model (:func:`predict`, resumable into ``options.out``) and attribute its answers
    to the gold reactions asked (the first ``options.limit`` with a limit, those of ``ids``
    with ids)."""
    from chemassay.suites.mechanism.scoring import load_gold, predictions_from_items

    total = len(_chosen(load_reactions(reference), options.limit, ids))
    with progress_task(f"asking {model}", total, disable=not options.progress) as advance:
        done = predict(model, reference, prompt=prompt, shots=shots, pool=pool, allow_same_family=allow_same_family,
                       limit=options.limit, out=options.out, overwrite=overwrite, cache=options.cache,
                       context={"n_jobs": options.n_jobs, **dict(options.context)}, progress=advance, info=info,
                       ids=ids)
    asked = options.limit or ids is not None
    reactions, gold_set = load_gold(gold_path, [row["reaction_id"] for row in done.rows] if asked else None)
    attributed = predictions_from_items(done.rows, (r.reaction_id for r in reactions))
    config: dict[str, Any] = {"prompt": done.prompt_style, "limit": options.limit, "run": done.as_dict()}
    if prompt == "kshot":
        config.update(pool=pool if isinstance(pool, (str, os.PathLike)) else "given", allow_same_family=allow_same_family)
    return _Answers(reactions, gold_set, attributed, [gold_path], done.prompt_style, config, run=done.run,
                    model_object=done.model_object)


def evaluate(
    predictions: Source | Mapping[str, Any] | Sequence[Any] | None = None,
    reference: Source = "gold",
    *,
    model: Any = None,
    prompt: str = "default",
    shots: int = 3,
    pool: Source | Sequence[Reaction] = "template",
    allow_same_family: bool = False,
    overwrite: bool = False,
    tau: float = TAU,
    round_to: int | None = None,
    strict: bool = False,
    weights: str = "data",
    domain_pool: Source | Sequence[Reaction] | None = None,
    molecule_cache: bool = True,
    info: Callable[[str], None] | None = None,
    seed: int | None = None,
    bootstrap: int | None = None,
    limit: int | None = None,
    n_jobs: int | None = None,
    cache: bool | None = None,
    progress: bool | None = None,
    out: Source | None = None,
    context: Mapping[str, Any] | None = None,
    options: Options | None = None,
    ids: Sequence[str] | None = None,
) -> Result:
    """Score mechanisms against oMeBench gold with oMeS; the ``chemassay mechanism evaluate`` result.

    ``predictions`` is a JSONL / JSON file of rows ``{"reaction_id", "response": text}`` (or
    ``"mechanism": [steps]``, or the published pipeline's ``"output"``), a dict
    ``reaction_id → raw answer text or step list``, or a list of such rows, scored as they are.
    Or give ``model=`` (a spec or a mechanism predictor): it is run first with :func:`predict`'s
    options (``prompt``, ``shots``, ``pool``, ``allow_same_family``, ``limit``, ``ids``; its answers go to
    ``out`` when given, resumable, ``overwrite`` starting it again) and its answers are scored.
    With ``ids`` only the gold reactions of those ids are scored (a seeded subset: ``chemassay
    assay --limit``).
    ``reference`` is the gold: a dataset name (``gold``, ``template``) or a file. Every gold
    reaction is scored (a limited model run: those asked); one without prediction counts as an
    empty mechanism and is named in ``result.details.warnings`` and ``result.skipped``. ``tau`` is the Tanimoto threshold of partial
    credit, ``round_to`` rounds per-reaction values as the published tool (2), ``strict``
    parses answers exactly as the published pipeline. ``weights`` picks the gold step
    weights: ``data`` (the shipped ones, the fitted scheme where a file has none),
    ``paper`` (the paper's Table 6 formula for every reaction) or ``fitted``. Metrics:
    S_total, S_partial, V, L (with ``bootstrap`` resamples for 95 % intervals, seeded by
    ``seed``; 0 turns them off), counts, the same four for the in-domain and out-of-domain
    reactions (``in-domain/S_total``...: Table 16; the domain is the family of a reaction
    seen or not in ``domain_pool`` — by default the model's training or exemplar pool, else
    oMe-Template; ``"none"`` turns it off) and the error taxonomy of Fig. 6
    (``error/<category>``; ``result.details.error_taxonomy`` has shares and examples);
    ``item_scores`` holds the per-reaction values, ``result.details`` the breakdowns
    (:class:`~chemassay.suites.mechanism.details.EvaluateDetails`) and the per-reaction rows.
    ``result.dataset`` is ``omebench`` for the bundled files and ``result.setting`` names the
    part and the prompt's protocol as the paper does (``{"dataset": "gold", "prompt":
    "one-shot"}``; from a predictions file, the ``prompt_style`` its rows carry).

    The common options (``seed``, ``bootstrap``, ``limit``, ``n_jobs``, ``cache``,
    ``progress``, ``out``, ``context``) may also come as one
    :class:`~chemassay.contract.Options` (``options=``); keyword arguments given override it.
    A model behind a chat endpoint streams its answers (the resumable runner of
    :mod:`~chemassay.suites.mechanism.runners`); other models are asked through
    :func:`chemassay.models.run` (``cache``: its response cache). ``context`` goes to the model
    kind (with ``n_jobs``), ``progress`` reports the model's answers as they come, ``info``
    receives status lines. ``molecule_cache=False`` neither reads nor writes the cache of the
    gold molecules (``--no-cache``).

    >>> import chemassay.mechanism as mechanism
    >>> oracle = mechanism.evaluate(model="gold-oracle", reference="gold", bootstrap=0)
    >>> oracle.n, oracle.metrics["S_total"], oracle.metrics["L"], oracle.setting
    (196, 1.0, 1.0, {'dataset': 'gold', 'prompt': 'one-shot'})
    >>> answer = '[ANSWER][{"type": "proton_transfer", "subtype": "acid_base_proton_transfer", '
    >>> answer += '"intermediate_smiles": "[CH2-]C=O"}][/ANSWER]'
    >>> one = mechanism.evaluate({"NR-001": answer}, reference="gold", bootstrap=0)
    >>> one.item_ids[0], round(one.item_scores["S_total"][0], 4), one.metrics["n_missing"]
    ('NR-001', 0.2286, 195)
    >>> one.details.warnings[0]
    "195 of 196 gold reactions have no prediction: each is scored as an empty mechanism ..."
    """
    options = Options.merged(options, seed=seed, bootstrap=bootstrap, limit=limit, n_jobs=n_jobs, cache=cache,
                             progress=progress, out=out, context=context)
    started = time.perf_counter()
    config = _score_config(tau, round_to, strict, weights)
    if (predictions is None) == (model is None):
        raise UserInputError("evaluate: give predictions (a file, a dict or a list) or model=SPEC, not both or neither")
    gold_path = reactions_path(reference)
    if model is not None:
        answers = _model_answers(model, reference, gold_path, options, prompt=prompt, shots=shots, pool=pool,
                                 allow_same_family=allow_same_family, overwrite=overwrite, info=info, ids=ids)
    else:
        answers = _given_answers(predictions, gold_path, ids)
    pool_reactions, pool_info = _domain_pool(domain_pool, answers.model_object,
                                             prompt if model is not None else "default", pool)
    if pool_info:
        answers.config["domain_pool"] = pool_info
    molecules = gold_cache(gold_path, answers.gold_set.reactions, enabled=molecule_cache)
    report = score_all(answers.reactions, answers.attributed, config, gold_rejected=answers.gold_set.rejected,
                       cache=molecules, domain_pool=pool_reactions)
    return _result(report, answers, gold_path=gold_path, started=started, options=options)


# ----------------------------------------------------------------------------- verify


def verify(path: Source) -> Result:
    """Check an oMeBench file (JSON array or JSONL; ``gold`` / ``template`` for the bundled
    ones): every record's fields, SMILES (RDKit), labels against the taxonomy, step
    numbering and weights. The result's ``details.problems`` lists each finding with its
    line, reaction id, field, kind and severity; ``metrics`` counts them (``errors`` > 0 means the
    file has errors; the CLI then exits 1)."""
    from chemassay.contract.result import DatasetRef, make_result

    started = time.perf_counter()
    target = reactions_path(path)
    report = validate_file(target)
    dataset, part = dataset_ref(target)
    return make_result(
        "mechanism", "verify",
        metrics={
            "reactions": report.n_reactions,
            "steps": report.n_steps,
            "errors": len(report.errors),
            "warnings": len(report.warnings),
            **{f"problems.{kind}": count for kind, count in report.counts().items()},
        },
        n=report.n_reactions,
        dataset=DatasetRef(**dataset),
        setting={"dataset": part} if part else {},
        inputs=[target],
        started=started,
        details=VerifyDetails(problems=[p.as_dict() for p in report.problems]),
    )


validate = verify


# ----------------------------------------------------------------------------- expand


def expand(
    templates: Source = "template",
    *,
    substituents: Source | None = None,
    per_template: int = 18,
    attempts: int = 5,
    seed: int = 0,
    ring_rule: bool = True,
    check_atom_balance: bool = True,
    out: Source | None = None,
):
    """Expand the R-group placeholders ``[*:i]`` of templates into concrete reactions (how
    oMe-Silver was made, with a fixed substituent list instead of an LLM): each placeholder
    number gets one substituent everywhere in the reaction and its mechanism; an instance is
    kept only when every SMILES sanitizes and every step balanced in the template stays
    atom balanced; step labels are mapped onto the taxonomy. Up to ``per_template``
    instances per template (the default 18 gives 2,502 reactions from oMe-Template,
    oMe-Silver's scale), ``attempts`` × ``per_template`` assignments tried, drawn with
    ``seed``; ``ring_rule`` keeps ring substituents out of templates with a ring (the
    paper's R-group prompt). With ``out`` the reactions are written as JSON Lines and a
    manifest (``OUT.manifest.json``: sizes, seed, checksums, rejections by reason, the
    templates rejected and why, the balance checks) beside them. Returns the
    :class:`~chemassay.suites.mechanism.expand.ExpansionResult` (``records``, ``rejected``,
    ``templates_rejected``, ``templates_without_instance``; ``manifest`` when written)."""
    if per_template < 1 or attempts < 1:
        raise UserInputError("--per-template and --attempts must be at least 1")
    target = ensure_writable(out, "expanded reactions file") if out is not None else None
    path = reactions_path(templates)
    sub_path = Path(substituents) if substituents is not None else default_substituents_path()
    groups = load_substituents(sub_path)
    found = read_records(path)
    started = time.perf_counter()
    result = expand_templates([r.data for r in found.records], groups, per_template=per_template,
                              attempts=attempts, seed=seed, ring_rule=ring_rule, check_atom_balance=check_atom_balance)
    result.templates_read = len(found.records)
    if target is None:
        return result
    atomic_write_text(target, "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in result.records))
    from chemassay import __version__

    manifest = {
        "kind": "chemassay mechanism expand",
        "files": {target.name: {"sha256": sha256_file(target), "records": len(result.records)}},
        "inputs": {"templates": {"path": str(path), "sha256": sha256_file(path)},
                   "substituents": {"path": str(sub_path), "sha256": sha256_file(sub_path)}},
        "seed": seed,
        "config": {"per_template": per_template, "attempts": attempts, "substituents": len(groups),
                   "ring_rule": ring_rule, "check_atom_balance": check_atom_balance},
        "templates": len(found.records),
        "templates_with_instances": len(found.records) - len(result.templates_without_instance),
        "malformed_template_records": [{"line": m.line, "reason": m.reason} for m in found.malformed],
        "templates_without_instance": result.templates_without_instance,
        "templates_rejected": result.templates_rejected,
        "rejected": dict(result.rejected),
        "rejected_examples": result.examples,
        "balance_checked_steps": dict(result.balance_checks),
        "instances_with_label_repairs": result.label_repairs,
        "elapsed_s": round(time.perf_counter() - started, 3),
        "chemassay": __version__,
    }
    manifest_path = target.with_name(target.name + ".manifest.json")
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2) + "\n")
    result.manifest = manifest
    result.manifest_path = manifest_path
    return result


# ------------------------------------------------------------------------------ train


def train(
    reactions: Source | Sequence[Reaction],
    out: Source,
    *,
    config: str = "small",
    seed: int = 0,
    valid_fraction: float = 0.05,
    max_minutes: float | None = None,
    device: str = "auto",
    threads: int | None = None,
    progress: bool | None = None,
    **options: Any,
):
    """Train the learned mechanism model (:mod:`~chemassay.suites.mechanism.learned`) on
    ``reactions`` — the silver expansion written by :func:`expand` — into the folder
    ``out``; ``config`` is the shared seq2seq's ``tiny``, ``small`` or ``paper``. Resumable:
    the same call continues an unfinished run (``max_minutes`` per piece). The folder is
    then a model: ``evaluate(model="mechanism-seq2seq:OUT")``. Returns the
    :class:`~chemassay.suites.mechanism.learned.MechanismTrainReport`."""
    from chemassay.suites.mechanism.learned import train_mechanism_model

    return train_mechanism_model(reactions, out, config=config, seed=seed, valid_fraction=valid_fraction,
                                 max_minutes=max_minutes, device=device, threads=threads, progress=progress, **options)
