"""Morgan fingerprints as packed ``uint64`` bit arrays and as count vectors.

Bit ``i`` of RDKit's fingerprint is bit ``i % 64`` of word ``i // 64`` in the packed array,
so packed rows can be compared with RDKit's own ``ExplicitBitVect`` results bit for bit.
Packed arrays are what :mod:`chemassay.chem.similarity` works on.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from rdkit import Chem, DataStructs
from rdkit.Chem import rdFingerprintGenerator

from chemassay.chem.molecules import parse_smiles

MolLike = Chem.Mol | str


@lru_cache(maxsize=32)
def _morgan_generator(radius: int, n_bits: int, chirality: bool):
    return rdFingerprintGenerator.GetMorganGenerator(
        radius=radius, fpSize=n_bits, includeChirality=chirality
    )


def _as_mol(item: MolLike) -> Chem.Mol:
    return item if isinstance(item, Chem.Mol) else parse_smiles(item)


def _check_bits(n_bits: int) -> None:
    if n_bits <= 0 or n_bits % 64:
        raise ValueError(f"n_bits must be a positive multiple of 64, got {n_bits}")


def pack_bits(dense: np.ndarray) -> np.ndarray:
    """Pack a 0/1 matrix of shape ``(n, n_bits)`` into ``uint64`` words ``(n, n_bits // 64)``."""
    dense = np.asarray(dense)
    if dense.ndim == 1:
        dense = dense[None, :]
    _check_bits(dense.shape[1])
    packed = np.packbits(dense.astype(bool, copy=False), axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u8")


def unpack_bits(packed: np.ndarray, dtype=np.uint8) -> np.ndarray:
    """Inverse of :func:`pack_bits`: a 0/1 matrix ``(n, 64 * words)`` of ``dtype``."""
    packed = np.ascontiguousarray(np.atleast_2d(packed), dtype="<u8")
    dense = np.unpackbits(packed.view(np.uint8), axis=1, bitorder="little")
    return dense if dtype == np.uint8 else dense.astype(dtype)


def popcount(packed: np.ndarray) -> np.ndarray:
    """Number of set bits in each packed row (``int64``)."""
    packed = np.atleast_2d(packed)
    return np.bitwise_count(packed).sum(axis=1, dtype=np.int64)


def morgan_fingerprints(
    mols: Sequence[MolLike], *, radius: int = 2, n_bits: int = 2048, chirality: bool = False
) -> np.ndarray:
    """Morgan (ECFP-like) bit fingerprints of ``mols``, packed as ``uint64`` rows.

    ``mols`` holds RDKit molecules or SMILES (invalid SMILES raise ``InvalidSmiles``).
    The bits equal RDKit's ``GetMorganGenerator(radius, fpSize).GetFingerprint`` (and the
    legacy ``GetMorganFingerprintAsBitVect`` with the same options).
    """
    _check_bits(n_bits)
    generator = _morgan_generator(radius, n_bits, chirality)
    dense = np.zeros((len(mols), n_bits), dtype=np.uint8)
    for row, item in enumerate(mols):
        dense[row] = generator.GetFingerprintAsNumPy(_as_mol(item))
    return pack_bits(dense) if len(mols) else np.zeros((0, n_bits // 64), dtype=np.uint64)


def morgan_fingerprint(mol: MolLike, *, radius: int = 2, n_bits: int = 2048) -> np.ndarray:
    """Packed Morgan fingerprint of one molecule, shape ``(n_bits // 64,)``."""
    return morgan_fingerprints([mol], radius=radius, n_bits=n_bits)[0]


def morgan_count_fingerprints(
    mols: Sequence[MolLike], *, radius: int = 2, n_bits: int = 2048, chirality: bool = False
) -> np.ndarray:
    """Hashed Morgan count fingerprints ``(n, n_bits)`` as ``uint32`` (RDKit counts)."""
    generator = _morgan_generator(radius, n_bits, chirality)
    counts = np.zeros((len(mols), n_bits), dtype=np.uint32)
    for row, item in enumerate(mols):
        counts[row] = generator.GetCountFingerprintAsNumPy(_as_mol(item))
    return counts


def to_rdkit_bitvect(packed_row: np.ndarray):
    """Convert one packed row back into an RDKit ``ExplicitBitVect`` (for cross-checks)."""
    dense = unpack_bits(packed_row)[0]
    vect = DataStructs.ExplicitBitVect(int(dense.size))
    on = np.flatnonzero(dense).tolist()
    if on:
        vect.SetBitsFromList(on)
    return vect
