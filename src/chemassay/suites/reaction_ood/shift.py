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
test and training rows are made dense and multiplied, and a running top-k is kept per test
row, so memory is bounded by the block sizes whatever the set sizes. Integer counts that fit
in int8 are multiplied as int8 with int32 accumulation through torch (exact, and several
times faster than float32 on CPUs with VNNI/AMX), on ``n_jobs`` threads; with
``device="cuda"`` the products run on a GPU in float32 (exact below 2**24); without torch,
numpy's BLAS does the same in float32. See benchmarks/reaction_ood_shift.py for measured
rates and the time 100k test x 1M training reactions take.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import scipy.sparse as sp
from rdkit import Chem
from threadpoolctl import threadpool_limits

from chemassay.chem.fingerprints import _morgan_generator
from chemassay.chem.molecules import InvalidSmiles, parse_smiles, rdkit_log_silenced
from chemassay.chem.reactions import InvalidReaction, parse_reaction, remove_atom_maps_text
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import SkippedItem, make_result
from chemassay.runtime.parallel import Failure, effective_jobs, parallel_map
from chemassay.runtime.progress import progress_task
from chemassay.suites.reaction_ood.atom_mapping import mapped_reactions_for
from chemassay.suites.reaction_ood.details import ShiftDetails

SPACES = ("reactant", "difference")


@dataclass(frozen=True)
class ShiftConfig:
    """Fingerprint and search settings (defaults: the paper's)."""

    radius: int = 2
    n_bits: int = 2048
    k: int = 5
    test_block: int = 1024
    train_block: int = 32768


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


def _inverse_norms(matrix: sp.csr_matrix) -> np.ndarray:
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1), dtype=np.float64)).ravel()
    return np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)


def _fits_int8(*matrices: sp.csr_matrix) -> bool:
    return all(m.nnz == 0 or (np.abs(m.data).max() <= 127 and np.all(m.data == np.round(m.data))) for m in matrices)


def knn_cosine_similarities(
    test: sp.csr_matrix, train: sp.csr_matrix, *, config: ShiftConfig = ShiftConfig(),
    n_jobs: int = 1, device: str = "cpu",
) -> np.ndarray:
    """The ``k`` highest cosine similarities of each test row to the training rows, sorted
    descending (shape ``(n_test, min(k, n_train))``).

    Dot products are exact: integer count vectors whose entries fit in int8 (nearly always)
    are multiplied as int8 with int32 accumulation (torch's ``_int_mm``, VNNI/AMX on CPUs
    that have them), otherwise in float32 (exact below 2**24). Rows are scaled by their
    inverse norms afterwards. ``n_jobs`` sets the threads of the matrix products; ``device``
    is ``cpu``, ``cuda`` or ``auto``.
    """
    if train.shape[0] == 0:
        raise UserInputError("the training set is empty: nothing to compare the test reactions with")
    if device == "auto":
        device = "cuda" if _cuda_available() else "cpu"
    if device not in ("cpu", "cuda"):
        raise UserInputError(f"unknown device {device!r}; use cpu, cuda or auto")
    k = min(config.k, train.shape[0])
    test = sp.csr_matrix(test, dtype=np.float32)
    train = sp.csr_matrix(train, dtype=np.float32)
    inv_test = _inverse_norms(test)
    inv_train = _inverse_norms(train)
    torch = _torch()
    if torch is None:
        if device == "cuda":
            raise UserInputError("--device cuda needs torch: pip install 'chemassay[torch]'")
        best = _knn_numpy(test, train, inv_train, k, config, n_jobs)
    else:
        best = _knn_torch(torch, test, train, inv_train, k, config, n_jobs, device)
    best = best * inv_test[:, None].astype(np.float32)
    return -np.sort(-best, axis=1)


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _cuda_available() -> bool:
    torch = _torch()
    return bool(torch is not None and torch.cuda.is_available())


