"""Top-k accuracy of reaction predictions (product-set matching) and the suite's metric cards.

A prediction is correct when its *product set* equals the recorded one: the prediction text
is canonicalized by RDKit as a whole, split on ``.``, each molecule canonicalized again and
counted, and the multiset compared with the truth's (the order-invariant accuracy of the
reference code, ``rxn_lm.eval_utils.clean_pred_func(put_in_frozen_set=True)``). Top-k
accuracy is the fraction of test reactions whose first correct prediction has rank <= k
(``mean(cumsum(correct) > 0)`` over ranks, as in the reference), computed by the shared
:mod:`chemassay.report.ranking`. Predictions that RDKit cannot read are wrong; reactions
without predictions are wrong and counted.

The stereo-agnostic variant removes all stereochemistry (tetrahedral and double-bond) from
both sides before comparing; isotopes and charges are kept. The regioisomer-agnostic variant
(Bradshaw et al.'s Heck analysis, where "different regioisomers are counted as correct")
goes further: with stereochemistry removed, each molecule is reduced to its molecular formula
and the multiset of its ring systems (fused rings merged, written as canonical SMILES of the
ring atoms), so the same pieces joined at another position (an ortho instead of a para
product, the branched instead of the linear Heck product, an amide on the other amine) count
as correct while a different set of atoms or rings does not. The ``subset`` match mode counts
a prediction as correct when every predicted molecule is among the recorded products, for
models that predict only the major product of reactions recorded with by-products.

Every molecule is read by the chemistry core (:func:`chemassay.chem.molecules.try_canonical`,
with its size limits: a SMILES over 10,000 characters or 2,000 heavy atoms is unreadable).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rdkit import Chem
from rdkit.Chem.rdMolDescriptors import CalcMolFormula

from chemassay.chem.molecules import parse_smiles, rdkit_log_silenced, try_canonical
from chemassay.contract.errors import UserInputError
from chemassay.report import ranking
from chemassay.report.cards import MetricCard
from chemassay.runtime.parallel import Failure, parallel_map

ProductSet = frozenset[tuple[str, int]]
MATCH_MODES = ("exact", "subset")
SUITE = "reaction-ood"


@lru_cache(maxsize=1_000_000)
def _canonical_fragment(smiles: str, stereo: bool) -> str | None:
    # stereo=False removes stereo only (RemoveStereochemistry), isotopes stay: see the docstring
    return try_canonical(smiles, stereo=stereo, remove_atom_maps=True, isotopes=True)


@lru_cache(maxsize=1_000_000)
def regio_key(smiles: str) -> str | None:
    """A molecule up to regiochemistry: its molecular formula and the sorted canonical SMILES
    of its ring systems (stereo removed); ``None`` when RDKit cannot read it."""
    flat = _canonical_fragment(smiles, False)
    if flat is None:
        return None
    with rdkit_log_silenced():
        try:
            mol = parse_smiles(flat)
        except ValueError:
            return None
        systems: list[set[int]] = []
        for ring in mol.GetRingInfo().AtomRings():
            merged = set(ring)
            for system in [s for s in systems if s & merged]:
                merged |= system
                systems.remove(system)
            systems.append(merged)
        rings = sorted(Chem.MolFragmentToSmiles(mol, atomsToUse=sorted(system), canonical=True)
                       for system in systems)
        return CalcMolFormula(mol) + "|" + ".".join(rings)


@lru_cache(maxsize=1_000_000)
def regio_set(smiles: str) -> ProductSet | None:
    """The product multiset of :func:`product_set` with every molecule replaced by its
    :func:`regio_key` (``None`` when unreadable)."""
    flat = product_set(smiles, False)
    if flat is None:
        return None
    counts: Counter[str] = Counter()
    for molecule, count in flat:
        key = regio_key(molecule)
        counts[key if key is not None else molecule] += count
    return frozenset(counts.items())


@lru_cache(maxsize=1_000_000)
def product_set(smiles: str, stereo: bool = True) -> ProductSet | None:
    """The canonical product multiset of a (possibly multi-molecule) SMILES, or ``None``.

    ``None`` means RDKit cannot read the text (or it is empty). With ``stereo=False`` all
    stereochemistry is removed first. Atom maps never matter.
    """
    if not isinstance(smiles, str):
        return None
    text = smiles.strip()
    if not text or any(ch.isspace() for ch in text):
        return None
    whole = _canonical_fragment(text, stereo)
    if whole is None:
        return None
    pieces = []
    for piece in whole.split("."):
        canonical = _canonical_fragment(piece, stereo)
        if canonical is None:  # a canonical fragment RDKit cannot read back: keep it as written
            canonical = piece
        pieces.append(canonical)
    return frozenset(Counter(pieces).items())


def is_match(predicted: ProductSet | None, truth: ProductSet | None, match: str = "exact") -> bool:
    """Whether a predicted product set counts as correct for ``truth`` under ``match``."""
    if predicted is None or truth is None:
        return False
    if match == "exact":
        return predicted == truth
    if match == "subset":
        truth_counts = dict(truth)
        return bool(predicted) and all(truth_counts.get(s, 0) >= c for s, c in predicted)
    raise UserInputError(f"unknown match mode {match!r}; use one of {', '.join(MATCH_MODES)}")


@dataclass(frozen=True)
class ItemScore:
    """How one test reaction was scored: 1-based rank of the first correct prediction."""

    rank: int | None
    rank_stereo_agnostic: int | None
    n_predictions: int
    n_invalid: int
    top1_invalid: bool
    rank_regio_agnostic: int | None = None


def score_item(truth: str, predictions: Sequence[str], match: str = "exact") -> ItemScore:
    """Score one test reaction's ranked ``predictions`` against its recorded products ``truth``.

    Raises ``ValueError`` when ``truth`` itself cannot be read (the caller reports it).
    """
    truth_set = product_set(truth, True)
    truth_flat = product_set(truth, False)
    if truth_set is None or truth_flat is None:
        raise ValueError(f"recorded products {str(truth)[:80]!r} cannot be read by RDKit")
    truth_regio = regio_set(truth)
    rank = rank_flat = rank_regio = None
    invalid = 0
    top1_invalid = False
    for position, prediction in enumerate(predictions, start=1):
        predicted = product_set(prediction, True)
        if predicted is None:
            invalid += 1
            top1_invalid = top1_invalid or position == 1
            continue
        if rank is None and is_match(predicted, truth_set, match):
            rank = position
        if rank_flat is None and is_match(product_set(prediction, False), truth_flat, match):
            rank_flat = position
        if rank_regio is None and is_match(regio_set(prediction), truth_regio, match):
            rank_regio = position
    return ItemScore(rank, rank_flat, len(predictions), invalid, top1_invalid, rank_regio)


def _score_chunk(args: tuple[list[str], list[list[str]], str]) -> list[ItemScore | str]:
    truths, predictions, match = args
    out: list[ItemScore | str] = []
    for truth, preds in zip(truths, predictions, strict=True):
        try:
            out.append(score_item(truth, preds, match))
        except ValueError as exc:
            out.append(str(exc))
    return out


def score_all(
    truths: Sequence[str], predictions: Sequence[Sequence[str]], *, match: str = "exact", n_jobs: int = 1,
    chunk: int = 2000,
) -> list[ItemScore | str]:
    """Score every test reaction; an unreadable truth gives its reason (a string) instead."""
    if match not in MATCH_MODES:
        raise UserInputError(f"unknown match mode {match!r}; use one of {', '.join(MATCH_MODES)}")
    tasks = [
        (list(truths[i:i + chunk]), [list(p) for p in predictions[i:i + chunk]], match)
        for i in range(0, len(truths), chunk)
    ]
    results = parallel_map(_score_chunk, tasks, n_jobs=n_jobs, chunk_size=1, description="scoring")
    flat: list[ItemScore | str] = []
    for part in results:
        if isinstance(part, Failure):
            raise RuntimeError(f"scoring failed: {part}")
        flat.extend(part)
    return flat


def topk_accuracy(ranks: Sequence[int | None], k_values: Sequence[int]) -> dict[int, float]:
    """Fraction of items whose first correct rank is <= k, for each k (NaN for no items).

    The shared :func:`chemassay.report.ranking.accuracy_at_k` (1-based ranks, ``None`` =
    never correct).
    """
    return ranking.accuracy_at_k(list(ranks), k_values)


def topk_hits(ranks: Sequence[int | None], k: int) -> list[float]:
    """Per item 1.0 when the first correct rank is <= k, else 0.0 (the values top-k averages)."""
    return [float(hit) for hit in ranking.hits_at_k(list(ranks), k)]


def default_k_values(max_k: int) -> list[int]:
    """The k reported: 1, 2, 3, 5, 10 ... up to ``max_k`` (and ``max_k`` itself)."""
    chosen = [k for k in (1, 2, 3, 5, 10, 20, 50) if k <= max_k]
    if max_k not in chosen:
        chosen.append(max_k)
    return chosen


# ------------------------------------------------------------------------------------------
# Metric cards: every key a reaction-ood result can carry

_PAPER = "Bradshaw et al. 2025"
_WILSON = "wilson"
"""Proportions (every per-item value 0 or 1): Wilson score intervals."""
_COUNT = "a count, not a mean over items"


def _card(key: str, description: str, direction: str, *, rng: tuple = (0.0, 1.0), paper_name: str | None = None,
          paper_table: str | None = None, interval: str = "none", note: str = "", short: str = "") -> MetricCard:
    return MetricCard(key=key, suite=SUITE, description=description, direction=direction, range=rng,
                      paper_name=paper_name, paper_table=paper_table, interval=interval, interval_note=note,
                      short=short)


_NONNEG = (0.0, None)

METRIC_CARDS: list[MetricCard] = [
    # evaluate
    _card("top{k}_accuracy", "fraction of test reactions whose recorded product set is among the first k "
          "predictions (canonical product multiset, order-invariant)", "higher",
          paper_name="top-k accuracy", paper_table="Tables S2.2-S2.4 (Figs. 2-4)", interval=_WILSON, short="top-k"),
    _card("top{k}_accuracy_stereo_agnostic", "top-k accuracy with all stereochemistry removed from predictions "
          "and recorded products (isotopes and charges still count)", "higher",
          paper_name="top-1 accuracy, stereochemistry removed", paper_table="§2.4 (Heck split)", interval=_WILSON,
          short="top-k (no stereo)"),
    _card("top{k}_accuracy_regio_agnostic", "top-k accuracy up to regiochemistry: stereo removed, each molecule "
          "compared by molecular formula and ring systems, so regioisomers of the recorded products count as correct",
          "higher", paper_name="top-1 accuracy, regioisomers counted as correct",
          paper_table="§2.4 (Heck split, Fig. 5)", interval=_WILSON, short="top-k (regio)"),
    _card("top1_invalid_rate", "fraction of test reactions with predictions whose first prediction RDKit cannot "
          "read", "lower", interval=_WILSON, short="top-1 invalid"),
    _card("invalid_prediction_rate", "fraction of all predictions (every rank) that RDKit cannot read", "lower",
          note="a ratio of prediction counts, not a mean over test reactions", short="invalid"),
    _card("n_missing_predictions", "test reactions with no prediction at all (scored as wrong)", "lower",
          rng=_NONNEG, note=_COUNT, short="missing"),
    _card("mean_predictions_per_item", "mean length of the ranked prediction lists scored (after the --k cut)",
          "none", rng=_NONNEG, note="descriptive: how many candidates the model gave", short="preds/item"),
    _card("n_duplicate_predictions", "prediction rows ignored because their item (wide layout: id; long layout: "
          "id and rank) was given before; the first one counts (listed in skipped)", "lower",
          rng=_NONNEG, note=_COUNT, short="duplicates"),
    _card("n_unmatched_prediction_ids", "ids in the predictions that name no test reaction: ignored (listed in "
          "skipped)", "lower", rng=_NONNEG, note=_COUNT, short="unmatched ids"),
    _card("n_model_failures", "test reactions for which the live model failed (a failed request): scored as "
          "wrong, each listed in skipped with its reason", "lower", rng=_NONNEG, note=_COUNT, short="model failures"),
    # iterate
    _card("round{n}_top{k}_accuracy", "top-k accuracy of round n of the iterated evaluation (round n+1 is fed "
          "the round-n top-1 prediction)", "higher", paper_name="two-round top-1 accuracy",
          paper_table="§2.3 (Grignard ester double additions, Fig. 5)", note="per-round accuracies are reported "
          "without intervals (rounds share items)", short="round-n top-k"),
    _card("round{n}_top1_accuracy_stereo_agnostic", "stereo-agnostic top-1 accuracy of round n", "higher",
          note="reported without intervals", short="round-n top-1 (no stereo)"),
    _card("any_round_top1_accuracy", "fraction of test reactions correct at top-1 in at least one round", "higher",
          note="reported without intervals", short="any round"),
    _card("recovered_in_round2", "reactions wrong at round-1 top-1 and right at round-2 top-1", "higher",
          rng=_NONNEG, note=_COUNT, short="recovered"),
    _card("recovered_fraction_of_round1_errors", "recovered_in_round2 divided by the round-1 top-1 errors",
          "higher", paper_name="4.5% -> 49.7% (double additions)", paper_table="§2.3",
          note="a ratio of counts", short="recovered %"),
    _card("lost_in_round2", "reactions right at round-1 top-1 and wrong at round-2 top-1", "lower", rng=_NONNEG,
          note=_COUNT, short="lost"),
    _card("n_round2_queries", "reactions asked again in round 2 (those whose round-1 top-1 is readable)", "none",
          rng=_NONNEG, note=_COUNT, short="round-2 queries"),
    # shift (Fig. 6)
    _card("{set}/reactant_median", "median over the test set of the mean cosine distance to the 5 nearest "
          "training reactions in reactant fingerprint space", "none", paper_name="reactant-space distance "
          "(median line)", paper_table="Fig. 6", note="a median of distances; describes the split, not a model",
          short="reactant dist."),
    _card("{set}/reactant_mean", "mean over the test set of the mean cosine distance to the 5 nearest training "
          "reactions in reactant fingerprint space", "none", paper_table="Fig. 6",
          note="describes the split, not a model", short="reactant dist. (mean)"),
    _card("{set}/difference_median", "median of the mean cosine distance to the 5 nearest training reactions "
          "in reaction-difference space (products minus reactants)", "none",
          paper_name="reaction-space distance (median line)", paper_table="Fig. 6",
          note="a median of distances; describes the split, not a model", short="reaction dist."),
    _card("{set}/difference_mean", "mean of the mean cosine distance to the 5 nearest training reactions in "
          "reaction-difference space", "none", paper_table="Fig. 6", note="describes the split, not a model",
          short="reaction dist. (mean)"),
    # clean (Section S1.1)
    _card("rows_in", "reactions read", "none", rng=_NONNEG, note=_COUNT),
    _card("unparsable", "reactions RDKit cannot read (listed in skipped)", "none", rng=_NONNEG, note=_COUNT),
    _card("too_few_reactant_heavy_atoms", "removed: reactants hold fewer than 5 heavy atoms", "none", rng=_NONNEG,
          paper_table="Section S1.1", note=_COUNT),
    _card("no_carbon_in_reactants", "removed: no reactant contains carbon", "none", rng=_NONNEG,
          paper_table="Section S1.1", note=_COUNT),
    _card("too_many_tokens", "removed: reactants or products have max_tokens (800) SMILES tokens or more", "none",
          rng=_NONNEG, paper_table="Section S1.1", note=_COUNT),
    _card("no_reactant_with_2_bonds", "removed: no reactant molecule has at least 2 bonds", "none", rng=_NONNEG,
          paper_table="Section S1.1", note=_COUNT),
    _card("no_new_product_heavy_enough", "removed: no new product with at least 2 heavy atoms", "none",
          rng=_NONNEG, paper_table="Section S1.1", note=_COUNT),
    _card("protonation_only", "removed: every product is a (de)protonated reactant, or there is no product",
          "none", rng=_NONNEG, paper_table="Section S1.1", note=_COUNT),
    _card("duplicates", "duplicate reactions removed (same canonical reactant and product multisets)", "none",
          rng=_NONNEG, paper_table="Section S1.1", note=_COUNT),
    _card("rows_out", "reactions kept", "none", rng=_NONNEG, note=_COUNT),
    # verify
    _card("checks", "guarantees checked on a split folder", "none", rng=_NONNEG, note=_COUNT),
    _card("passed", "guarantees that hold", "higher", rng=_NONNEG, note=_COUNT),
    _card("failed", "guarantees violated", "lower", rng=_NONNEG, note=_COUNT),
]
"""Every metric key written by ``evaluate``, ``iterate``, ``shift``, ``clean`` and ``verify``."""
