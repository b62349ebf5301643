"""Readers for the on-disk formats users hand to chemassay.

Each reader fails on a wholly unusable file with :class:`UserInputError` (missing file,
unknown format or column) and never drops a malformed row silently: rows it cannot use
are returned with their line number and reason.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import need_file

SMILES_COLUMN_NAMES = ("smiles", "SMILES", "Smiles", "canonical_smiles", "smi")


def _readable(path: str | os.PathLike) -> Path:
    return need_file(path, "")


class _CheckedText(io.TextIOWrapper):
    """A text stream whose decoding errors become one-line :class:`UserInputError`s."""

    def __init__(self, raw, path: Path, gz: bool) -> None:
        super().__init__(raw, encoding="utf-8", newline="")
        self._path = path
        self._gz = gz
        self._lines_read = 0

    def _fail(self, exc: BaseException, line: int | None = None):
        raise UserInputError(text_read_error(self._path, exc, line=line)) from None

    def read(self, size: int | None = -1) -> str:
        try:
            text = super().read(size)
        except (UnicodeDecodeError, EOFError, OSError, zlib.error) as exc:
            self._fail(exc)
        if "\x00" in text:
            line = self._lines_read + text[: text.index("\x00")].count("\n") + 1
            raise UserInputError(f"{self._path}: a binary file (NUL byte near line {line}); give a UTF-8 text file") from None
        return text

    def readline(self, size: int = -1) -> str:
        try:
            line = super().readline(size)
        except (UnicodeDecodeError, EOFError, OSError, zlib.error) as exc:
            self._fail(exc, self._lines_read + 1)
        self._lines_read += 1
        if "\x00" in line:
            raise UserInputError(f"{self._path}: a binary file (NUL byte on line {self._lines_read}); give a UTF-8 text file") from None
        return line

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


def text_read_error(path: str | os.PathLike, exc: BaseException, *, line: int | None = None) -> str:
    """The one-line message for a file that cannot be read as text (binary, truncated gzip...)."""
    where = f" (near line {line})" if line else ""
    if isinstance(exc, UnicodeDecodeError):
        return f"{path}: not UTF-8 text{where}: byte {exc.object[exc.start:exc.start + 1]!r} cannot be decoded; give a UTF-8 text file"
    if isinstance(exc, EOFError) or "end-of-stream" in str(exc) or "Compressed file ended" in str(exc):
        return f"{path}: the gzip file is truncated{where} (it ends before its end marker); re-create or re-download it"
    if isinstance(exc, (gzip.BadGzipFile, zlib.error)):
        return f"{path}: not a valid gzip file{where} ({exc}); give a plain or gzip-compressed text file"
    return f"{path}: cannot be read{where} ({exc})"


def open_text(path: str | os.PathLike) -> io.TextIOBase:
    """Open a text file, transparently decompressing ``.gz``; clear one-line errors when the
    file is missing, not UTF-8, not gzip, or a truncated gzip (raised when read)."""
    target = _readable(path)
    with open(target, "rb") as probe:
        magic = probe.read(2)
    gz = magic == b"\x1f\x8b"
    if target.suffix == ".gz" and not gz and magic:
        raise UserInputError(f"{target}: named .gz but not gzip-compressed; rename it or compress it")
    raw = gzip.open(target, "rb") if gz else open(target, "rb")
    return _CheckedText(raw, target, gz)


def read_text(path: str | os.PathLike) -> str:
    """The whole (gzipped) text file as a string, with the errors of :func:`open_text`."""
    with open_text(path) as handle:
        return handle.read()


@dataclass
class SmilesList:
    """SMILES read from a file, with the 1-based line number of each.

    ``empty_lines`` lists the rows of a table whose SMILES cell is empty: they are kept in
    ``smiles`` as ``""`` (an invalid molecule, so the item is counted, never dropped).
    """

    smiles: list[str]
    lines: list[int]
    empty_lines: list[int] = field(default_factory=list)
    column: str | None = None
    layout: str = "text"
    path: Path | None = None

    def __len__(self) -> int:
        return len(self.smiles)


def _find_column(header: list[str], column: str | None) -> str | None:
    if column is not None:
        if column in header:
            return column
        lowered = {cell.lower(): cell for cell in header}
        return lowered.get(column.lower())
    lowered = {cell.lower(): cell for cell in header}
    return next((lowered[name.lower()] for name in SMILES_COLUMN_NAMES if name.lower() in lowered), None)


def _table_delimiter(target: Path, first: str) -> str | None:
    name = target.name.lower().removesuffix(".gz")
    if name.endswith(".csv"):
        return ","
    if name.endswith((".tsv", ".tab")):
        return "\t"
    if "," in first:
        return ","
    # A tab may separate a SMILES from its name in a .smi list; it is a table only when the
    # first line is a header naming a SMILES column.
    if "\t" in first and _find_column([c.strip() for c in first.split("\t")], None) is not None:
        return "\t"
    return None


@dataclass
class SmilesRows:
    """An open SMILES file: its layout and its items, ``(line number, string)``, read lazily."""

    path: Path
    layout: str
    column: str | None
    rows: Iterator[tuple[int, str]]


@contextmanager
def open_smiles_rows(path: str | os.PathLike, column: str | None = None) -> Iterator[SmilesRows]:
    """Open a SMILES file with the rules of :func:`read_smiles_file`, streaming its rows.

    Only the lines up to the first item are read before the layout is known; a text list is
    then read line by line and a table row by row, so a file of any size is never held.
    """
    target = _readable(path)
    with open_text(target) as handle:
        head: list[str] = []
        first = ""
        for raw in handle:
            head.append(raw)
            text = raw.rstrip("\n")
            found = next((p for p in (text.splitlines() or [text]) if p.strip() and not p.lstrip().startswith("#")),
                         None)
            if found is not None:
                first = found
                break
        delimiter = _table_delimiter(target, first)
        lines_in = _chain(head, handle)
        if delimiter is None:
            yield SmilesRows(target, "text", None, _text_rows(lines_in, column))
            return
        header_cells = [c.strip() for c in first.split(delimiter)]
        wanted = _find_column(header_cells, column)
        if wanted is None:
            if column is not None:
                raise UserInputError(f"{target}: no column {column!r}; columns are {header_cells}")
            raise UserInputError(
                f"{target}: looks like a table ({header_cells[:5]}) but has no SMILES column; "
                f"pass --column NAME, or give a text file with one SMILES per line"
            )
        yield SmilesRows(target, "table", wanted, _table_rows(lines_in, delimiter, wanted))


def _chain(head: list[str], rest: Iterable[str]) -> Iterator[str]:
    yield from head
    yield from rest


def _table_rows(lines: Iterable[str], delimiter: str, wanted: str) -> Iterator[tuple[int, str]]:
    """Every non-blank row after the header: its SMILES cell (``""`` when empty or missing)."""
    reader = csv.reader(lines, delimiter=delimiter)
    index = None
    for row in reader:
        if index is None:
            if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue
            index = [c.strip() for c in row].index(wanted)
            continue
        if not row or not any(cell.strip() for cell in row):
            continue
        yield reader.line_num, (row[index].strip() if index < len(row) else "")


def _text_rows(lines: Iterable[str], column: str | None) -> Iterator[tuple[int, str]]:
    """The first token of every non-blank, non-comment line; a SMILES header line is skipped."""
    header_names = {name.lower() for name in SMILES_COLUMN_NAMES} | ({column.lower()} if column else set())
    header_seen = False
    line_no = 0
    for raw in lines:
        text = raw.rstrip("\n")
        for part in text.splitlines() or [text]:  # as str.splitlines numbers the lines of the whole file
            line_no += 1
            value = part.strip()
            if not value or value.startswith("#"):
                continue
            token = value.split()[0]
            if not header_seen:
                header_seen = True
                if token.lower() in header_names:
                    continue
            yield line_no, token


def read_smiles_file(path: str | os.PathLike, column: str | None = None) -> SmilesList:
    """Read SMILES from a plain list (one per line) or a CSV/TSV table with a SMILES column.

    The one reader of SMILES files in chemassay; its rules:

    * plain list: blank lines and ``#`` comment lines are ignored; a first line that is a
      SMILES header (``SMILES``, ``smiles``, ``canonical_smiles``, ``smi`` or ``column``) is
      skipped; anything after the first whitespace (a name, a score) is ignored, as RDKit
      reads ``.smi`` files;
    * table (``.csv``/``.tsv``, or a first line with a comma, or a tab-separated header
      naming a SMILES column): the column is ``column`` or the first usual SMILES name
      (case-insensitive). Every non-blank row is one item; **an empty SMILES cell is kept as
      an empty, invalid SMILES** and its line is listed in ``empty_lines``.

    Whether each string is valid chemistry is left to the caller. A missing, binary,
    non-UTF-8 or truncated file, or a table without the column, raises :class:`UserInputError`.
    """
    with open_smiles_rows(path, column) as source:
        result = SmilesList([], [], [], column=source.column, layout=source.layout, path=source.path)
        for line_no, value in source.rows:
            if source.layout == "table" and not value:
                result.empty_lines.append(line_no)
            result.smiles.append(value)
            result.lines.append(line_no)
    return result


def read_table(path: str | os.PathLike, *, required: tuple[str, ...] = (), sep: str | None = None):
    """Read a CSV, TSV or Parquet table into pandas; check ``required`` columns exist.

    The format comes from the extension (``.parquet``, ``.tsv``/``.tab``, otherwise CSV;
    ``.gz`` allowed). Errors name the file and the missing columns.
    """
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


def read_records(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Rows of a JSON Lines file (``.jsonl``/``.ndjson``, gzipped or not) or of a table
    (CSV/TSV/Parquet), as dicts; a line that is not a JSON object is a one-line error."""
    target = Path(path)
    name = target.name.lower()
    if name.endswith((".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz")):
        rows = []
        for number, line in iter_lines(target):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserInputError(f"{target}: line {number} is not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise UserInputError(f"{target}: line {number} is not a JSON object")
            rows.append(row)
        return rows
    return read_table(target).to_dict("records")


def pick_column(rows: list[dict[str, Any]], names: tuple[str, ...], path: str | os.PathLike, what: str) -> str:
    """The first of ``names`` that the rows have; a one-line error lists what the file has."""
    present = set(rows[0]) if rows else set()
    found = next((n for n in names if n in present), None)
    if found is None:
        raise UserInputError(f"{path}: no {what} column; expected one of {list(names)}, found {sorted(present)}")
    return found
