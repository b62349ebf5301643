"""Combinatorial generator: random joins of BRICS fragments, the MOSES ``CombinatorialGenerator``.

Training (MOSES ``moses/baselines/combinatorial.py``) cuts every training molecule at its
BRICS bonds (RDKit ``FragmentOnBRICSBonds``; a cut leaves a labelled dummy atom ``[n*]`` on
each side) and records how often each fragment SMILES occurs and how many fragments each
molecule had. Sampling one molecule:

1. draw the number of fragments ``N`` from the training distribution;
2. draw ``N`` fragments one after the other, each with probability proportional to its
   training frequency among the fragments whose number of attachment points keeps the
   molecule completable: the first may have at most ``N - 1``; later ones at most
   ``N - i - open + 1`` (``open``: attachment points left on the molecule), at least 1, and
   at least 2 while only one point is open and more fragments are to come (``N == 1``: a
   fragment without attachment points);
3. join each new fragment to the molecule at a random open point of the molecule and a
   random point of the fragment (the two dummy atoms are removed and their neighbours
   bonded with the fragment side's bond order).

``join="moses"`` is the reference behaviour, draw for draw: sample ``i`` uses a legacy
``RandomState(seed * n + i)`` and the same sequence of draws as the reference's
``generate_one(seed=i)``, so ``seed=0`` equals the reference's ``reproduce(seed=1)``
samples. It joins any two attachment points, even a double-bond cut (BRICS type 7) to a
single-bond one, so a small fraction of its samples (about 0.3 %) are not valid molecules.

``join="brics"`` (default) is the generator that produced the MOSES paper's combinatorial
row: the MOSES repository's version after its April 2020 change "combinatorial generator
updated to do only valid fragment combination" (``molsets`` 0.3.1 on PyPI predates it).
Each attachment point keeps its BRICS label (the dummy atom's isotope, ``[16*]``); after the
first fragment, only fragments with a point whose label may bond to one of the molecule's
open labels under RDKit's BRICS rules (``rdkit.Chem.BRICS.reactionDefs``; 7a/7b as 7–7)
are drawn, and the join is drawn uniformly among the compatible (molecule point, fragment
point) pairs. Draw for draw as that code (``generate_one(seed)`` with its ``np.random``
draws replayed; sample ``i`` of ``sample(n, seed)`` uses ``RandomState(seed * n + i)``),
except where it would crash (no compatible fragment left): there the molecule starts over
with the next draws.

``join="valid"`` joins only where the result is a valid molecule: the fragment's point
must carry the same bond order as the molecule's, and the joined molecule must pass RDKit
sanitization; otherwise another fragment is drawn (the molecule is restarted after many
failures). Its samples are canonical SMILES of sanitized molecules.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import time
import zlib
from collections import Counter
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np
from rdkit import Chem
from rdkit.Chem.BRICS import reactionDefs

from chemassay.chem.molecules import InvalidSmiles, rdkit_log_silenced, safe_mol_from_smiles
from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import atomic_write_bytes
from chemassay.runtime.parallel import Failure, parallel_map
from chemassay.suites.generation.filters import parse_like_moses

FORMAT = "chemassay.generation.combinatorial/1"
JOIN_MODES = ("brics", "valid", "moses")
DEFAULT_JOIN = "brics"
_LABEL_PATTERN = re.compile(r"\[([0-9]+)[ab]?\*\]")


def brics_connection_rules() -> tuple[dict[int, int], frozenset[tuple[int, int]]]:
    """RDKit's BRICS bond rules as label pairs: ``partners[label]`` is the bit set (bit ``j``
    for label ``j``) of the labels ``label`` may bond to, ``pairs`` the allowed ordered pairs
    (types 7a/7b are one label, 7, bonding to itself)."""
    partners: dict[int, int] = {}
    pairs: set[tuple[int, int]] = set()
    for row in reactionDefs:
        for first, second, _bond in row:
            if first in ("7a", "7b"):
                partners[7] = 1 << 7
                pairs.add((7, 7))
                continue
            a, b = int(first), int(second)
            partners[a] = partners.get(a, 0) | (1 << b)
            partners[b] = partners.get(b, 0) | (1 << a)
            pairs.update({(a, b), (b, a)})
    return partners, frozenset(pairs)


_PARTNERS, _PAIRS = brics_connection_rules()
_MAX_FRAGMENT_TRIES = 50
_MAX_RESTARTS = 20


def brics_fragments(molecule: str | Chem.Mol) -> list[str]:
    """SMILES of the BRICS fragments of a molecule, with ``[n*]`` attachment points.

    Same as MOSES ``fragmenter``: ``FragmentOnBRICSBonds`` then the canonical SMILES split at
    ``.``, repeats kept. Raises ``InvalidSmiles`` for unparseable input.
    """
    mol = molecule if isinstance(molecule, Chem.Mol) else parse_like_moses(molecule)
    return Chem.MolToSmiles(Chem.FragmentOnBRICSBonds(mol)).split(".")


def _fragment_chunk(smiles: Sequence[str]) -> tuple[Counter, Counter, list[tuple[int, str]]]:
    fragments: Counter[str] = Counter()
    sizes: Counter[int] = Counter()
    invalid = []
    for offset, text in enumerate(smiles):
        try:
            parts = brics_fragments(text)
        except InvalidSmiles as exc:
            invalid.append((offset, exc.reason))
            continue
        fragments.update(parts)
        sizes[len(parts)] += 1
    return fragments, sizes, invalid


def attachment_points(mol: Chem.Mol) -> list[Chem.Atom]:
    """The dummy atoms (``*``) of a fragment or partial molecule, in atom order."""
    return [atom for atom in mol.GetAtoms() if atom.GetSymbol() == "*"]


def join_at(mol: Chem.Mol, fragment: Chem.Mol, mol_point: Chem.Atom, fragment_point: Chem.Atom) -> Chem.Mol:
    """Bond the neighbours of two attachment points and remove both dummy atoms.

    The new bond takes the order of the fragment's attachment bond (as MOSES does); the
    result is not sanitized.
    """
    offset = mol.GetNumAtoms()
    editable = Chem.EditableMol(Chem.CombineMols(mol, fragment))
    order = fragment_point.GetBonds()[0].GetBondType()
    editable.AddBond(
        mol_point.GetNeighbors()[0].GetIdx(), fragment_point.GetNeighbors()[0].GetIdx() + offset, order=order
    )
    # Remove the higher index first so the other index stays valid.
    editable.RemoveAtom(fragment_point.GetIdx() + offset)
    editable.RemoveAtom(mol_point.GetIdx())
    return editable.GetMol()


def _sanitized(mol: Chem.Mol) -> Chem.Mol | None:
    candidate = Chem.Mol(mol)
    with rdkit_log_silenced():
        try:
            Chem.SanitizeMol(candidate)
        except Exception:  # RDKit raises several exception types for bad valence/aromaticity
            return None
    return candidate


class CombinatorialGenerator:
    """A trained combinatorial generator (see the module docs).

    ``fragments`` are in first-seen training order with their ``fragment_counts``;
    ``size_values`` / ``size_counts`` give the number-of-fragments distribution, also in
    first-seen order (the reference's order, which the draws depend on).
    """

    def __init__(
        self,
        fragments: Sequence[str],
        fragment_counts: Sequence[int],
        size_values: Sequence[int],
        size_counts: Sequence[int],
        info: dict | None = None,
    ) -> None:
        if not fragments:
            raise UserInputError("a combinatorial generator needs at least one fragment")
        self.fragments = list(fragments)
        self.fragment_counts = np.asarray(fragment_counts, dtype=np.int64)
        self.size_values = [int(v) for v in size_values]
        self.size_counts = [int(c) for c in size_counts]
        self.info = dict(info or {})
        self.attachments = np.array([f.count("*") for f in self.fragments], dtype=np.int64)
        self.partner_bits = np.array([_fragment_partners(f) for f in self.fragments], dtype=np.int64)
        self.restarts = 0
        self.frequency = self.fragment_counts / self.fragment_counts.sum()
        total = sum(self.size_counts)
        size_probs = np.array([c / total for c in self.size_counts])
        self._size_cdf = size_probs.cumsum()
        self._size_cdf /= self._size_cdf[-1]
        self._masked: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._mols: dict[int, Chem.Mol] = {}

    def __getstate__(self) -> dict:
        # Worker processes rebuild the caches; RDKit molecules need not travel.
        state = dict(self.__dict__)
        state["_masked"] = {}
        state["_mols"] = {}
        return state

    # Training -------------------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        smiles: Sequence[str],
        *,
        n_jobs: int = 1,
        chunk_size: int = 5000,
        show_progress: bool | None = None,
    ) -> CombinatorialGenerator:
        """Count BRICS fragments and fragments-per-molecule over ``smiles``.

        Unparseable SMILES are skipped and counted in ``info["n_invalid"]`` (the reference
        crashes on them).
        """
        started = time.perf_counter()
        chunks = [list(smiles[i:i + chunk_size]) for i in range(0, len(smiles), chunk_size)]
        results = parallel_map(
            _fragment_chunk, chunks, n_jobs=n_jobs, chunk_size=1, description="BRICS fragments",
            show_progress=show_progress,
        )
        fragments: Counter[str] = Counter()
        sizes: Counter[int] = Counter()
        invalid: list[dict] = []
        for number, result in enumerate(results):
            if isinstance(result, Failure):
                raise RuntimeError(f"fragmenting chunk {number} failed: {result}")
            chunk_fragments, chunk_sizes, chunk_invalid = result
            # Counter.update keeps first-seen order across chunks, as one pass would.
            fragments.update(chunk_fragments)
            sizes.update(chunk_sizes)
            invalid.extend({"index": number * chunk_size + i, "reason": r} for i, r in chunk_invalid)
        if not fragments:
            raise UserInputError("no valid molecule in the training set: nothing to fragment")
        info = {
            "n_train": len(smiles),
            "n_invalid": len(invalid),
            "invalid_examples": invalid[:20],
            "n_fragments": len(fragments),
            "train_seconds": round(time.perf_counter() - started, 3),
        }
        return cls(list(fragments), list(fragments.values()), list(sizes), list(sizes.values()), info)

    # Persistence ----------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write the model as gzipped JSON, atomically."""
        payload = {
            "format": FORMAT,
            "fragments": self.fragments,
            "fragment_counts": self.fragment_counts.tolist(),
            "size_values": self.size_values,
            "size_counts": self.size_counts,
            "info": self.info,
        }
        data = gzip.compress(json.dumps(payload).encode("utf-8"), mtime=0)
        atomic_write_bytes(path, data)
        return Path(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> CombinatorialGenerator:
        """Read a model written by :meth:`save`; a clear error if it is not one."""
        target = Path(path)
        if not target.is_file():
            raise UserInputError(
                f"{target}: no such combinatorial model file; train one with "
                f"'chemassay generation train --model combinatorial:{target}'"
            )
        try:
            payload = json.loads(gzip.decompress(target.read_bytes()))
            if payload.get("format") != FORMAT:
                raise ValueError(f"format {payload.get('format')!r}")
            return cls(
                payload["fragments"], payload["fragment_counts"], payload["size_values"],
                payload["size_counts"], payload.get("info"),
            )
        except (OSError, ValueError, KeyError, TypeError, EOFError, zlib.error) as exc:
            # A truncated or damaged file, or another file: one line, never a traceback.
            raise UserInputError(
                f"{target}: not a chemassay combinatorial model, or a damaged one ({type(exc).__name__}: {exc})"
            ) from None

    # Sampling -------------------------------------------------------------------------
    def _choice_table(self, lowest: int, highest: int, open_labels: int = 0) -> tuple[np.ndarray, np.ndarray]:
        key = (lowest, highest, open_labels)
        table = self._masked.get(key)
        if table is None:
            # Same arithmetic as the reference's pandas ``sample(weights=frequency)``.
            mask = (self.attachments <= highest) & (self.attachments >= lowest)
            if open_labels:
                mask &= (self.partner_bits & open_labels) > 0
            index = np.flatnonzero(mask)
            weights = self.frequency[index]
            cdf = (weights / weights.sum()).cumsum() if len(index) else weights
            if len(index):
                cdf /= cdf[-1]
            table = (index, cdf)
            self._masked[key] = table
        return table

    def _fragment_mol(self, index: int) -> Chem.Mol:
        mol = self._mols.get(index)
        if mol is None:
            mol = safe_mol_from_smiles(self.fragments[index])
            if mol is None:
                raise UserInputError(f"the model's fragment {self.fragments[index]!r} does not parse; is the model file damaged?")
            if len(self._mols) > 200_000:
                self._mols.clear()
            self._mols[index] = mol
        return mol

    def _draw_fragment(self, rng: np.random.RandomState, lowest: int, highest: int, open_labels: int = 0) -> Chem.Mol:
        index, cdf = self._choice_table(lowest, highest, open_labels)
        if len(index) == 0:
            raise _NoFragment(f"no fragment with {lowest}..{highest} attachment points")
        return self._fragment_mol(int(index[cdf.searchsorted(rng.random_sample(), side="right")]))

    def _limits(self, step: int, total: int, open_points: int) -> tuple[int, int]:
        highest = total - 1 if step == 0 else total - step - open_points + 1
        if total == 1:
            lowest = 0
        elif step != 0 and open_points == 1 and total > step + 1:
            lowest = 2
        else:
            lowest = 1
        return lowest, highest

    def _one_moses(self, rng: np.random.RandomState) -> str:
        total = self.size_values[int(self._size_cdf.searchsorted(rng.random_sample(), side="right"))]
        mol = None
        for step in range(total):
            points = [] if mol is None else attachment_points(mol)
            lowest, highest = self._limits(step, total, len(points))
            fragment = self._draw_fragment(rng, lowest, highest)
            if mol is None:
                mol = fragment
                continue
            mol_point = points[rng.randint(0, len(points))]
            fragment_points = attachment_points(fragment)
            fragment_point = fragment_points[rng.randint(0, len(fragment_points))]
            mol = join_at(mol, fragment, mol_point, fragment_point)
        return Chem.MolToSmiles(mol)

    def _one_brics(self, rng: np.random.RandomState) -> str:
        for _restart in range(_MAX_RESTARTS):
            try:
                return self._try_brics(rng)
            except _NoFragment:
                self.restarts += 1
        raise RuntimeError("no compatible fragment after many restarts; is the model trained on enough molecules?")

    def _try_brics(self, rng: np.random.RandomState) -> str:
        total = self.size_values[int(self._size_cdf.searchsorted(rng.random_sample(), side="right"))]
        mol = None
        points: list[Chem.Atom] = []
        for step in range(total):
            lowest, highest = self._limits(step, total, len(points))
            if mol is None:
                mol = self._draw_fragment(rng, lowest, highest)
            else:
                open_labels = 0
                for atom in points:
                    open_labels |= 1 << atom.GetIsotope()
                fragment = self._draw_fragment(rng, lowest, highest, open_labels)
                pairs = [(a, b) for a in points for b in attachment_points(fragment)
                         if (a.GetIsotope(), b.GetIsotope()) in _PAIRS]
                mol_point, fragment_point = pairs[rng.randint(0, len(pairs))]
                mol = join_at(mol, fragment, mol_point, fragment_point)
            points = attachment_points(mol)
        return Chem.MolToSmiles(mol)

    def _one_valid(self, rng: np.random.RandomState) -> str:
        last = ""
        for _restart in range(_MAX_RESTARTS):
            total = self.size_values[int(self._size_cdf.searchsorted(rng.random_sample(), side="right"))]
            mol = None
            for step in range(total):
                points = [] if mol is None else attachment_points(mol)
                lowest, highest = self._limits(step, total, len(points))
                joined = None
                for _try in range(_MAX_FRAGMENT_TRIES):
                    fragment = self._draw_fragment(rng, lowest, highest)
                    if mol is None:
                        joined = fragment
                        break
                    mol_point = points[rng.randint(0, len(points))]
                    order = mol_point.GetBonds()[0].GetBondType()
                    matching = [p for p in attachment_points(fragment) if p.GetBonds()[0].GetBondType() == order]
                    if not matching:
                        continue
                    candidate = join_at(mol, fragment, mol_point, matching[rng.randint(0, len(matching))])
                    if _sanitized(candidate) is not None:
                        joined = candidate
                        break
                if joined is None:
                    break
                mol = joined
            else:
                final = _sanitized(mol)
                if final is not None:
                    return Chem.MolToSmiles(final)
            if mol is not None:
                last = Chem.MolToSmiles(mol)
        return last

    def sample_one(self, sample_seed: int, join: str = DEFAULT_JOIN) -> str:
        """One sample drawn with ``RandomState(sample_seed)``."""
        if join not in JOIN_MODES:
            raise UserInputError(f"unknown join mode {join!r}; use one of {', '.join(JOIN_MODES)}")
        rng = np.random.RandomState(sample_seed)
        with rdkit_log_silenced():
            if join == "brics":
                return self._one_brics(rng)
            return self._one_moses(rng) if join == "moses" else self._one_valid(rng)

    def sample(
        self,
        n: int,
        seed: int = 0,
        *,
        join: str = DEFAULT_JOIN,
        n_jobs: int = 1,
        show_progress: bool | None = None,
    ) -> list[str]:
        """Draw ``n`` SMILES; sample ``i`` uses ``RandomState(seed * n + i)``."""
        if join not in JOIN_MODES:
            raise UserInputError(f"unknown join mode {join!r}; use one of {', '.join(JOIN_MODES)}")
        seeds = range(seed * n, seed * n + n)
        results = parallel_map(
            partial(_sample_one, self, join=join), seeds, n_jobs=n_jobs,
            chunk_size=max(1, min(2000, n // 8 or 1)), description="sampling combinatorial",
            show_progress=show_progress,
        )
        failed = [r for r in results if isinstance(r, Failure)]
        if failed:
            raise RuntimeError(f"{len(failed)} combinatorial samples failed; first: {failed[0]}")
        return list(results)


class _NoFragment(Exception):
    """No training fragment satisfies the constraints of this step."""


def _fragment_partners(fragment: str) -> int:
    """Bit set of the labels any attachment point of ``fragment`` may bond to."""
    bits = 0
    for label in {int(x) for x in _LABEL_PATTERN.findall(fragment)}:
        bits |= _PARTNERS.get(label, 0)
    return bits


def _sample_one(model: CombinatorialGenerator, sample_seed: int, join: str) -> str:
    return model.sample_one(sample_seed, join)
