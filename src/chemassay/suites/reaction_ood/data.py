"""The suite's datasets, loaded through the registry (``chemassay.load_dataset``).

``schneider-50k`` (aliases ``schneider50k``, ``schneider``) and ``schneider-dataseta`` are
registered in :mod:`chemassay.data.catalog` with :func:`load_reactions` as their loader. A
loaded dataset is a :class:`pandas.DataFrame` in the suite's standard columns (``rxn_smiles``,
``document_id``, ``authors``, ``year``, ``class_code``, ``assignee``, ``source_row``; see
:mod:`~chemassay.suites.reaction_ood.io`), ready for ``clean``. Commands that take a reaction
file also take one of these names (:func:`reaction_input`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from chemassay.contract.errors import UserInputError
from chemassay.data.registry import dataset_file, get_spec, is_dataset_name
from chemassay.runtime.files import need_file
from chemassay.suites.reaction_ood.clean import DATASET_METADATA_KEY
from chemassay.suites.reaction_ood.io import read_reactions

#: The file of each registered dataset that holds its reactions, and the reader format.
REACTION_FILES: dict[str, tuple[str, str]] = {
    "schneider-50k": ("schneider50k.csv.gz", "schneider"),
    "schneider-dataseta": ("dataSetA.csv", "table"),
}


def reaction_dataset_file(name: str) -> tuple[Path, str]:
    """The reaction file of a registered dataset (name or alias) and its reader format."""
    spec = get_spec(name)
    if spec.name not in REACTION_FILES:
        known = ", ".join(sorted(REACTION_FILES))
        raise UserInputError(f"dataset {spec.name!r} is not a reaction set of this suite; use one of {known}")
    filename, fmt = REACTION_FILES[spec.name]
    return Path(dataset_file(spec.name, filename)), fmt


def load_reactions(name: str, part: str | None = None, **options) -> pd.DataFrame:
    """Loader of the suite's registered datasets: the reactions in the standard columns.

    ``name`` is a registered name (the registry resolves aliases before calling); these sets
    have no parts, so ``part`` must be ``None``. ``options`` go to
    :func:`~chemassay.suites.reaction_ood.io.read_reactions` (``derive_year``). Unreadable
    cells are listed in ``frame.attrs["read_problems"]``.

    >>> import chemassay
    >>> frame = chemassay.load_dataset("schneider-dataseta")
    >>> len(frame), int(frame["document_id"].notna().sum())
    (683, 683)
    """
    if part is not None:
        raise UserInputError(f"dataset {name!r} has no parts (asked for {part!r}); split it with 'reaction-ood split'")
    path, fmt = reaction_dataset_file(name)
    frame = read_reactions(path, fmt=fmt, **options)
    # cleaning and splitting this frame can then name the data it came from
    frame.attrs["dataset"] = name
    return frame


def reaction_input(path: str | os.PathLike) -> tuple[Path, str]:
    """A reaction file and the format to read it with (``auto``), or, when ``path`` is not a
    file but a registered dataset name (``schneider-50k``), that dataset's file and format."""
    text = str(path)
    if not Path(text).exists() and is_dataset_name(text):
        return reaction_dataset_file(text)
    return need_file(path, "reaction"), "auto"


def registered_reaction_dataset(sha256: str | None) -> str | None:
    """The registered reaction set whose reaction file has this checksum (``schneider-50k``
    for the bundled Schneider CSV wherever it was copied), else ``None``."""
    from chemassay.data.registry import get_spec

    if not sha256:
        return None
    for name, (filename, _fmt) in REACTION_FILES.items():
        if get_spec(name).file(filename).sha256 == sha256:
            return name
    return None


def cleaned_table_dataset(path: str | os.PathLike) -> str | None:
    """The registered dataset a cleaned Parquet table was made from (recorded by ``clean``),
    else ``None`` (a CSV table, or one cleaned from another file)."""
    if Path(path).suffix.lower() != ".parquet":
        return None

    try:
        metadata = pq.read_schema(path).metadata or {}
    except (OSError, ValueError):
        return None
    value = metadata.get(DATASET_METADATA_KEY)
    return value.decode("utf-8", "replace") if value else None
