"""Scoring predictions against a gold file: per-reaction oMeS and the aggregates (the
engine behind :func:`chemassay.mechanism.evaluate`).

Every gold reaction is scored (``n`` is the number of gold reactions):

* a reaction with a parseable prediction gets its oMeS metrics;
* a reaction with no prediction is scored as an empty prediction (:meth:`ScoreReport.missing`);
* a reaction whose prediction cannot be parsed scores 0 on every metric
  (:meth:`ScoreReport.failures`, with the line and the reason).

Both are also listed in the result's ``skipped`` (:meth:`ScoreReport.skipped_items`), with a
reason that says they were scored 0.

Prediction rows that cannot be attributed to a gold reaction (no ``reaction_id``, an id
not in the gold file, a repeated id, a line that is not a JSON object) are listed in
``skipped``; gold records that cannot be used are listed in ``gold_rejected``. Predictions
of which not one can be attributed are an unusable input (:class:`UserInputError`): they
were made for another gold file.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rdkit import rdBase

from chemassay.contract.errors import UserInputError
from chemassay.data.registry import get_spec
from chemassay.runtime.cache import cached
from chemassay.runtime.files import sha256_file
from chemassay.suites.mechanism.error_analysis import ErrorTally, answer_shape, tally_reaction
from chemassay.suites.mechanism.oms import (
    FP_BITS,
    FP_RADIUS,
    TAGS,
    TAU,
    Alignment,
    GoldStep,
    MoleculeCache,
    align,
    reaction_scores,
)
from chemassay.suites.mechanism.parse import ParsedMechanism, parse_prediction
from chemassay.suites.mechanism.records import Reaction, load_reactions, read_records
from chemassay.suites.mechanism.retrieval import FamilyIndex
from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE
from chemassay.suites.mechanism.weights import resolve_weights

METRICS = ("S_total", "S_partial", "V", "L")
UNPARSED = "unparsed prediction"
"""How a ``Result.skipped`` reason starts for an answer that could not be parsed."""
NO_PREDICTION = "no prediction"
"""How a ``Result.skipped`` reason starts for a gold reaction without prediction."""
DOMAINS = ("in-domain", "out-of-domain")


def mark_domains(results: Sequence[ReactionResult], pool: Sequence[Reaction]) -> int:
    """Set each result's ``domain``: ``in-domain`` when ``pool`` (the training set or the
    exemplar pool) holds a reaction of its family, else ``out-of-domain`` (the paper's Table
    16 split; the family relation is :func:`~.retrieval.same_family`). Returns how many are
    in-domain."""
    families = FamilyIndex(pool)
    seen = 0
    for result in results:
        inside = families.seen(result.reaction)
        result.domain = DOMAINS[0] if inside else DOMAINS[1]
        seen += inside
    return seen


@dataclass(frozen=True)
class ScoreConfig:
    """Scoring options: similarity threshold, per-reaction rounding, parsing mode, and the
    step weights (``data``, ``fitted`` or ``paper``: :data:`~.weights.WEIGHT_MODES`)."""

    tau: float = TAU
    round_to: int | None = None
    strict: bool = False
    weights: str = "data"

    def as_dict(self) -> dict[str, Any]:
        return {"tau": self.tau, "round": self.round_to, "strict": self.strict, "weights_option": self.weights}


def gold_steps(reaction: Reaction, weights: str = "data") -> tuple[list[GoldStep], str]:
    """The gold steps of a reaction with their weights (``weights`` mode), and the weights' source."""
    resolved = resolve_weights(reaction, weights)
    steps = [
        GoldStep(step.subtype, step.intermediate_smiles, weight, step.type or SUBTYPE_TO_TYPE.get(step.subtype or ""))
        for step, weight in zip(reaction.steps, resolved.weights, strict=True)
    ]
    return steps, resolved.source


@dataclass
class PredictionRecord:
    """One attributed prediction row: its line and raw content."""

    line: int
    data: dict[str, Any]


@dataclass
class PredictionFile:
    """Prediction rows keyed by reaction id, and the rows that could not be attributed."""

    rows: dict[str, PredictionRecord]
    skipped: list[dict[str, Any]]


