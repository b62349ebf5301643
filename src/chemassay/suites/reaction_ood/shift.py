"""Distribution shift between a training set and test sets (Bradshaw et al., Section 2.5 / S1.6).

For every test reaction: the average cosine distance to its ``k`` (5) nearest training
reactions, in two spaces built from Morgan count fingerprints (radius 2, folded to 2048
bits) with reagents removed:

* reactant space: the sum of the reactants' fingerprints;
* reaction-difference space: the sum of the products' fingerprints minus the sum of the
  reactants' (Schneider et al. 2015's difference fingerprint), so it describes the change.

Cosine distance is ``1 - u.v / (|u| |v|)``; an all-zero vector (e.g. a reaction whose
products and reactants have the same fingerprint sum) has distance 1 to everything.

Reagents are the reactant-side molecules that contribute no atom to the products: with atom
maps (a ``mapped_rxn_smiles`` column, or the shipped RXNMapper mapping of the Schneider set)
those with no mapped atom in a product; without maps, :func:`chemassay.chem.detect_reagents`
(molecules found unchanged among the products or sharing no heavy element with them).

The nearest-neighbour search is exact and blocked: fingerprints are kept sparse, blocks of
test and training rows are made dense (float32; integer dot products are exact below 2**24)
and multiplied, and a running top-k is kept per test row, so memory is bounded by the block
sizes whatever the set sizes. CPU blocks run in ``n_jobs`` worker processes that read the
training matrix from memory-mapped files; with ``device="cuda"`` the products run on a GPU
through torch (100k test x 1M training reactions in well under a minute on one H100).
"""

from __future__ import annotations

import math
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from rdkit import Chem

from chemassay.chem.fingerprints import _morgan_generator
from chemassay.chem.molecules import InvalidSmiles, parse_smiles, rdkit_log_silenced
from chemassay.chem.reactions import InvalidReaction, parse_reaction, remove_atom_maps_text
from chemassay.errors import UserInputError
from chemassay.runtime.parallel import Failure, effective_jobs, parallel_map

SPACES = ("reactant", "difference")


@dataclass(frozen=True)
class ShiftConfig:
    """Fingerprint and search settings (defaults: the paper's)."""

    radius: int = 2
    n_bits: int = 2048
    k: int = 5
    test_block: int = 2048
    train_block: int = 16384


@dataclass
class ReactionVectors:
    """Sparse count fingerprints of a set of reactions in both spaces, plus problems."""

    reactant: sp.csr_matrix
    difference: sp.csr_matrix
    problems: list[dict] = field(default_factory=list)
    ok: np.ndarray | None = None  # rows that could be fingerprinted

    def space(self, name: str) -> sp.csr_matrix:
        return self.reactant if name == "reactant" else self.difference


_molecule_cache: dict[tuple[str, int, int], tuple[np.ndarray, np.ndarray]] = {}
_facts_cache: dict[str, tuple[str, frozenset[str], int]] = {}
_BRACKET_MAP = re.compile(r"\[([^\]]*?):(\d+)\]")
_CACHE_LIMIT = 500_000


