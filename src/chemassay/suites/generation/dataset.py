"""The MOSES splits through the data registry, and SMILES sets named on the command line.

The three splits are the files of the registered ``moses`` dataset (fetched into the cache
by ``chemassay data fetch moses``): ``train`` (1,584,663 SMILES), ``test`` (176,074) and
``test_scaffolds`` (176,225), one SMILES column each, as the MOSES authors published them.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from chemassay.data import dataset_file
from chemassay.data.readers import read_smiles_file
from chemassay.errors import UserInputError

MOSES_SPLIT_FILES: dict[str, str] = {
    "train": "train.csv.gz",
    "test": "test.csv.gz",
    "test_scaffolds": "test_scaffolds.csv.gz",
}
_SPLIT_ALIASES = {
    "train": "train",
    "test": "test",
    "test_scaffolds": "test_scaffolds",
    "scaffold_test": "test_scaffolds",
    "scaffolds": "test_scaffolds",
    "testsf": "test_scaffolds",
}


def moses_split_name(split: str) -> str:
    """Canonical split name (``train``, ``test``, ``test_scaffolds``) for a name or alias."""
    key = split.strip().lower().replace("-", "_")
    if key not in _SPLIT_ALIASES:
        raise UserInputError(
            f"unknown MOSES split {split!r}; use one of train, test, test_scaffolds"
        )
    return _SPLIT_ALIASES[key]


def moses_split_path(split: str, *, download: bool = True) -> Path:
    """Local path of one MOSES split file (checksum-verified; fetched if allowed)."""
    return dataset_file("moses", MOSES_SPLIT_FILES[moses_split_name(split)], download=download)


def load_moses_split(split: str, *, limit: int | None = None, download: bool = True) -> list[str]:
    """SMILES of one MOSES split in file order (``limit``: only the first ``limit``)."""
    path = moses_split_path(split, download=download)
    smiles: list[str] = []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        header = handle.readline().strip()
        if header.split(",")[0] != "SMILES":
            raise UserInputError(f"{path}: expected a SMILES header, found {header[:40]!r}")
        for line in handle:
            if limit is not None and len(smiles) >= limit:
                break
            value = line.strip()
            if value:
                smiles.append(value.split(",")[0])
    return smiles


def load_smiles_set(spec: str | os.PathLike, *, limit: int | None = None) -> tuple[list[str], str]:
    """SMILES named by ``spec``: ``moses`` / ``moses:SPLIT`` or a file path.

    ``moses`` alone means the training split. A file is read with the shared reader (plain
    list or CSV with a SMILES column); rows it cannot use raise nothing here but are not
    returned, so callers that must account for them should use the reader directly.
    Returns the SMILES and a short description of where they came from.
    """
    text = str(spec)
    if text == "moses" or text.startswith("moses:"):
        split = moses_split_name(text.partition(":")[2] or "train")
        return load_moses_split(split, limit=limit), f"moses:{split}"
    table = read_smiles_file(text)
    if table.skipped:
        first = table.skipped[0]
        raise UserInputError(
            f"{text}: {len(table.skipped)} unusable row(s), first at line {first['line']} "
            f"({first['reason']}); fix or remove them"
        )
    smiles = table.smiles if limit is None else table.smiles[:limit]
    return smiles, text