def _attribute(sources: Iterable[tuple[int | None, Any]], known_ids: Iterable[str],
               skipped: list[dict[str, Any]]) -> PredictionFile:
    """Key prediction rows ``(line, data)`` by ``reaction_id``; list the others in ``skipped``."""
    known = set(known_ids)
    rows: dict[str, PredictionRecord] = {}
    for line, data in sources:
        if not isinstance(data, Mapping):
            skipped.append({"line": line, "item": None, "reason": f"a {type(data).__name__}, not a prediction record"})
            continue
        rid = data.get("reaction_id")
        if rid is None or isinstance(rid, (dict, list, bool)):
            skipped.append({"line": line, "item": None, "reason": "no reaction_id"})
            continue
        rid = str(rid)
        if rid not in known:
            skipped.append({"line": line, "item": rid, "reason": "reaction_id not among the gold reactions scored"})
            continue
        if rid in rows:
            where = f"line {rows[rid].line}" if rows[rid].line is not None else "the first one"
            skipped.append({"line": line, "item": rid, "reason": f"repeated reaction_id ({where} is used)"})
            continue
        rows[rid] = PredictionRecord(line, dict(data))
    return PredictionFile(rows, skipped)


def load_predictions(path, known_ids: Iterable[str]) -> PredictionFile:
    """Read a prediction JSONL (or JSON array) file, keyed by ``reaction_id``."""
    found = read_records(path)
    skipped = [{"line": bad.line, "item": None, "reason": bad.reason} for bad in found.malformed]
    return _attribute(((source.line, source.data) for source in found.records), known_ids, skipped)


def predictions_from_items(items: Mapping[str, Any] | Sequence[Any], known_ids: Iterable[str]) -> PredictionFile:
    """Predictions handed over in memory, keyed by ``reaction_id``.

    ``items`` is a mapping ``reaction_id → answer`` (raw model text, or a decoded step list
    or dict), or a sequence of prediction records (``{"reaction_id", "response" |
    "mechanism" | "output"}``, as in a predictions file; the 1-based position stands in for
    the line number).
    """
    if isinstance(items, Mapping):
        sources = []
        for rid, answer in items.items():
            field_name = "response" if isinstance(answer, str) else "mechanism"
            sources.append((None, {"reaction_id": rid, field_name: answer}))
        return _attribute(sources, known_ids, [])
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise UserInputError(
            f"predictions: expected a path, a dict reaction_id -> answer or a list of records, got {type(items).__name__}"
        )
    return _attribute(((position, item) for position, item in enumerate(items, start=1)), known_ids, [])


@dataclass
class ReactionResult:
    """Everything recorded for one gold reaction."""

    reaction: Reaction
    gold: list[GoldStep]
    weight_source: str
    status: str
    alignment: Alignment | None
    values: dict[str, float]
    repairs: dict[str, int] = field(default_factory=dict)
    reason: str | None = None
    line: int | None = None
    n_pred: int = 0
    parsed: ParsedMechanism | None = field(default=None, repr=False)
    """The prediction as parsed (``None``: no prediction), for the error taxonomy."""
    domain: str | None = None
    """``in-domain`` / ``out-of-domain`` for the domain pool of the run (Table 16), if any."""
    answer_shape: str | None = None
    """``empty`` / ``truncated`` raw answer (:func:`~.error_analysis.answer_shape`), for the taxonomy."""

    def row(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "reaction_id": self.reaction.reaction_id,
            "level": self.reaction.level,
            "status": self.status,
            "n_gold": len(self.gold),
            "n_pred": self.n_pred,
            **self.values,
            "alignment": list(self.alignment.tags) if self.alignment else [],
            "gold_steps": [{"type": g.type, "subtype": g.subtype, "smiles": g.smiles} for g in self.gold],
            "predicted_steps": ([{"type": p.type, "subtype": p.subtype, "smiles": p.smiles} for p in self.parsed.steps]
                                if self.parsed is not None and self.parsed.steps is not None else []),
        }
        if self.weight_source != "data":
            out["weights"] = self.weight_source
        if self.repairs:
            out["repairs"] = dict(self.repairs)
        if self.reason:
            out["reason"] = self.reason
        if self.line is not None:
            out["line"] = self.line
        if self.domain is not None:
            out["domain"] = self.domain
        return out


