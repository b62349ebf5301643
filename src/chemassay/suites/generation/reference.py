"""Reference statistics of a test set: what the MOSES metrics compare generated molecules to.

For the two MOSES test sets the statistics are the ones the MOSES authors published
(``test_stats.npz`` and ``test_scaffolds_stats.npz`` of the ``molsets`` wheel, fetched by
``chemassay data fetch moses``): ChemNet mean and covariance (FCD), Morgan fingerprints
(SNN), BRICS fragment and scaffold counts (Frag, Scaf) and the logP, SA, QED and weight
values (Wasserstein distances). Using them keeps our numbers on the published footing;
recomputing them with today's RDKit shifts some values slightly.

For any other reference set (a file or a list of SMILES) the statistics are computed the
way MOSES computes them. Both are kept in chemassay's one cache
(:mod:`chemassay.runtime.cache`, namespace ``generation/reference-stats``): each entry
records what it was computed from (the sha256 of the published file, of the SMILES file or
of the SMILES list, the RDKit version and the format version) and a checksum of itself, so a
truncated, corrupted or swapped entry is reported in one line and rebuilt, never used.
Lists of fewer than :data:`MIN_CACHED_LIST` SMILES are computed each time (cheaper than a
cache entry). The payload is a plain ``.npz`` (no pickle) holding arrays and one JSON
document.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import rdkit

from chemassay.contract.errors import UserInputError
from chemassay.data import dataset_file, get_spec
from chemassay.runtime.cache import cached
from chemassay.runtime.files import atomic_writer
from chemassay.runtime.parallel import Failure, parallel_map
from chemassay.suites.generation.data import MOSES_STATS_FILES, parse_moses_name, smiles_set
from chemassay.suites.generation.descriptors import describe_smiles, fingerprint_matrix

PROPERTY_NAMES = ("logP", "SA", "QED", "weight")
CACHE_VERSION = 1
CACHE_NAMESPACE = "generation/reference-stats"
MIN_CACHED_LIST = 100
"""In-memory reference lists shorter than this are not cached (computing is as fast)."""


@dataclass
class ReferenceStats:
    """Statistics of one reference set.

    ``fingerprints`` are packed Morgan fingerprints ``(n, 16)`` ``uint64`` (one row per
    molecule); ``fcd_mu``/``fcd_sigma`` the ChemNet activation mean and covariance (``None``
    with fewer than two molecules); ``properties`` maps ``logP``/``SA``/``QED``/``weight``
    to one value per molecule. ``source`` says where they come from: ``published`` (the
    MOSES authors' file) or ``computed``.
    """

    name: str
    source: str
    sha256: str | None
    n_molecules: int
    fingerprints: np.ndarray
    fragments: Counter
    scaffolds: Counter
    properties: dict[str, np.ndarray]
    fcd_mu: np.ndarray | None
    fcd_sigma: np.ndarray | None
    n_invalid: int = 0
    notes: list[str] = field(default_factory=list)

    def describe(self) -> dict:
        """A JSON-friendly summary (for result files)."""
        return {
            "name": self.name,
            "source": self.source,
            "sha256": self.sha256,
            "n_molecules": self.n_molecules,
            "n_invalid": self.n_invalid,
        }


def save_stats(stats: ReferenceStats, path: str | os.PathLike, *, compress: bool = True) -> Path:
    """Write statistics to an ``.npz`` file (atomically, no pickled objects).

    ``compress=False`` writes an uncompressed archive (the cache's choice: writing the
    compressed MOSES statistics takes seconds, reading either takes a fraction of one).
    """
    meta = {
        "version": CACHE_VERSION,
        "name": stats.name,
        "source": stats.source,
        "sha256": stats.sha256,
        "n_molecules": stats.n_molecules,
        "n_invalid": stats.n_invalid,
        "notes": stats.notes,
        "fragments": dict(stats.fragments),
        "scaffolds": dict(stats.scaffolds),
    }
    arrays = {
        "meta": np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8),
        "fingerprints": stats.fingerprints,
    }
    for name in PROPERTY_NAMES:
        arrays[f"prop_{name}"] = np.asarray(stats.properties[name], dtype=np.float64)
    if stats.fcd_mu is not None:
        arrays["fcd_mu"] = stats.fcd_mu
        arrays["fcd_sigma"] = stats.fcd_sigma
    target = Path(path)
    with atomic_writer(target, "wb", encoding=None) as handle:
        (np.savez_compressed if compress else np.savez)(handle, **arrays)
    return target


def load_stats(path: str | os.PathLike) -> ReferenceStats:
    """Read statistics written by :func:`save_stats`."""
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(bytes(data["meta"]).decode("utf-8"))
        if meta.get("version") != CACHE_VERSION:
            raise ValueError(f"{path}: reference statistics of another format version")
        return ReferenceStats(
            name=meta["name"],
            source=meta["source"],
            sha256=meta["sha256"],
            n_molecules=meta["n_molecules"],
            fingerprints=data["fingerprints"].copy(),
            fragments=Counter(meta["fragments"]),
            scaffolds=Counter(meta["scaffolds"]),
            properties={name: data[f"prop_{name}"].copy() for name in PROPERTY_NAMES},
            fcd_mu=data["fcd_mu"].copy() if "fcd_mu" in data else None,
            fcd_sigma=data["fcd_sigma"].copy() if "fcd_sigma" in data else None,
            n_invalid=meta.get("n_invalid", 0),
            notes=list(meta.get("notes", [])),
        )


def _pack_dense_fingerprints(dense: np.ndarray) -> np.ndarray:
    dense = np.asarray(dense)
    return np.ascontiguousarray(np.packbits(dense.astype(bool), axis=1, bitorder="little")).view("<u8")


def published_moses_stats(which: str = "test") -> ReferenceStats:
    """The MOSES authors' statistics of ``test`` or ``test_scaffolds`` (kept in the cache).

    The published file is a pickled dictionary; it is read once (from the checksum-verified
    dataset cache) and converted to chemassay's pickle-free format, a cache entry keyed by
    the published file's sha256.
    """
    if which not in MOSES_STATS_FILES:
        raise UserInputError(
            f"MOSES publishes statistics of {' and '.join(sorted(MOSES_STATS_FILES))} only, not {which!r}"
        )
    source = dataset_file("moses", MOSES_STATS_FILES[which])  # verified against its registered sha256
    digest = get_spec("moses").file(MOSES_STATS_FILES[which]).sha256
    key = {"what": "MOSES published reference statistics", "set": which, "source_sha256": digest,
           "format": CACHE_VERSION}
    return cached(
        CACHE_NAMESPACE, key, lambda: _convert_published(source, which, digest),
        save=_save_uncompressed, load=lambda path: _load_expected(path, digest), suffix=".npz",
    )


def _convert_published(source: Path, which: str, digest: str) -> ReferenceStats:
    with np.load(source, allow_pickle=True) as data:  # the registry verified its sha256
        raw = data["stats"].item()
    return ReferenceStats(
        name=f"moses/{which}",
        source="published",
        sha256=digest,
        n_molecules=int(raw["SNN"]["fps"].shape[0]),
        fingerprints=_pack_dense_fingerprints(raw["SNN"]["fps"]),
        fragments=Counter(raw["Frag"]["frag"]),
        scaffolds=Counter(raw["Scaf"]["scaf"]),
        properties={name: np.asarray(raw[name]["values"], dtype=np.float64) for name in PROPERTY_NAMES},
        fcd_mu=np.asarray(raw["FCD"]["mu"]),
        fcd_sigma=np.asarray(raw["FCD"]["sigma"]),
    )


def _save_uncompressed(stats: ReferenceStats, path: Path) -> None:
    save_stats(stats, path, compress=False)


def _load_expected(path: Path, sha256: str) -> ReferenceStats:
    """Load a cache entry and check it describes the set it is keyed by (a second guard
    beside the cache's own checksum)."""
    stats = load_stats(path)
    if stats.sha256 != sha256:
        raise ValueError(f"the entry holds statistics of {stats.sha256}, not of {sha256}")
    return stats


def compute_stats(
    smiles: list[str],
    *,
    name: str,
    sha256: str | None = None,
    n_jobs: int = 1,
    device: str = "cpu",
    batch_size: int = 512,
    show_progress: bool | None = None,
) -> ReferenceStats:
    """Statistics of a reference set computed as MOSES does (``compute_intermediate_statistics``).

    Each SMILES is parsed as given (not re-canonicalized); ChemNet reads its canonical
    SMILES. SMILES that do not parse are left out and counted in ``n_invalid`` (MOSES
    would stop with an error).
    """
    from chemassay.suites.generation import chemnet

    described = parallel_map(
        _describe_reference_molecule, smiles, n_jobs=n_jobs, description=f"reference {name}",
        show_progress=show_progress,
    )
    good = [d for d in described if not isinstance(d, Failure)]
    n_invalid = len(described) - len(good)
    fragments: Counter = Counter()
    for record in good:
        fragments.update(record.fragments)
    scaffolds = Counter(record.scaffold for record in good if record.scaffold is not None)
    mu = sigma = None
    if len(good) >= 2:
        activations = chemnet.chemnet_activations(
            [record.canonical for record in good], device=device, batch_size=batch_size,
            show_progress=show_progress,
        )
        mu, sigma = chemnet.gaussian_statistics(activations)
    notes = [f"{n_invalid} reference SMILES do not parse and were left out"] if n_invalid else []
    return ReferenceStats(
        name=name,
        source="computed",
        sha256=sha256,
        n_molecules=len(good),
        fingerprints=fingerprint_matrix([record.fingerprint for record in good]),
        fragments=fragments,
        scaffolds=scaffolds,
        properties={
            "logP": np.array([r.logp for r in good], dtype=np.float64),
            "SA": np.array([r.sa for r in good], dtype=np.float64),
            "QED": np.array([r.qed for r in good], dtype=np.float64),
            "weight": np.array([r.weight for r in good], dtype=np.float64),
        },
        fcd_mu=mu,
        fcd_sigma=sigma,
        n_invalid=n_invalid,
        notes=notes,
    )


def _describe_reference_molecule(smiles: str):
    return describe_smiles(smiles, filters=False)


def _list_digest(smiles: list[str]) -> str:
    digest = hashlib.sha256()
    for text in smiles:
        digest.update(text.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


def _rdkit_version() -> str:
    return rdkit.__version__


def cached_stats(
    smiles: list[str],
    *,
    name: str,
    sha256: str | None = None,
    n_jobs: int = 1,
    device: str = "cpu",
    batch_size: int = 512,
    show_progress: bool | None = None,
) -> ReferenceStats:
    """:func:`compute_stats`, kept in the cache under the sha256 of the SMILES' source.

    ``sha256`` identifies the source (a file's checksum); without it the SMILES list itself
    is hashed. Lists shorter than :data:`MIN_CACHED_LIST` without a ``sha256`` are computed
    without a cache entry.
    """
    key_sha = sha256 or _list_digest(smiles)

    def build() -> ReferenceStats:
        return compute_stats(
            smiles, name=name, sha256=key_sha, n_jobs=n_jobs, device=device, batch_size=batch_size,
            show_progress=show_progress,
        )

    if sha256 is None and len(smiles) < MIN_CACHED_LIST:
        return build()
    key = {"what": "reference statistics", "smiles_sha256": key_sha, "rdkit": _rdkit_version(),
           "format": CACHE_VERSION}
    stats = cached(CACHE_NAMESPACE, key, build, save=_save_uncompressed,
                   load=lambda path: _load_expected(path, key_sha), suffix=".npz")
    stats.name = name
    return stats


ReferenceSpec = str | os.PathLike | list | tuple | ReferenceStats


def resolve_reference(
    spec: ReferenceSpec,
    *,
    moses_set: str,
    n_jobs: int = 1,
    device: str = "cpu",
    batch_size: int = 512,
    show_progress: bool | None = None,
) -> ReferenceStats:
    """Statistics for a reference given as ``"moses"``, a file path, a SMILES list or stats.

    ``"moses"`` means the published statistics of ``moses_set`` (``test`` or
    ``test_scaffolds``), ``"moses:test"``/``"moses:test_scaffolds"`` those of that set, and
    ``"moses:train"`` statistics computed from the training split; a path ending in ``.npz``
    is a statistics file written by :func:`save_stats`; any other path is a SMILES file
    (text or CSV, read with the one SMILES reader). An empty set is a
    :class:`~chemassay.contract.errors.UserInputError`.
    """
    if isinstance(spec, ReferenceStats):
        return spec
    part = parse_moses_name(spec)
    if part is not None:
        part = part or moses_set
        if part in MOSES_STATS_FILES:
            return published_moses_stats(part)
    elif not isinstance(spec, (list, tuple)) and str(spec).endswith(".npz"):
        from chemassay.runtime.files import need_file

        try:
            return load_stats(need_file(spec, "reference statistics"))
        except (ValueError, KeyError, OSError) as exc:
            raise UserInputError(
                f"{spec}: not a chemassay reference statistics file ({exc}); give a SMILES file instead"
            ) from None
    resolved = smiles_set(spec if part is None else f"moses:{part}")
    if not resolved.smiles:
        raise UserInputError(f"reference set {resolved.label}: no SMILES; give a non-empty SMILES file or list")
    name = str(resolved.path) if resolved.path is not None else resolved.label
    return cached_stats(
        resolved.smiles, name=name, sha256=resolved.sha256, n_jobs=n_jobs, device=device,
        batch_size=batch_size, show_progress=show_progress,
    )
