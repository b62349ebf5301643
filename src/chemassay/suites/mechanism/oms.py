"""oMeS: aligning a predicted mechanism to the gold one and scoring it.

The alignment is the weighted Needleman–Wunsch dynamic program of the paper, implemented
to give the same numbers as the published scorer (``scripts/utils_eval.py`` of
skylarkie/oMeBench) on the same input:

* gold steps are ``(subtype, intermediate, weight)``, predicted steps ``(subtype,
  intermediate)``;
* a diagonal move with equal subtype strings is a ``match``: exact credit ``w`` when both
  canonical SMILES are valid and equal, partial credit ``w × T`` when both are valid and the
  Tanimoto ``T`` of their Morgan fingerprints (radius 2, 2048 bits) is at least ``tau``
  (else 0); a diagonal move with different subtypes is a ``type_mismatch`` (no credit);
  skipping a gold step (``skip_gold``) or a predicted one (``skip_pred``) earns nothing;
  type mismatches and skips add a penalty of ``1e-6``;
* each cell keeps the best candidate by the key ``(S_total, S_partial, move rank,
  penalty)`` with ranks match 3 > type_mismatch 2 > skip 1; on a full tie the first of
  (skip_gold, skip_pred, diagonal) wins, as in the reference;
* the trace-back gives one tag per aligned pair.

Per reaction: ``S_total`` and ``S_partial`` (the two credits summed along the best path),
``V`` (share of predicted intermediates RDKit parses into a non-empty molecule) and ``L``
(share of gold steps tagged ``match``).

Molecules are parsed once per distinct SMILES string: :class:`MoleculeCache` keeps the
canonical SMILES and the packed fingerprint of every string seen, so the dynamic program
only looks values up. Parsing is RDKit's ``MolFromSmiles`` as in the reference (text
after whitespace is a name; atom maps are kept in the canonical form), through
:func:`chemassay.chem.molecules.safe_mol_from_smiles`: a string over the core's size limits
(10,000 characters, 2,000 atoms) counts as invalid instead of stalling the run.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from rdkit import Chem, rdBase

from chemassay.chem.fingerprints import morgan_fingerprints
from chemassay.chem.molecules import mol_to_canonical, rdkit_log_silenced, safe_mol_from_smiles
from chemassay.runtime.files import atomic_write_bytes

TAU = 0.6
FP_RADIUS = 2
FP_BITS = 2048
NON_MATCH_PENALTY = 1e-6

MATCH, TYPE_MISMATCH, SKIP_GOLD, SKIP_PRED = "match", "type_mismatch", "skip_gold", "skip_pred"
TAGS = (MATCH, TYPE_MISMATCH, SKIP_GOLD, SKIP_PRED)
_RANK = {MATCH: 3, TYPE_MISMATCH: 2, SKIP_GOLD: 1, SKIP_PRED: 1}


class MoleculeCache:
    """Canonical SMILES and Morgan fingerprints of every SMILES string seen, computed once.

    ``canonical(s)`` is RDKit's canonical SMILES, or ``None`` when ``s`` is not a string,
    does not parse, or parses to an empty molecule (the reference's ``""``). Each
    fingerprint is kept as one Python integer (its 2048 bits) with its popcount, so a
    Tanimoto is an AND and a ``bit_count`` (exactly RDKit's value: the same integer counts
    divided in double precision). :meth:`save` / :meth:`load` serialize a cache; the
    scorer keeps the gold file's molecules in the checked cache of
    :mod:`chemassay.runtime.cache` with them.
    """

    def __init__(self, *, radius: int = FP_RADIUS, n_bits: int = FP_BITS) -> None:
        self.radius = radius
        self.n_bits = n_bits
        self._canonical: dict[str, str | None] = {}
        self._fp: dict[str, int] = {}
        self._bits: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._canonical)

    def __contains__(self, smiles: object) -> bool:
        return isinstance(smiles, str) and smiles in self._canonical

    def add(self, smiles_items: Iterable[object]) -> int:
        """Parse every new string of ``smiles_items`` (batching the fingerprint work).

        Returns how many new strings were parsed.
        """
        new_mols: list[Chem.Mol] = []
        new_keys: list[str] = []
        parsed = 0
        with rdkit_log_silenced():
            for smiles in smiles_items:
                if not isinstance(smiles, str) or smiles in self._canonical:
                    continue
                parsed += 1
                mol = safe_mol_from_smiles(smiles)
                if mol is None or mol.GetNumAtoms() == 0:
                    self._canonical[smiles] = None
                    continue
                self._canonical[smiles] = mol_to_canonical(mol)
                new_mols.append(mol)
                new_keys.append(smiles)
        if new_mols:
            self._store(new_keys, morgan_fingerprints(new_mols, radius=self.radius, n_bits=self.n_bits))
        return parsed

    def _store(self, keys: Sequence[str], packed: np.ndarray) -> None:
        for key, row in zip(keys, packed, strict=True):
            value = int.from_bytes(row.astype("<u8").tobytes(), "little")
            self._fp[key] = value
            self._bits[key] = value.bit_count()

    def canonical(self, smiles: object) -> str | None:
        """Canonical SMILES of ``smiles`` (``None`` if invalid); parses it if unseen."""
        if not isinstance(smiles, str):
            return None
        if smiles not in self._canonical:
            self.add([smiles])
        return self._canonical[smiles]

    def similarity(self, first: str, second: str) -> float:
        """Tanimoto of two valid cached SMILES (RDKit's ``TanimotoSimilarity`` value)."""
        common = (self._fp[first] & self._fp[second]).bit_count()
        union = self._bits[first] + self._bits[second] - common
        return common / union if union else 0.0

    def packed(self, smiles: str) -> np.ndarray:
        """Packed ``uint64`` fingerprint row of a valid cached SMILES."""
        return np.frombuffer(self._fp[smiles].to_bytes(self.n_bits // 8, "little"), dtype="<u8").copy()

    def save(self, path: str | os.PathLike) -> None:
        """Write the cache to ``path`` (``.npz``) atomically."""
        keys = list(self._canonical)
        valid = [k for k in keys if self._canonical[k] is not None]
        fps = np.stack([self.packed(k) for k in valid]) if valid else np.zeros((0, self.n_bits // 64), np.uint64)
        meta = {
            "radius": self.radius,
            "n_bits": self.n_bits,
            "rdkit": rdBase.rdkitVersion,
            "keys": keys,
            "canonical": [self._canonical[k] for k in keys],
            "valid": valid,
        }
        buffer = io.BytesIO()
        np.savez(buffer, fps=fps, meta=np.array(json.dumps(meta)))
        atomic_write_bytes(path, buffer.getvalue())

    @classmethod
    def load(cls, path: str | os.PathLike) -> MoleculeCache | None:
        """A cache written by :meth:`save`, or ``None`` if unreadable or from another RDKit."""
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                fps = data["fps"]
        except (OSError, ValueError, KeyError):
            return None
        if meta.get("rdkit") != rdBase.rdkitVersion:
            return None
        cache = cls(radius=int(meta["radius"]), n_bits=int(meta["n_bits"]))
        cache._canonical = dict(zip(meta["keys"], meta["canonical"], strict=True))
        cache._store(meta["valid"], fps)
        return cache


@dataclass(frozen=True)
class GoldStep:
    """A gold step as the scorer sees it."""

    subtype: str | None
    smiles: str
    weight: float
    type: str | None = None


@dataclass
class Alignment:
    """Result of aligning one predicted mechanism to its gold mechanism.

    ``dp_total`` and ``dp_partial`` are the raw sums of the dynamic program (the reference's
    unrounded ``DP_tot[N][M]`` and ``DP_par[N][M]``); ``tags`` the trace-back; for each gold
    step, ``gold_tag`` is its tag (``match``, ``type_mismatch`` or ``skip_gold``),
    ``gold_exact`` whether it earned exact credit and ``gold_partial`` the similarity it was
    credited with (0 when below ``tau`` or unmatched).
    """

    dp_total: float
    dp_partial: float
    tags: list[str]
    n_gold: int
    n_pred: int
    n_valid_pred: int
    gold_tag: list[str] = field(default_factory=list)
    gold_exact: list[bool] = field(default_factory=list)
    gold_partial: list[float] = field(default_factory=list)

    @property
    def validity(self) -> float:
        """V: valid predicted intermediates / max(1, predicted steps)."""
        return self.n_valid_pred / max(1, self.n_pred)

    @property
    def logic(self) -> float:
        """L: gold steps aligned as ``match`` / max(1, gold steps)."""
        return sum(tag == MATCH for tag in self.tags) / max(1, self.n_gold)


def align(
    gold: Sequence[GoldStep],
    pred_subtypes: Sequence[str | None],
    pred_smiles: Sequence[object],
    cache: MoleculeCache,
    *,
    tau: float = TAU,
) -> Alignment:
    """Align a predicted mechanism to the gold one (see the module docstring).

    ``pred_smiles`` items that are not strings count as invalid intermediates. A ``None``
    subtype (gold or predicted) never equals anything.
    """
    n_gold, n_pred = len(gold), len(pred_smiles)
    cache.add([step.smiles for step in gold])
    cache.add(pred_smiles)
    gold_can = [cache.canonical(step.smiles) for step in gold]
    pred_can = [cache.canonical(smiles) for smiles in pred_smiles]

    tot = [[0.0] * (n_pred + 1) for _ in range(n_gold + 1)]
    par = [[0.0] * (n_pred + 1) for _ in range(n_gold + 1)]
    pen = [[0.0] * (n_pred + 1) for _ in range(n_gold + 1)]
    move = [[""] * (n_pred + 1) for _ in range(n_gold + 1)]
    for i in range(1, n_gold + 1):
        pen[i][0] = pen[i - 1][0] - NON_MATCH_PENALTY
        move[i][0] = SKIP_GOLD
    for j in range(1, n_pred + 1):
        pen[0][j] = pen[0][j - 1] - NON_MATCH_PENALTY
        move[0][j] = SKIP_PRED

    for i in range(1, n_gold + 1):
        g_step = gold[i - 1]
        g_can = gold_can[i - 1]
        weight = g_step.weight
        g_smiles = g_step.smiles
        tot_up, par_up, pen_up = tot[i - 1], par[i - 1], pen[i - 1]
        tot_here, par_here, pen_here, move_here = tot[i], par[i], pen[i], move[i]
        for j in range(1, n_pred + 1):
            if g_step.subtype is not None and g_step.subtype == pred_subtypes[j - 1]:
                p_can = pred_can[j - 1]
                m_tot = weight if (g_can and g_can == p_can) else 0.0
                if g_can and p_can:
                    sim = cache.similarity(g_smiles, pred_smiles[j - 1])  # type: ignore[arg-type]
                    m_par = weight * (0.0 if sim < tau else sim)
                else:
                    m_par = 0.0
                diag = (tot_up[j - 1] + m_tot, par_up[j - 1] + m_par, 3, pen_up[j - 1] + 0.0, MATCH)
            else:
                diag = (tot_up[j - 1], par_up[j - 1], 2, pen_up[j - 1] - NON_MATCH_PENALTY, TYPE_MISMATCH)
            best = (tot_up[j], par_up[j], 1, pen_up[j] - NON_MATCH_PENALTY, SKIP_GOLD)
            left = (tot_here[j - 1], par_here[j - 1], 1, pen_here[j - 1] - NON_MATCH_PENALTY, SKIP_PRED)
            # Strictly greater replaces: on a full tie the earlier candidate stays (reference order).
            if left[:4] > best[:4]:
                best = left
            if diag[:4] > best[:4]:
                best = diag
            tot_here[j], par_here[j], _, pen_here[j], move_here[j] = best

    tags: list[str] = []
    gold_tag = [SKIP_GOLD] * n_gold
    gold_exact = [False] * n_gold
    gold_partial = [0.0] * n_gold
    i, j = n_gold, n_pred
    while i > 0 or j > 0:
        if i == 0:
            tags.append(SKIP_PRED)
            j -= 1
            continue
        if j == 0:
            tags.append(SKIP_GOLD)
            i -= 1
            continue
        action = move[i][j]
        tags.append(action)
        if action in (MATCH, TYPE_MISMATCH):
            gold_tag[i - 1] = action
            if action == MATCH:
                g_can, p_can = gold_can[i - 1], pred_can[j - 1]
                gold_exact[i - 1] = bool(g_can) and g_can == p_can
                if g_can and p_can:
                    sim = cache.similarity(gold[i - 1].smiles, pred_smiles[j - 1])  # type: ignore[arg-type]
                    gold_partial[i - 1] = 0.0 if sim < tau else sim
            i, j = i - 1, j - 1
        elif action == SKIP_GOLD:
            i -= 1
        else:
            j -= 1
    tags.reverse()
    return Alignment(
        dp_total=tot[n_gold][n_pred],
        dp_partial=par[n_gold][n_pred],
        tags=tags,
        n_gold=n_gold,
        n_pred=n_pred,
        n_valid_pred=sum(1 for c in pred_can if c),
        gold_tag=gold_tag,
        gold_exact=gold_exact,
        gold_partial=gold_partial,
    )


def total_weight(gold: Sequence[GoldStep]) -> float:
    """Sum of the gold weights, accumulated left to right like the dynamic program."""
    total = 0.0
    for step in gold:
        total += step.weight
    return total


@dataclass(frozen=True)
class ReactionScores:
    """The four oMeS metrics of one reaction."""

    S_total: float
    S_partial: float
    V: float
    L: float


def reaction_scores(alignment: Alignment, gold: Sequence[GoldStep], *, round_to: int | None = None) -> ReactionScores:
    """Per-reaction metrics from an alignment.

    Unrounded (``round_to=None``): the credit sums are divided by the total gold weight, so
    a perfect mechanism scores exactly 1.0 even when its weights sum to 1 ± 1 ulp in floating
    point (68 of the 196 Gold reactions do); the change is below 1e-15 otherwise.
    ``round_to=N``: the published tool's values, ``round(sum, N)`` of the raw sums and of V
    and L, with no division.
    """
    if round_to is not None:
        return ReactionScores(
            round(alignment.dp_total, round_to),
            round(alignment.dp_partial, round_to),
            round(alignment.validity, round_to),
            round(alignment.logic, round_to),
        )
    weight = total_weight(gold)
    if weight > 0:
        s_total, s_partial = alignment.dp_total / weight, alignment.dp_partial / weight
    else:
        s_total, s_partial = alignment.dp_total, alignment.dp_partial
    return ReactionScores(s_total, s_partial, alignment.validity, alignment.logic)
