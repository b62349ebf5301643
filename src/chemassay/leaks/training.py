"""Training data, streamed in chunks of lines whatever its size.

A training file is a list of SMILES or reaction SMILES, one per line (``.smi``/``.txt``: the
first token of each non-blank, non-comment line), a CSV/TSV table with a SMILES column (the
usual names, or ``column``), or a Parquet table (``column``, else the usual SMILES names);
any of them gzipped except Parquet. Text lists and CSV/TSV tables are read with chemassay's
one SMILES reader (:func:`chemassay.data.readers.open_smiles_rows`), so line numbers are
those of the file; a Parquet row is numbered from 1. An empty file, a table without the
column, or one with no item is a :class:`~chemassay.contract.errors.UserInputError`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import SMILES_COLUMN_NAMES, open_smiles_rows, open_text

CHUNK_LINES = 50_000
"""Training lines per chunk: the unit of parallel work (one chunk's molecules in memory)."""
REACTION_COLUMN_NAMES = ("rxn_smiles", "reaction_smiles", "reaction", "rxn", "reactions")


@dataclass
class TrainingChunk:
    """Consecutive items of one training file: its index among the files, line numbers, texts."""

    file: int
    lines: list[int]
    texts: list[str]


def _is_parquet(path: Path) -> bool:
    return path.name.lower().endswith((".parquet", ".pq"))


def _parquet_rows(path: Path, column: str | None) -> Iterator[tuple[int, str]]:
    try:
        handle = pq.ParquetFile(path)
    except Exception as exc:
        raise UserInputError(f"{path}: cannot read as Parquet ({exc})") from None
    names = handle.schema_arrow.names
    wanted = _pick(names, column, path)
    number = 0
    for batch in handle.iter_batches(columns=[wanted], batch_size=CHUNK_LINES):
        for value in batch.column(0).to_pylist():
            number += 1
            yield number, "" if value is None else str(value).strip()


def _pick(names: list[str], column: str | None, path: Path) -> str:
    lowered = {name.lower(): name for name in names}
    if column is not None:
        found = column if column in names else lowered.get(column.lower())
        if found is None:
            raise UserInputError(f"{path}: no column {column!r}; columns are {names[:20]}")
        return found
    for candidate in (*SMILES_COLUMN_NAMES, *REACTION_COLUMN_NAMES):
        if candidate.lower() in lowered:
            return lowered[candidate.lower()]
    raise UserInputError(f"{path}: no SMILES column among {names[:20]}; pass --column NAME")


def _table_rows(path: Path, column: str | None) -> Iterator[tuple[int, str]]:
    # a reaction table's usual column names, when no SMILES column and no --column is given
    try:
        with open_smiles_rows(path, column) as source:
            yield from source.rows
        return
    except UserInputError as exc:
        if column is not None or "no SMILES column" not in str(exc):
            raise

    with open_text(path) as handle:
        header = next((line for line in handle if line.strip()), "")
    delimiter = "\t" if "\t" in header and "," not in header else ","
    names = [cell.strip() for cell in header.rstrip("\n").split(delimiter)]
    wanted = _pick(names, None, path)
    with open_smiles_rows(path, wanted) as source:
        yield from source.rows


def iter_rows(path: str | os.PathLike, column: str | None = None) -> Iterator[tuple[int, str]]:
    """Every item of a training file as ``(line number, text)``, read lazily; raises
    :class:`UserInputError` for a missing or empty file, or a table without the column."""
    target = Path(path)
    if not target.is_file():
        raise UserInputError(f"{target}: no such training file")
    if target.stat().st_size == 0:
        raise UserInputError(f"{target}: the training file is empty")
    rows = _parquet_rows(target, column) if _is_parquet(target) else _table_rows(target, column)
    seen = False
    for row in rows:
        seen = True
        yield row
    if not seen:
        raise UserInputError(f"{target}: no training items (the file has no SMILES lines)")


def iter_chunks(paths: list[str | os.PathLike], column: str | None = None,
                chunk_lines: int = CHUNK_LINES) -> Iterator[TrainingChunk]:
    """The items of every training file in chunks of at most ``chunk_lines``, file by file."""
    for file_index, path in enumerate(paths):
        lines: list[int] = []
        texts: list[str] = []
        for number, text in iter_rows(path, column):
            lines.append(number)
            texts.append(text)
            if len(texts) >= chunk_lines:
                yield TrainingChunk(file_index, lines, texts)
                lines, texts = [], []
        if texts:
            yield TrainingChunk(file_index, lines, texts)


def check_files(paths: list[str | os.PathLike], column: str | None = None) -> None:
    """Fail early, before any work, on a missing or empty file or a missing column (reads each
    file's first item only)."""
    if not paths:
        raise UserInputError("no training file given; pass --train FILE")
    for path in paths:
        rows = iter_rows(path, column)
        next(rows)
        rows.close()