def score_reaction(
    reaction: Reaction,
    parsed: ParsedMechanism | None,
    cache: MoleculeCache,
    config: ScoreConfig,
    *,
    line: int | None = None,
) -> ReactionResult:
    """Score one reaction; ``parsed=None`` means no prediction (an empty mechanism)."""
    gold, source = gold_steps(reaction, config.weights)
    if parsed is not None and not parsed.ok:
        zeros = {metric: 0.0 for metric in METRICS}
        return ReactionResult(reaction, gold, source, "unparsed", None, zeros, dict(parsed.repairs), parsed.error, line,
                              parsed=parsed)
    steps = parsed.steps if parsed is not None else []
    alignment = align(
        gold, [step.subtype for step in steps], [step.smiles for step in steps], cache, tau=config.tau
    )
    scores = reaction_scores(alignment, gold, round_to=config.round_to)
    status = "scored" if parsed is not None else "missing"
    repairs = dict(parsed.repairs) if parsed is not None else {}
    return ReactionResult(
        reaction, gold, source, status, alignment, dict(vars(scores)), repairs, None, line, n_pred=len(steps),
        parsed=parsed,
    )


def _mean(values: list[float]) -> float:
    return float(statistics.fmean(values)) if values else 0.0


def _group_means(results: list[ReactionResult]) -> dict[str, float]:
    out: dict[str, Any] = {"n": len(results)}
    for metric in METRICS:
        out[metric] = _mean([r.values[metric] for r in results])
    return out


def aggregate(results: list[ReactionResult]) -> dict[str, Any]:
    """Overall means, breakdowns by level, step type and length, and tag counts."""
    by_level: dict[str, list[ReactionResult]] = defaultdict(list)
    by_length: dict[int, list[ReactionResult]] = defaultdict(list)
    for result in results:
        by_level[result.reaction.level or "unknown"].append(result)
        by_length[len(result.gold)].append(result)
    level_order = ["easy", "medium", "hard"] + sorted(set(by_level) - {"easy", "medium", "hard"})

    type_stats: dict[str, Counter] = defaultdict(Counter)
    subtype_stats: dict[str, Counter] = defaultdict(Counter)
    type_partial: dict[str, float] = defaultdict(float)
    subtype_partial: dict[str, float] = defaultdict(float)
    tag_counts: Counter = Counter({tag: 0 for tag in TAGS})
    for result in results:
        alignment = result.alignment
        if alignment is not None:
            tag_counts.update(alignment.tags)
        for index, step in enumerate(result.gold):
            kind = step.type or "unknown"
            subtype = step.subtype or "unknown"
            matched = alignment is not None and alignment.gold_tag[index] == "match"
            exact = alignment is not None and alignment.gold_exact[index]
            partial = alignment.gold_partial[index] if alignment is not None else 0.0
            for stats, key in ((type_stats, kind), (subtype_stats, subtype)):
                stats[key]["steps"] += 1
                stats[key]["match"] += matched
                stats[key]["exact"] += exact
            type_partial[kind] += partial
            subtype_partial[subtype] += partial

    def accuracy(stats: dict[str, Counter], partial: dict[str, float]) -> dict[str, Any]:
        return {
            key: {
                "steps": counts["steps"],
                "match_rate": counts["match"] / counts["steps"],
                "exact_rate": counts["exact"] / counts["steps"],
                "partial_credit": partial[key] / counts["steps"],
            }
            for key, counts in sorted(stats.items(), key=lambda item: (-item[1]["steps"], item[0]))
        }

    by_domain: dict[str, list[ReactionResult]] = defaultdict(list)
    for result in results:
        if result.domain is not None:
            by_domain[result.domain].append(result)
    return {
        "overall": _group_means(results),
        "by_domain": {domain: _group_means(by_domain[domain]) for domain in DOMAINS} if by_domain else {},
        "by_level": {level: _group_means(by_level[level]) for level in level_order if by_level.get(level)},
        "by_length": {str(length): _group_means(by_length[length]) for length in sorted(by_length)},
        "by_type": accuracy(type_stats, type_partial),
        "by_subtype": accuracy(subtype_stats, subtype_partial),
        "alignment_tags": dict(tag_counts),
    }


