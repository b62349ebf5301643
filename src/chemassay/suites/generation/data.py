"""The generation suite's data: the MOSES splits through the registry, and SMILES sets.

The three MOSES splits are files of the registered ``moses`` dataset (fetched into the cache
by ``chemassay data fetch moses``, checksum-verified on every use): ``train`` (1,584,663
SMILES), ``test`` (176,074) and ``test_scaffolds`` (176,225), one ``SMILES`` column each, as
the MOSES authors published them. :func:`load_moses` is the registry's loader, so
``chemassay.load_dataset("moses", part="train")`` returns the training SMILES.

Everywhere the suite takes a *set of SMILES* (a training set, a reference set, generated
samples) it accepts the same things, resolved by :func:`smiles_set`: ``"moses"`` or
``"moses:PART"`` (a MOSES split), a path to a SMILES file (read with the one SMILES reader,
:func:`chemassay.data.readers.read_smiles_file`: an empty table cell is an empty, invalid
SMILES, kept in place), or a list of SMILES strings.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import iter_lines, read_smiles_file
from chemassay.data.registry import dataset_file, get_spec
from chemassay.runtime.files import sha256_file

MOSES = "moses"
MOSES_PART_FILES: dict[str, str] = {
    "train": "train.csv.gz",
    "test": "test.csv.gz",
    "test_scaffolds": "test_scaffolds.csv.gz",
}
MOSES_STATS_FILES: dict[str, str] = {"test": "test_stats.npz", "test_scaffolds": "test_scaffolds_stats.npz"}


def moses_part(part: str) -> str:
    """The MOSES part called ``part`` (``train``, ``test`` or ``test_scaffolds``), as the
    registry declares them; a clear error names the parts otherwise."""
    parts = get_spec(MOSES).parts
    if part not in parts:
        raise UserInputError(f"MOSES has no part {part!r}; parts: {', '.join(parts)}")
    return part


def moses_part_path(part: str, *, download: bool = True) -> Path:
    """Local path of one MOSES split file (checksum-verified; fetched if allowed)."""
    return dataset_file(MOSES, MOSES_PART_FILES[moses_part(part)], download=download)


def moses_part_sha256(part: str) -> str:
    """The registered sha256 of a MOSES split file (what cached derivatives are keyed by)."""
    return get_spec(MOSES).file(MOSES_PART_FILES[moses_part(part)]).sha256


def load_moses(name: str = MOSES, part: str = "train", *, limit: int | None = None,
               download: bool = True) -> list[str]:
    """The SMILES of one MOSES split, in file order (the registry loader of ``moses``).

    ``part`` is ``train`` (default), ``test`` or ``test_scaffolds``; ``limit`` keeps only the
    first ``limit`` SMILES. ``download=False`` refuses to fetch missing files (a clear error
    says to run ``chemassay data fetch moses``).
    """
    if name != MOSES:
        raise UserInputError(f"load_moses loads the 'moses' dataset, not {name!r}")
    if limit is not None and limit < 1:
        raise UserInputError(f"limit must be at least 1, got {limit}")
    path = moses_part_path(part, download=download)
    if limit is None:
        return read_smiles_file(path, column="SMILES").smiles
    # The verified split files are one SMILES column under a "SMILES" header: the first
    # ``limit`` rows are read without reading the rest (same strings as the whole-file reader).
    smiles: list[str] = []
    for number, line in iter_lines(path):
        if number == 1:
            if line.strip() != "SMILES":
                raise UserInputError(f"{path}: expected a SMILES header, found {line[:40]!r}")
            continue
        if line.strip():
            smiles.append(line.strip())
            if len(smiles) >= limit:
                break
    return smiles


@dataclass(frozen=True)
class SmilesSet:
    """A resolved set of SMILES: the strings, where they came from, and that source's
    sha256 (of the file, or the registered one of a MOSES split; ``None`` for a list).

    ``label`` is a short name for the set (``moses:train``, a file name, ``list of N``);
    ``lines`` holds the source line of each SMILES for a file.
    """

    smiles: list[str]
    label: str
    sha256: str | None = None
    path: Path | None = None
    lines: list[int] | None = None


def parse_moses_name(spec: object) -> str | None:
    """The MOSES part a set name means: ``""`` for plain ``moses`` (the caller's default
    part), ``test`` for ``moses:test``...; ``None`` when ``spec`` does not name MOSES."""
    if not isinstance(spec, str):
        return None
    text = spec.strip()
    if text.lower() == MOSES:
        return ""
    if text.lower().startswith(MOSES + ":"):
        return moses_part(text.partition(":")[2].strip())
    return None


def smiles_set(spec: str | os.PathLike | Sequence[str], *, default_part: str = "train",
               limit: int | None = None) -> SmilesSet:
    """Resolve a SMILES set given as ``"moses"``/``"moses:PART"``, a file path or a list.

    ``"moses"`` alone means the MOSES part ``default_part``. A file is read with the one
    SMILES reader (its empty table cells are kept as empty, invalid SMILES). ``limit`` keeps
    the first ``limit`` SMILES.
    """
    if limit is not None and limit < 1:
        raise UserInputError(f"limit must be at least 1, got {limit}")
    if isinstance(spec, (list, tuple)):
        smiles = [s if isinstance(s, str) else str(s) for s in spec]
        smiles = smiles if limit is None else smiles[:limit]
        return SmilesSet(smiles, f"list of {len(smiles)} SMILES")
    part = parse_moses_name(spec)
    if part is not None:
        part = part or default_part
        return SmilesSet(load_moses(MOSES, part, limit=limit), f"moses:{part}", moses_part_sha256(part))
    table = read_smiles_file(spec)
    smiles, lines = table.smiles, table.lines
    if limit is not None:
        smiles, lines = smiles[:limit], lines[:limit]
    return SmilesSet(smiles, Path(spec).name, sha256_file(table.path), table.path, lines)