def _knn_torch(torch, test, train, inv_train, k: int, config: ShiftConfig, n_jobs: int, device: str) -> np.ndarray:
    """Blocked exact search with torch: int8 products on the CPU, float32 on a GPU.

    The loop runs over training blocks outside and test chunks inside, so every training
    block is made dense once; the test rows are made dense once (in chunks when large) and
    a running top-k of similarities is kept for each.
    """
    use_int8 = device == "cpu" and _fits_int8(test, train)
    dtype = np.int8 if use_int8 else np.float32
    dev = torch.device(device)
    if device == "cuda":
        if not torch.cuda.is_available():
            raise UserInputError("--device cuda: torch sees no CUDA device here; use --device cpu")
        torch.backends.cuda.matmul.allow_tf32 = False  # exact float32 products
        test_block, train_block = max(config.test_block, 8192), max(config.train_block, 65536)
    else:
        test_block, train_block = config.test_block, config.train_block
    previous_threads = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(max(1, effective_jobs(n_jobs)))
    try:
        test_data = sp.csr_matrix(test, dtype=dtype)
        train_data = sp.csr_matrix(train, dtype=dtype)
        keep_test = test.shape[0] * test.shape[1] * np.dtype(dtype).itemsize <= 1 << 30
        dense_test = {}

        def queries(start: int):
            if start in dense_test:
                return dense_test[start]
            block = torch.from_numpy(test_data[start:start + test_block].toarray()).to(dev)
            if keep_test:
                dense_test[start] = block
            return block

        n_test = test.shape[0]
        best = torch.full((n_test, k), -float("inf"), dtype=torch.float32, device=dev)
        with progress_task("nearest neighbours", train.shape[0]) as advance:
            _search_blocks(torch, train_data, inv_train, queries, best, n_test, k, test_block, train_block,
                           use_int8, dev, advance)
        return best.cpu().numpy()
    finally:
        if device == "cpu":
            torch.set_num_threads(previous_threads)


def _search_blocks(torch, train_data, inv_train, queries, best, n_test, k, test_block, train_block,
                   use_int8, dev, advance) -> None:
    """Update the running top-k ``best`` with every training block (see :func:`_knn_torch`)."""
    n_train = train_data.shape[0]
    for start in range(0, n_train, train_block):
        stop = min(start + train_block, n_train)
        # Fortran-order rows are a C-order (bits x rows) matrix: the layout the product wants
        block = torch.from_numpy(train_data[start:stop].toarray(order="F").T).to(dev)
        scale = torch.from_numpy(inv_train[start:stop].astype(np.float32)).to(dev)
        width = min(k, stop - start)
        for q_start in range(0, n_test, test_block):
            chunk = queries(q_start)
            dots = torch._int_mm(chunk, block) if use_int8 else chunk @ block
            # int32 x float32 promotes to float32 in one pass
            top = torch.topk(dots * scale[None, :], width, dim=1).values
            rows = slice(q_start, q_start + chunk.shape[0])
            best[rows] = torch.topk(torch.cat([best[rows], top], dim=1), k, dim=1).values
        advance(stop - start)


def _knn_numpy(test, train, inv_train, k: int, config: ShiftConfig, n_jobs: int) -> np.ndarray:
    """The same search with numpy's BLAS (float32) when torch is not installed."""
    out = []
    with threadpool_limits(max(1, effective_jobs(n_jobs))):
        for q_start in range(0, test.shape[0], config.test_block):
            queries = test[q_start:q_start + config.test_block].toarray()
            best = np.full((queries.shape[0], 0), -np.inf, dtype=np.float32)
            for start in range(0, train.shape[0], config.train_block):
                block = train[start:start + config.train_block].toarray()
                sims = (queries @ block.T) * inv_train[start:start + config.train_block].astype(np.float32)[None, :]
                joined = np.concatenate([best, sims], axis=1)
                if joined.shape[1] > k:
                    part = np.argpartition(-joined, k - 1, axis=1)[:, :k]
                    joined = np.take_along_axis(joined, part, axis=1)
                best = joined
            out.append(best)
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