@dataclass
class ScoreReport:
    """Per-reaction results, aggregates and the problem lists of one scoring run."""

    results: list[ReactionResult]
    summary: dict[str, Any]
    skipped: list[dict[str, Any]]
    gold_rejected: list[dict[str, Any]]
    config: ScoreConfig
    _errors: ErrorTally | None = field(default=None, repr=False)

    @property
    def metrics(self) -> dict[str, Any]:
        overall = self.summary["overall"]
        metrics: dict[str, Any] = {metric: overall[metric] for metric in METRICS}
        counts = Counter(result.status for result in self.results)
        metrics["n_scored"] = counts["scored"]
        metrics["n_missing"] = counts["missing"]
        metrics["n_unparsed"] = counts["unparsed"]
        metrics["exact_mechanisms"] = sum(
            1 for r in self.results if r.alignment is not None and r.values["S_total"] >= 1.0 - 1e-12
        )
        by_domain = self.summary.get("by_domain") or {}
        if by_domain:
            for domain in DOMAINS:
                group = by_domain[domain]
                metrics["n_" + domain.replace("-", "_")] = group["n"]
                for metric in METRICS:
                    metrics[f"{domain}/{metric}"] = group[metric] if group["n"] else None
        metrics.update(self.error_taxonomy().metrics())
        return metrics

    def item_scores(self) -> dict[str, list[float | None]]:
        """Per-reaction values of every mean metric (``None`` where a domain metric does not
        apply), so that each gets its bootstrap interval."""
        scores: dict[str, list[float | None]] = {metric: [r.values[metric] for r in self.results] for metric in METRICS}
        if self.summary.get("by_domain"):
            for domain in DOMAINS:
                for metric in METRICS:
                    scores[f"{domain}/{metric}"] = [r.values[metric] if r.domain == domain else None
                                                    for r in self.results]
        return scores

    def error_taxonomy(self) -> ErrorTally:
        """The error events of every reaction (:mod:`.error_analysis`), computed once."""
        if self._errors is None:
            known = frozenset(SUBTYPE_TO_TYPE)
            tally = ErrorTally()
            for result in self.results:
                tally_reaction(tally, result, result.parsed, known)
            self._errors = tally
        return self._errors

    def failures(self) -> list[dict[str, Any]]:
        """Reactions whose answer could not be parsed (scored 0): line, id and reason."""
        return [
            {"line": r.line, "item": r.reaction.reaction_id, "reason": r.reason}
            for r in self.results
            if r.status == "unparsed"
        ]

    def missing(self) -> list[str]:
        """Ids of the gold reactions without a prediction (scored as empty mechanisms)."""
        return [r.reaction.reaction_id for r in self.results if r.status == "missing"]

    def skipped_items(self) -> list[dict[str, Any]]:
        """Every item that was not scored as asked, as ``Result.skipped`` rows: unparsed
        answers and reactions without prediction (both scored 0, so ``n`` still counts them;
        the reason says so), prediction rows not attributable to a gold reaction, and gold
        records that are unusable (left out)."""
        rows: list[dict[str, Any]] = [
            {**row, "reason": f"{UNPARSED}: {row['reason']} (scored 0)"} for row in self.failures()
        ]
        rows += [{"item": rid, "reason": f"{NO_PREDICTION}: scored as an empty mechanism (0 on every metric)"}
                 for rid in self.missing()]
        rows += [dict(row) for row in self.skipped]
        rows += [{**row, "reason": f"gold record unusable: {row['reason']}"} for row in self.gold_rejected]
        return rows

    def warnings(self) -> list[str]:
        """What a reader of the aggregate must know: gold reactions without a prediction
        (scored as empty mechanisms), answers that could not be parsed, rows left out."""
        out = []
        n = len(self.results)
        missing = len(self.missing())
        if missing:
            out.append(
                f"{missing} of {n} gold reactions have no prediction: each is scored as an empty mechanism "
                f"(0 on every metric) and listed under 'skipped' ({NO_PREDICTION})"
            )
        unparsed = len(self.failures())
        if unparsed:
            out.append(f"{unparsed} of {n} predictions could not be parsed: scored 0, listed under 'skipped' ({UNPARSED})")
        if self.skipped:
            out.append(f"{len(self.skipped)} prediction rows could not be attributed to a gold reaction: listed under 'skipped'")
        if self.gold_rejected:
            out.append(f"{len(self.gold_rejected)} gold records are unusable and were left out: listed under 'skipped'")
        return out


