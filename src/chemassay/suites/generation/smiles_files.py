"""Reading sets of SMILES: generated samples and reference sets.

Two layouts are accepted, optionally gzip-compressed (``.gz``):

* a text file with one SMILES per line. Blank lines and lines starting with ``#`` are
  skipped, and a first line that reads ``SMILES`` (any case) is taken as a header. As in
  ``.smi`` files, anything after the first whitespace on a line (a name, a score) is
  ignored, which is also how RDKit reads such a line;
* a CSV file (``.csv``/``.csv.gz``, or a first line with a comma) with a ``SMILES`` column
  (matched case-insensitively). Every data row is one molecule; an empty cell is an
  (invalid) empty SMILES, not a skipped row.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
from dataclasses import dataclass
from pathlib import Path

from chemassay.clitools import need_file
from chemassay.errors import UserInputError


@dataclass(frozen=True)
class SmilesFile:
    """SMILES read from a file, each with the 1-based line number it came from."""

    path: Path
    smiles: list[str]
    lines: list[int]
    layout: str  # "text" or "csv"


def _open_text(path: Path) -> io.TextIOBase:
    if path.name.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def _looks_like_csv(path: Path, first_line: str) -> bool:
    name = path.name.lower()
    if name.endswith((".csv", ".csv.gz")):
        return True
    return "," in first_line


def read_smiles_file(path: str | os.PathLike, *, column: str = "SMILES") -> SmilesFile:
    """Read SMILES from a text or CSV file (see the module docstring for the layouts).

    Raises :class:`~chemassay.errors.UserInputError` for a missing file, a file that is
    not UTF-8 text, or a CSV without the ``column`` column.
    """
    target = need_file(path, "SMILES")
    try:
        with _open_text(target) as handle:
            text = handle.read()
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise UserInputError(f"{target}: cannot read it as UTF-8 text ({exc}); give a SMILES text or CSV file") from None
    all_lines = text.splitlines()
    first = next((line for line in all_lines if line.strip() and not line.lstrip().startswith("#")), "")
    if _looks_like_csv(target, first):
        return _read_csv(target, text, column)
    smiles: list[str] = []
    lines: list[int] = []
    header_seen = False
    for number, raw in enumerate(all_lines, start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        token = stripped.split()[0]
        if not header_seen:
            header_seen = True
            if token.lower() == column.lower():
                continue
        smiles.append(token)
        lines.append(number)
    return SmilesFile(target, smiles, lines, "text")


def _read_csv(target: Path, text: str, column: str) -> SmilesFile:
    rows = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    smiles: list[str] = []
    lines: list[int] = []
    index = -1
    for row in rows:
        number = rows.line_num
        if header is None:
            if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue
            header = [cell.strip() for cell in row]
            lowered = [cell.lower() for cell in header]
            if column.lower() not in lowered:
                raise UserInputError(
                    f"{target}: no '{column}' column in the CSV header (columns: {', '.join(header)}); "
                    f"name the SMILES column '{column}' or give a text file with one SMILES per line"
                )
            index = lowered.index(column.lower())
            continue
        if not row:
            continue
        smiles.append(row[index].strip() if index < len(row) else "")
        lines.append(number)
    if header is None:
        raise UserInputError(f"{target}: empty CSV file; expected a header with a '{column}' column")
    return SmilesFile(target, smiles, lines, "csv")