def reactions_with_maps(frame, maps: str = "auto") -> tuple[list[str], str]:
    """Reaction SMILES of a table for the shift analysis, atom-mapped where a mapping exists.

    Returns the reactions and a note saying how many were handled by atom maps (``maps``:
    see :func:`~chemassay.suites.reaction_ood.atom_mapping.mapped_reactions_for`) and how many
    by the element/identity rule. With ``maps="auto"`` a table no mapping covers is fine.
    """
    columns = [str(c) for c in frame.columns]
    column = next((c for c in ("rxn_smiles", "reaction", "rxn") if c in columns), None)
    if column is None:
        raise UserInputError(f"the reaction table needs a rxn_smiles column (columns: {columns})")
    plain = frame[column].astype(str).tolist()
    try:
        mapped, source = mapped_reactions_for(frame, maps)
    except UserInputError:
        if maps != "auto":
            raise
        mapped, source = [None] * len(plain), "none"
    used = sum(m is not None for m in mapped)
    reactions = [m if m is not None else p for m, p in zip(mapped, plain, strict=True)]
    return reactions, f"{used}/{len(plain)} by atom maps ({source}), the rest by the element/identity rule"


MAX_LISTED = 200


def shift_result(
    shift: ShiftResult,
    *,
    config: ShiftConfig,
    dataset,
    inputs: Sequence = (),
    extra_config: dict | None = None,
    elapsed_s: float | None = None,
    started: float | None = None,
    first_lines: dict[str, int] | None = None,
    plot: str | None = None,
    per_item: str | None = None,
    setting: dict[str, str] | None = None,
):
    """The :class:`~chemassay.contract.result.Result` (task ``shift``) of a distribution-shift run.

    Metrics ``{set}/{space}_median`` and ``{set}/{space}_mean`` for each test set and space;
    ``details.summaries`` adds n and quartiles. Reactions that could not be fingerprinted
    are in ``skipped``, with the set's name (``train`` for a training reaction) as ``item``
    and its line (``first_lines`` gives each set's file line of its first row, default 2);
    at most :data:`MAX_LISTED` of a set are listed, then one entry with how many more.
    ``started`` (a :func:`time.perf_counter` reading) or ``elapsed_s`` gives the run time.
    """
    metrics: dict[str, float] = {}
    for key, summary in shift.summaries.items():
        metrics[f"{key}_median"] = summary["median"]
        metrics[f"{key}_mean"] = summary["mean"]
    lines = first_lines or {}
    skipped: list[SkippedItem] = []
    for name, entries in shift.problems.items():
        listed = [SkippedItem(line=p["row"] + lines.get(name, 2), item=name,
                              reason=("training reaction left out: " if name == "train" else "") + p["reason"])
                  for p in entries]
        if len(listed) > MAX_LISTED:
            rest = len(listed) - MAX_LISTED
            listed = [*listed[:MAX_LISTED], SkippedItem(item=name, reason=f"{rest:,} more reactions of {name} "
                                                                         "could not be fingerprinted (not listed)")]
        skipped += listed
    n = sum(int(summary["n"]) for key, summary in shift.summaries.items() if key.endswith("/reactant"))
    timing = {"elapsed_s": elapsed_s} if elapsed_s is not None else {}
    return make_result(
        "reaction-ood", "shift", metrics=metrics, n=n, skipped=skipped, dataset=dataset, inputs=list(inputs),
        started=started, setting=setting or {},
        config={"k": config.k, "radius": config.radius, "n_bits": config.n_bits, "fingerprint": "Morgan counts",
                "distance": "cosine", **(extra_config or {})},
        details=ShiftDetails(summaries=shift.summaries, plot=plot, per_item=per_item),
        **timing,
    )