def score_all(
    reactions: list[Reaction],
    predictions: PredictionFile,
    config: ScoreConfig = ScoreConfig(),
    *,
    gold_rejected: list[dict[str, Any]] | None = None,
    cache: MoleculeCache | None = None,
    domain_pool: Sequence[Reaction] | None = None,
) -> ScoreReport:
    """Score every gold reaction against its prediction (if any); with ``domain_pool`` (the
    training set or exemplar pool) each reaction is also marked in- or out-of-domain
    (:func:`mark_domains`) and the summary gets ``by_domain``."""
    cache = cache if cache is not None else MoleculeCache()
    parsed_rows: dict[str, ParsedMechanism] = {
        rid: parse_prediction(row.data, strict=config.strict) for rid, row in predictions.rows.items()
    }
    # One batch for every molecule: the dynamic programs then only look values up.
    cache.add(step.intermediate_smiles for reaction in reactions for step in reaction.steps)
    cache.add(step.smiles for parsed in parsed_rows.values() if parsed.steps for step in parsed.steps)
    results = []
    for reaction in reactions:
        row = predictions.rows.get(reaction.reaction_id)
        if row is None:
            results.append(score_reaction(reaction, None, cache, config))
            continue
        results.append(score_reaction(reaction, parsed_rows[reaction.reaction_id], cache, config, line=row.line))
        results[-1].answer_shape = answer_shape(row.data.get("response"))
    if domain_pool is not None:
        mark_domains(results, domain_pool)
    return ScoreReport(results, aggregate(results), predictions.skipped, gold_rejected or [], config)


def _save_cache(cache: MoleculeCache, path) -> None:
    cache.save(path)


def _load_cache(path) -> MoleculeCache:
    loaded = MoleculeCache.load(path)
    if loaded is None:
        raise ValueError("not a molecule cache of this RDKit version")
    return loaded


def gold_cache(gold_path, reactions: list[Reaction], *, enabled: bool = True) -> MoleculeCache:
    """A molecule cache primed with the gold intermediates, kept between runs.

    It is an entry of the checked cache (:mod:`chemassay.runtime.cache`, namespace
    ``mechanism-molecules``) keyed by the gold file's sha256, the fingerprint settings and
    the RDKit version; a damaged entry is reported in one line and rebuilt.
    """

    def build() -> MoleculeCache:
        cache = MoleculeCache()
        cache.add(step.intermediate_smiles for reaction in reactions for step in reaction.steps)
        return cache

    if not enabled:
        return build()

    key = {"gold_sha256": sha256_file(gold_path), "radius": FP_RADIUS, "bits": FP_BITS, "rdkit": rdBase.rdkitVersion}
    return cached("mechanism-molecules", key, build, save=_save_cache, load=_load_cache, suffix=".npz")


#: The parts of oMeBench as a result's setting names them (the paper's tables say ``gold``).
PART_SETTINGS = {"oMe_Gold.json": "gold", "oMe_Template.json": "templates"}


def dataset_ref(gold_path) -> tuple[dict[str, Any], str | None]:
    """``dataset`` field of a result and the part of oMeBench scored: a bundled oMeBench
    file is the registered dataset ``omebench`` with its part (``gold``, ``templates``) for
    the setting; another file is named by its file name, with no part."""
    path = Path(gold_path)
    digest = sha256_file(path)
    for entry in get_spec("omebench").files:
        if entry.sha256 == digest and entry.name in PART_SETTINGS:
            return {"name": "omebench", "sha256": digest}, PART_SETTINGS[entry.name]
    return {"name": path.name, "sha256": digest}, None


def load_gold(gold_path, reaction_ids: Iterable[str] | None = None):
    """The gold reactions of a file (restricted to ``reaction_ids`` when given) and the
    :class:`~chemassay.suites.mechanism.records.ReactionSet` they come from."""
    gold = load_reactions(gold_path)
    reactions = gold.reactions
    if reaction_ids is not None:
        wanted = set(reaction_ids)
        reactions = [r for r in reactions if r.reaction_id in wanted]
    return reactions, gold


def score_files(
    gold_path,
    pred_path,
    config: ScoreConfig = ScoreConfig(),
    *,
    molecule_cache: bool = True,
    reaction_ids: Iterable[str] | None = None,
) -> ScoreReport:
    """Load a gold file and a prediction file and score them.

    ``reaction_ids`` restricts the gold reactions scored (e.g. to those a ``--limit``ed run
    asked about); by default every gold reaction is scored.
    """
    reactions, gold = load_gold(gold_path, reaction_ids)
    predictions = load_predictions(pred_path, (r.reaction_id for r in reactions))
    cache = gold_cache(gold_path, gold.reactions, enabled=molecule_cache)
    return score_all(reactions, predictions, config, gold_rejected=gold.rejected, cache=cache)
