"""Readers for the on-disk formats users hand to chemassay.

Each reader fails on a wholly unusable file with :class:`UserInputError` (missing file,
unknown format or column) and never drops a malformed row silently: rows it cannot use
are returned with their line number and reason.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from chemassay.errors import UserInputError

SMILES_COLUMN_NAMES = ("smiles", "SMILES", "Smiles", "canonical_smiles", "smi")


def open_text(path: str | os.PathLike) -> io.TextIOBase:
    """Open a text file, transparently decompressing ``.gz``; clear error when missing."""
    target = Path(path)
    if not target.exists():
        raise UserInputError(f"{target}: no such file")
    if target.is_dir():
        raise UserInputError(f"{target}: is a directory, expected a file")
    if target.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(target, "rb"), encoding="utf-8", newline="")
    return open(target, encoding="utf-8", newline="")


@dataclass
class SmilesList:
    """SMILES read from a file, with the 1-based line number of each, and what was skipped."""

    smiles: list[str]
    lines: list[int]
    skipped: list[dict] = field(default_factory=list)
    column: str | None = None

    def __len__(self) -> int:
        return len(self.smiles)


def _sniff_delimiter(header: str) -> str | None:
    for delimiter in ("\t", ","):
        if delimiter in header:
            return delimiter
    return None


def read_smiles_file(path: str | os.PathLike, column: str | None = None) -> SmilesList:
    """Read SMILES from a plain list (one per line) or a CSV/TSV with a SMILES column.

    Blank lines and ``#`` comment lines are ignored in plain lists; a first line that is a
    header (``SMILES``/``smiles``) is recognised. In a table the column is ``column`` or the
    first of the usual names; an empty cell is reported as skipped with its line number.
    Whether each string is valid chemistry is left to the caller.
    """
    with open_text(path) as handle:
        text = handle.read()
    raw_lines = text.splitlines()
    first = next((line for line in raw_lines if line.strip() and not line.startswith("#")), "")
    delimiter = _sniff_delimiter(first)
    header_cells = [c.strip() for c in first.split(delimiter)] if delimiter else [first.strip()]
    wanted = column or next((c for c in SMILES_COLUMN_NAMES if c in header_cells), None)
    result = SmilesList([], [], [], column=wanted)
    if delimiter and wanted is None and column is None:
        raise UserInputError(
            f"{path}: looks like a table ({header_cells[:5]}...) but has no SMILES column; "
            f"pass --column NAME"
        )
    if delimiter and wanted is not None:
        if wanted not in header_cells:
            raise UserInputError(f"{path}: no column {wanted!r}; columns are {header_cells}")
        reader = csv.reader(io.StringIO(text), delimiter=delimiter)
        index = None
        for line_no, row in enumerate(reader, start=1):
            if index is None:
                if not row or row[0].startswith("#"):
                    continue
                index = [c.strip() for c in row].index(wanted)
                continue
            if not row or not any(cell.strip() for cell in row):
                continue
            value = row[index].strip() if index < len(row) else ""
            if not value:
                result.skipped.append({"line": line_no, "reason": "empty SMILES cell"})
                continue
            result.smiles.append(value)
            result.lines.append(line_no)
        return result
    if column is not None and column not in header_cells:
        raise UserInputError(f"{path}: no column {column!r} (the file is a plain list)")
    header_seen = False
    for line_no, line in enumerate(raw_lines, start=1):
        value = line.strip()
        if not value or value.startswith("#"):
            continue
        if not header_seen and value in SMILES_COLUMN_NAMES:
            header_seen = True
            continue
        header_seen = True
        # A line may carry an identifier after whitespace (``SMILES name``); keep the SMILES.
        result.smiles.append(value.split()[0])
        result.lines.append(line_no)
    return result


def read_table(path: str | os.PathLike, *, required: tuple[str, ...] = (), sep: str | None = None):
    """Read a CSV, TSV or Parquet table into pandas; check ``required`` columns exist.

    The format comes from the extension (``.parquet``, ``.tsv``/``.tab``, otherwise CSV;
    ``.gz`` allowed). Errors name the file and the missing columns.
    """
    import pandas as pd

    target = Path(path)
    if not target.exists():
        raise UserInputError(f"{target}: no such file")
    suffixes = [s.lower() for s in target.suffixes]
    try:
        if ".parquet" in suffixes or ".pq" in suffixes:
            frame = pd.read_parquet(target)
        else:
            if sep is None:
                sep = "\t" if (".tsv" in suffixes or ".tab" in suffixes) else ","
            frame = pd.read_csv(target, sep=sep, dtype=str, keep_default_na=False)
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise UserInputError(f"{target}: cannot read as a table ({exc})") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise UserInputError(
            f"{target}: missing column(s) {missing}; found {list(frame.columns)}"
        )
    return frame


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, line_without_newline)`` for every line of a (gzipped) text file."""
    with open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            yield number, line.rstrip("\r\n")