def molecule_counts(smiles: str, radius: int = 2, n_bits: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """Folded Morgan count fingerprint of one molecule as ``(bit indices, counts)`` (cached).

    Atom maps are ignored (removed from the text before parsing, so mapped copies of the
    same molecule share the cache entry when written alike).
    """
    text = remove_atom_maps_text(smiles) if ":" in smiles else smiles
    key = (text, radius, n_bits)
    cached = _molecule_cache.get(key)
    if cached is None:
        mol = parse_smiles(text)
        dense = _morgan_generator(radius, n_bits, False).GetCountFingerprintAsNumPy(mol)
        bits = np.flatnonzero(dense).astype(np.int32)
        cached = (bits, dense[bits].astype(np.float32))
        if len(_molecule_cache) > _CACHE_LIMIT:
            _molecule_cache.clear()
        _molecule_cache[key] = cached
    return cached


def _molecule_facts(smiles: str) -> tuple[str, frozenset[str], int]:
    """Canonical SMILES (maps removed), heavy elements and heavy-atom count (cached)."""
    text = remove_atom_maps_text(smiles) if ":" in smiles else smiles
    cached = _facts_cache.get(text)
    if cached is None:
        mol = parse_smiles(text)
        numbers = [atom.GetAtomicNum() for atom in mol.GetAtoms()]
        elements = frozenset(Chem.GetPeriodicTable().GetElementSymbol(z) for z in numbers if z > 1)
        cached = (Chem.MolToSmiles(mol), elements, sum(1 for z in numbers if z > 1))
        if len(_facts_cache) > _CACHE_LIMIT:
            _facts_cache.clear()
        _facts_cache[text] = cached
    return cached


def _heavy_maps(smiles: str) -> set[int]:
    """Map numbers of the non-hydrogen atoms written in ``smiles`` (read from the text)."""
    found = set()
    for body, number in _BRACKET_MAP.findall(smiles):
        symbol = body.lstrip("0123456789")
        is_hydrogen = symbol.startswith("H") and not (len(symbol) > 1 and symbol[1].islower())
        if not is_hydrogen and int(number):
            found.add(int(number))
    return found


def split_reactants(reaction_smiles: str) -> tuple[list[str], list[str]]:
    """``(reactants without reagents, products)`` of a reaction SMILES.

    The rule is that of :func:`chemassay.chem.detect_reagents` (maps when both sides have
    them, else: a reagent is found unchanged among the products or shares no heavy element
    with them), computed with per-molecule caches because reagents repeat across millions
    of reactions. If every molecule looks like a reagent, all are kept.
    """
    reaction = parse_reaction(reaction_smiles)
    candidates = reaction.reactants + reaction.reagents
    products = list(reaction.products)
    if not products:
        raise InvalidReaction(reaction_smiles, "no products")
    product_maps: set[int] = set()
    for smiles in products:
        product_maps |= _heavy_maps(smiles)
    candidate_maps = [_heavy_maps(s) for s in candidates]
    if product_maps and any(candidate_maps):
        reactants = [s for s, maps in zip(candidates, candidate_maps, strict=True) if maps & product_maps]
    else:
        product_facts = [_molecule_facts(s) for s in products]
        product_canonical = {f[0] for f in product_facts}
        product_elements = frozenset().union(*(f[1] for f in product_facts))
        reactants = []
        for smiles in candidates:
            canonical, elements, heavy = _molecule_facts(smiles)
            unchanged = canonical in product_canonical
            if not (unchanged or (heavy > 0 and not (elements & product_elements))):
                reactants.append(smiles)
    return (reactants or list(candidates)), products


def _fingerprint_rows(reactions: list[str], radius: int, n_bits: int) -> list[tuple | str]:
    rows: list[tuple | str] = []
    with rdkit_log_silenced():
        for text in reactions:
            try:
                reactants, products = split_reactants(text)
                r_vec: dict[int, float] = {}
                for smiles in reactants:
                    bits, counts = molecule_counts(smiles, radius, n_bits)
                    for b, c in zip(bits.tolist(), counts.tolist(), strict=True):
                        r_vec[b] = r_vec.get(b, 0.0) + c
                d_vec = {b: -c for b, c in r_vec.items()}
                for smiles in products:
                    bits, counts = molecule_counts(smiles, radius, n_bits)
                    for b, c in zip(bits.tolist(), counts.tolist(), strict=True):
                        d_vec[b] = d_vec.get(b, 0.0) + c
                d_vec = {b: c for b, c in d_vec.items() if c}
                rows.append((r_vec, d_vec))
            except (InvalidReaction, InvalidSmiles) as exc:
                rows.append(str(exc))
    return rows


def reaction_vectors(
    reactions: Sequence[str], *, config: ShiftConfig = ShiftConfig(), n_jobs: int = 1
) -> ReactionVectors:
    """Count fingerprints of ``reactions`` in reactant and difference space (sparse, float32).

    A reaction that cannot be read gets an all-zero row, ``ok`` False and a problem entry
    (row index and reason); it is reported, not silently dropped.
    """
    chunk = 2000
    chunks = [list(reactions[i:i + chunk]) for i in range(0, len(reactions), chunk)]
    parts = parallel_map(
        partial(_fingerprint_rows, radius=config.radius, n_bits=config.n_bits), chunks,
        n_jobs=n_jobs, chunk_size=1, description="fingerprinting",
    )
    matrices = {name: ([], [], [0]) for name in SPACES}
    problems: list[dict] = []
    ok = np.ones(len(reactions), dtype=bool)
    row = 0
    for part in parts:
        if isinstance(part, Failure):
            raise RuntimeError(f"fingerprinting failed: {part}")
        for entry in part:
            if isinstance(entry, str):
                problems.append({"row": row, "reason": entry})
                ok[row] = False
                entry = ({}, {})
            for name, vector in zip(SPACES, entry, strict=True):
                indices, values, pointers = matrices[name]
                keys = sorted(vector)
                indices.extend(keys)
                values.extend(vector[k] for k in keys)
                pointers.append(len(indices))
            row += 1
    built = {}
    for name, (indices, values, pointers) in matrices.items():
        built[name] = sp.csr_matrix(
            (np.asarray(values, dtype=np.float32), np.asarray(indices, dtype=np.int32), np.asarray(pointers, dtype=np.int64)),
            shape=(len(reactions), config.n_bits),
        )
    return ReactionVectors(built["reactant"], built["difference"], problems, ok)


def _normalized(matrix: sp.csr_matrix) -> sp.csr_matrix:
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1), dtype=np.float64)).ravel()
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return sp.csr_matrix(sp.diags(scale.astype(np.float32)) @ matrix, dtype=np.float32)


