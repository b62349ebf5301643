"""Reference statistics of a test set: what the MOSES metrics compare generated molecules to.

For the two MOSES test sets the statistics are the ones the MOSES authors published
(``test_stats.npz`` and ``test_scaffolds_stats.npz`` of the ``molsets`` wheel, fetched by
``chemassay data fetch moses``): ChemNet mean and covariance (FCD), Morgan fingerprints
(SNN), BRICS fragment and scaffold counts (Frag, Scaf) and the logP, SA, QED and weight
values (Wasserstein distances). Using them keeps our numbers on the published footing;
recomputing them with today's RDKit shifts some values slightly.

For any other reference set (a file or a list of SMILES) the statistics are computed the
way MOSES computes them, once, and cached under ``$CHEMASSAY_HOME/generation/reference-stats``
keyed by the sha256 of the file (or of the SMILES list) and the RDKit version. The cache
format is a plain ``.npz`` (no pickle) holding arrays and one JSON document.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from chemassay.data import chemassay_home, dataset_file
from chemassay.errors import UserInputError
from chemassay.runtime.files import atomic_writer, sha256_file

PROPERTY_NAMES = ("logP", "SA", "QED", "weight")
CACHE_VERSION = 1
MOSES_SETS = {"test": "test_stats.npz", "test_scaffolds": "test_scaffolds_stats.npz"}
MOSES_SMILES = {"test": "test.csv.gz", "test_scaffolds": "test_scaffolds.csv.gz", "train": "train.csv.gz"}


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


def _cache_dir() -> Path:
    return chemassay_home() / "generation" / "reference-stats"


def _rdkit_version() -> str:
    import rdkit

    return rdkit.__version__


def save_stats(stats: ReferenceStats, path: str | os.PathLike) -> Path:
    """Write statistics to an ``.npz`` file (atomically, no pickled objects)."""
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
        np.savez_compressed(handle, **arrays)
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
    """The MOSES authors' statistics of ``test`` or ``test_scaffolds`` (cached as ``.npz``).

    The published file is a pickled dictionary; it is read once (from the checksum-verified
    dataset cache) and converted to chemassay's pickle-free format.
    """
    if which not in MOSES_SETS:
        raise UserInputError(f"unknown MOSES reference set {which!r}; choose from {sorted(MOSES_SETS)}")
    source = dataset_file("moses", MOSES_SETS[which])
    digest = sha256_file(source)
    cached = _cache_dir() / f"moses-{which}-{digest[:16]}-v{CACHE_VERSION}.npz"
    if cached.is_file():
        try:
            return load_stats(cached)
        except (OSError, ValueError, KeyError):
            pass  # a damaged cache entry is rebuilt below
    with np.load(source, allow_pickle=True) as data:  # the registry verified its sha256
        raw = data["stats"].item()
    stats = ReferenceStats(
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
    cached.parent.mkdir(parents=True, exist_ok=True)
    save_stats(stats, cached)
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
    from chemassay.runtime.parallel import Failure, parallel_map
    from chemassay.suites.generation import chemnet
    from chemassay.suites.generation.descriptors import fingerprint_matrix

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
    from chemassay.suites.generation.descriptors import describe_smiles

    return describe_smiles(smiles, filters=False)


def _list_digest(smiles: list[str]) -> str:
    digest = hashlib.sha256()
    for text in smiles:
        digest.update(text.encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


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
    """:func:`compute_stats` with a cache keyed by ``sha256`` (of the file, or of the list)."""
    key = sha256 or _list_digest(smiles)
    path = _cache_dir() / f"{key}-rdkit{_rdkit_version()}-v{CACHE_VERSION}.npz"
    if path.is_file():
        try:
            stats = load_stats(path)
            stats.name = name
            return stats
        except (OSError, ValueError, KeyError):
            pass  # an unreadable or stale cache file is recomputed and overwritten below
    stats = compute_stats(
        smiles, name=name, sha256=key, n_jobs=n_jobs, device=device, batch_size=batch_size,
        show_progress=show_progress,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    save_stats(stats, path)
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
    ``test_scaffolds``); a path ending in ``.npz`` is a statistics file written by
    :func:`save_stats`; any other path is a SMILES file (text or CSV).
    """
    if isinstance(spec, ReferenceStats):
        return spec
    if isinstance(spec, (list, tuple)):
        return cached_stats(
            list(spec), name=f"list of {len(spec)} SMILES", n_jobs=n_jobs, device=device,
            batch_size=batch_size, show_progress=show_progress,
        )
    if isinstance(spec, str) and spec.lower() == "moses":
        return published_moses_stats(moses_set)
    if str(spec).endswith(".npz"):
        from chemassay.clitools import need_file

        try:
            return load_stats(need_file(spec, "reference statistics"))
        except (ValueError, KeyError, OSError) as exc:
            raise UserInputError(
                f"{spec}: not a chemassay reference statistics file ({exc}); give a SMILES file instead"
            ) from None
    from chemassay.suites.generation.smiles_files import read_smiles_file

    table = read_smiles_file(spec)
    return cached_stats(
        table.smiles, name=str(table.path), sha256=sha256_file(table.path), n_jobs=n_jobs,
        device=device, batch_size=batch_size, show_progress=show_progress,
    )


def moses_smiles(which: str) -> list[str]:
    """The SMILES of a MOSES split (``train``, ``test`` or ``test_scaffolds``), as given."""
    import pandas as pd

    if which not in MOSES_SMILES:
        raise UserInputError(f"unknown MOSES split {which!r}; choose from {sorted(MOSES_SMILES)}")
    path = dataset_file("moses", MOSES_SMILES[which])
    return pd.read_csv(path, usecols=["SMILES"])["SMILES"].astype(str).tolist()