def _merge_topk(best: np.ndarray, candidates: np.ndarray, k: int) -> np.ndarray:
    joined = np.concatenate([best, candidates], axis=1)
    if joined.shape[1] <= k:
        return joined
    part = np.argpartition(-joined, k - 1, axis=1)[:, :k]
    return np.take_along_axis(joined, part, axis=1)


def _knn_block_cpu(
    span: tuple[int, int], *, test_dir: str, train_dir: str, k: int, train_block: int, n_bits: int
) -> np.ndarray:
    """Top-k cosine similarities of test rows ``span`` against all training rows."""
    test = _load_csr(test_dir, n_bits)[span[0]:span[1]]
    train = _load_csr(train_dir, n_bits)
    queries = test.toarray()
    best = np.full((queries.shape[0], 0), -np.inf, dtype=np.float32)
    for start in range(0, train.shape[0], train_block):
        block = train[start:start + train_block].toarray()
        best = _merge_topk(best, queries @ block.T, k)
    return best


def _save_csr(matrix: sp.csr_matrix, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("data", "indices", "indptr"):
        np.save(folder / f"{name}.npy", getattr(matrix, name))


def _load_csr(folder: str, n_bits: int) -> sp.csr_matrix:
    parts = {name: np.load(Path(folder) / f"{name}.npy", mmap_mode="r") for name in ("data", "indices", "indptr")}
    return sp.csr_matrix((parts["data"], parts["indices"], parts["indptr"]), shape=(len(parts["indptr"]) - 1, n_bits), copy=False)


def knn_cosine_similarities(
    test: sp.csr_matrix, train: sp.csr_matrix, *, config: ShiftConfig = ShiftConfig(),
    n_jobs: int = 1, device: str = "cpu",
) -> np.ndarray:
    """The ``k`` highest cosine similarities of each test row to the training rows, sorted
    descending (shape ``(n_test, min(k, n_train))``)."""
    if train.shape[0] == 0:
        raise UserInputError("the training set is empty: nothing to compare the test reactions with")
    k = min(config.k, train.shape[0])
    test_n = _normalized(test)
    train_n = _normalized(train)
    if device == "auto":
        device = "cuda" if _cuda_available() else "cpu"
    if device == "cuda":
        best = _knn_cuda(test_n, train_n, k, config)
    elif device == "cpu":
        best = _knn_cpu(test_n, train_n, k, config, n_jobs)
    else:
        raise UserInputError(f"unknown device {device!r}; use cpu, cuda or auto")
    return -np.sort(-best, axis=1)


def _knn_cpu(test_n, train_n, k: int, config: ShiftConfig, n_jobs: int) -> np.ndarray:
    spans = [(s, min(s + config.test_block, test_n.shape[0])) for s in range(0, test_n.shape[0], config.test_block)]
    jobs = effective_jobs(n_jobs)
    with tempfile.TemporaryDirectory(prefix="chemassay-shift-") as tmp:
        _save_csr(test_n, Path(tmp) / "test")
        _save_csr(train_n, Path(tmp) / "train")
        work = partial(
            _knn_block_cpu, test_dir=str(Path(tmp) / "test"), train_dir=str(Path(tmp) / "train"),
            k=k, train_block=config.train_block, n_bits=config.n_bits,
        )
        if jobs > 1:
            from chemassay.chem.similarity import set_num_threads

            set_num_threads(1)
        parts = parallel_map(work, spans, n_jobs=jobs, chunk_size=1, description="nearest neighbours")
    out = []
    for part in parts:
        if isinstance(part, Failure):
            raise RuntimeError(f"nearest-neighbour search failed: {part}")
        out.append(part)
    return np.concatenate(out) if out else np.zeros((0, k), dtype=np.float32)


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def _knn_cuda(test_n, train_n, k: int, config: ShiftConfig) -> np.ndarray:
    from chemassay.errors import require

    torch = require("torch", "torch", "GPU nearest-neighbour search")
    if not torch.cuda.is_available():
        raise UserInputError("--device cuda: torch sees no CUDA device here; use --device cpu")
    torch.backends.cuda.matmul.allow_tf32 = False  # exact float32 products, as on the CPU
    dev = torch.device("cuda")

    def dense(matrix: sp.csr_matrix, start: int, stop: int):
        part = matrix[start:stop].tocoo()
        indices = torch.from_numpy(np.vstack([part.row, part.col]).astype(np.int64))
        values = torch.from_numpy(part.data.astype(np.float32))
        return torch.sparse_coo_tensor(indices, values, (stop - start, matrix.shape[1])).to(dev).to_dense()

    train_block = max(config.train_block, 65536)
    train_blocks = [dense(train_n, s, min(s + train_block, train_n.shape[0])) for s in range(0, train_n.shape[0], train_block)]
    out = []
    test_block = max(config.test_block, 8192)
    for start in range(0, test_n.shape[0], test_block):
        queries = dense(test_n, start, min(start + test_block, test_n.shape[0]))
        best = None
        for block in train_blocks:
            sims = queries @ block.T
            top = torch.topk(sims, min(k, sims.shape[1]), dim=1).values
            best = top if best is None else torch.topk(torch.cat([best, top], dim=1), k, dim=1).values
        out.append(best.cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, k), dtype=np.float32)


def mean_knn_distance(similarities: np.ndarray) -> np.ndarray:
    """Average cosine distance to the nearest neighbours (rows of top-k similarities)."""
    return (1.0 - similarities.astype(np.float64)).mean(axis=1)


@dataclass
class ShiftResult:
    """Per-test-set distances in both spaces and their summaries."""

    distances: dict[str, dict[str, np.ndarray]]
    summaries: dict[str, dict[str, float]]
    problems: dict[str, list[dict]]


def summarize(values: np.ndarray) -> dict[str, float]:
    """n, median, mean and quartiles of a distance array (NaN-free values only)."""
    clean = values[np.isfinite(values)]
    if clean.size == 0:
        return {"n": 0, "median": math.nan, "mean": math.nan, "q25": math.nan, "q75": math.nan}
    return {
        "n": int(clean.size), "median": float(np.median(clean)), "mean": float(clean.mean()),
        "q25": float(np.quantile(clean, 0.25)), "q75": float(np.quantile(clean, 0.75)),
    }


def distribution_shift(
    train_reactions: Sequence[str],
    test_sets: dict[str, Sequence[str]],
    *,
    config: ShiftConfig = ShiftConfig(),
    n_jobs: int = 1,
    device: str = "cpu",
) -> ShiftResult:
    """Average cosine distance of each test reaction to its ``k`` nearest training reactions.

    Reactions that cannot be fingerprinted are reported in ``problems`` (per set) and get a
    NaN distance; unreadable training reactions are left out of the reference set.
    """
    train = reaction_vectors(train_reactions, config=config, n_jobs=n_jobs)
    problems = {"train": train.problems}
    distances: dict[str, dict[str, np.ndarray]] = {}
    summaries: dict[str, dict[str, float]] = {}
    for name, reactions in test_sets.items():
        vectors = reaction_vectors(reactions, config=config, n_jobs=n_jobs)
        problems[name] = vectors.problems
        distances[name] = {}
        for space in SPACES:
            reference = train.space(space)[np.flatnonzero(train.ok)]
            sims = knn_cosine_similarities(vectors.space(space), reference, config=config, n_jobs=n_jobs, device=device)
            values = mean_knn_distance(sims)
            values[~vectors.ok] = np.nan
            distances[name][space] = values
            summaries[f"{name}/{space}"] = summarize(values)
    return ShiftResult(distances, summaries, problems)


def with_atom_maps(reactions: Sequence[str], original: Sequence[str] | None, mapping: dict) -> list[str]:
    """Replace each reaction by its atom-mapped form where ``mapping`` (original text →
    :class:`~chemassay.suites.reaction_ood.atom_mapping.MappedReaction`) has one."""
    keys = original if original is not None else reactions
    out = []
    for text, key in zip(reactions, keys, strict=True):
        mapped = mapping.get(key)
        out.append(mapped.mapped_rxn if mapped is not None and mapped.mapped_rxn else text)
    return out

