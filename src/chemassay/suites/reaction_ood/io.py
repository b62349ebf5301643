"""Readers for the reaction tables the ``reaction-ood`` suite accepts.

Every reader returns (or yields, in chunks) a :class:`pandas.DataFrame` with the suite's
standard columns, the contract the rest of the suite relies on:

==============  ==============================================================================
``rxn_smiles``  reaction SMILES as given (``str``; an empty string when the cell is empty)
``document_id`` document the reaction comes from (``str`` or NA); US patent numbers are
                normalized by :func:`~chemassay.suites.reaction_ood.years.normalize_patent_id`
                (``US`` prefix and kind code removed: ``US06887874`` → ``06887874``)
``authors``     ``;``-separated author names (``str`` or NA)
``year``        publication year (nullable ``Int64``); derived from a US patent number when the
                file gives none (see :mod:`~chemassay.suites.reaction_ood.years`)
``class_code``  hierarchical reaction class such as NameRxn ``3.1.2`` (``str`` or NA)
``assignee``    ``;``-separated assignees (``str`` or NA)
``source_row``  1-based data row in the file (the header is not counted)
==============  ==============================================================================

Formats (``fmt``): ``"table"`` (CSV, TSV or Parquet with the columns above, ``rxn_smiles``
required; the aliases in :data:`COLUMN_ALIASES` are accepted), ``"rsmi"`` (Daniel Lowe's USPTO
extraction: ``ReactionSmiles``, ``PatentNumber``, ``Year``...), ``"schneider"`` (the Schneider
50k CSV: ``rxn_class``, ``source``, ``rxn``, ``split``, ``y``) and ``"pistachio"`` (JSON lines
as exported by NextMove Pistachio: ``title`` or ``data.documentId``, ``data.smiles``,
``data.namerxn``, ``data.date``, ``data.authors``, ``data.assignees``). ``"auto"`` picks one from
the extension and header. Cells that cannot be read (a year that is not a number, a JSON line
that does not parse) are kept with NA and listed in ``frame.attrs["read_problems"]`` as
``{"row": n, "reason": ...}``; nothing is dropped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from chemassay.contract.errors import UserInputError
from chemassay.data import dataset_file
from chemassay.data.readers import open_text
from chemassay.runtime.files import need_file
from chemassay.suites.reaction_ood.years import normalize_patent_id, years_from_patents

STANDARD_COLUMNS = ("rxn_smiles", "document_id", "authors", "year", "class_code", "assignee", "source_row")
FORMATS = ("auto", "table", "rsmi", "schneider", "pistachio")

#: Column names accepted in a generic table for each standard column (first match wins).
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "rxn_smiles": ("rxn_smiles", "reaction_smiles", "ReactionSmiles", "rxn", "rxn_Smiles"),
    "document_id": ("document_id", "document", "patent", "patent_number", "PatentNumber", "patentID"),
    "authors": ("authors", "author"),
    "year": ("year", "Year"),
    "class_code": ("class_code", "rxn_class", "namerxn", "class", "rxn_Class"),
    "assignee": ("assignee", "assignees"),
}

DEFAULT_CHUNK_ROWS = 100_000
_MIN_YEAR, _MAX_YEAR = 1700, 2200


def schneider_50k_path() -> Path:
    """Path of the bundled Schneider 50k CSV (``chemassay.data`` dataset ``schneider-50k``)."""
    return Path(dataset_file("schneider-50k", "schneider50k.csv.gz"))


def read_schneider_50k() -> pd.DataFrame:
    """The bundled Schneider 50k set in the standard columns (year derived from the patent)."""
    return read_reactions(schneider_50k_path(), fmt="schneider")


def _suffixes(path: Path) -> list[str]:
    return [s.lower() for s in path.suffixes]


FORMATS_ACCEPTED = (
    "table (CSV/TSV/Parquet with a rxn_smiles column), rsmi (USPTO .rsmi: ReactionSmiles, PatentNumber), "
    "schneider (the Schneider 50k CSV: rxn_class, source, rxn) or pistachio (JSON lines with data.smiles); "
    "choose one with --format"
)


def _header(path: Path) -> str:
    try:
        with open_text(path) as handle:
            return handle.readline().rstrip("\r\n")
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise UserInputError(f"{path}: cannot read the file ({exc})") from None


def detect_format(path: str | os.PathLike) -> str:
    """Guess the reader for ``path`` from its extension and first line."""
    target = Path(path)
    suffixes = _suffixes(target)
    if ".rsmi" in suffixes:
        return "rsmi"
    if ".json" in suffixes or ".jsonl" in suffixes or ".ndjson" in suffixes:
        return "pistachio"
    if ".parquet" in suffixes or ".pq" in suffixes:
        return "table"
    header = _header(target)
    delimiter = "\t" if "\t" in header else ","
    cells = {cell.strip().strip('"') for cell in header.split(delimiter)}
    if {"rxn_class", "source", "rxn"} <= cells:
        return "schneider"
    if {"ReactionSmiles", "PatentNumber"} <= cells:
        return "rsmi"
    if header.lstrip().startswith("{"):
        return "pistachio"
    return "table"


def _check_path(path: str | os.PathLike) -> Path:
    target = need_file(path, "")
    return target


def iter_reactions(
    path: str | os.PathLike,
    fmt: str = "auto",
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    derive_year: bool = True,
) -> Iterator[pd.DataFrame]:
    """Yield the reactions of ``path`` as standard-column DataFrames of at most ``chunk_rows``.

    The streaming form of :func:`read_reactions` (bounded memory for files of millions of
    reactions); each chunk carries its own ``attrs["read_problems"]``. ``derive_year`` fills a
    missing year from a US patent ``document_id``.
    """
    target = _check_path(path)
    if fmt not in FORMATS:
        raise UserInputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    kind = detect_format(target) if fmt == "auto" else fmt
    if kind == "pistachio":
        raw_chunks = _iter_pistachio(target, chunk_rows)
    elif kind == "table" and any(s in (".parquet", ".pq") for s in _suffixes(target)):
        raw_chunks = _iter_parquet(target, chunk_rows)
    else:
        raw_chunks = _iter_delimited(target, kind, chunk_rows)
    for frame, problems in raw_chunks:
        yield _finish(frame, problems, derive_year)


def read_reactions(path: str | os.PathLike, fmt: str = "auto", *, derive_year: bool = True) -> pd.DataFrame:
    """Read a reaction file into the standard columns (see the module docstring).

    Raises :class:`~chemassay.contract.errors.UserInputError` naming the file and the fix when the
    file is missing, unreadable, or lacks the reaction column. Unreadable cells are listed
    in ``frame.attrs["read_problems"]``.
    """
    chunks = list(iter_reactions(path, fmt, derive_year=derive_year))
    problems = [p for chunk in chunks for p in chunk.attrs.get("read_problems", [])]
    if not chunks:
        frame = _empty_frame()
    else:
        for chunk in chunks:
            chunk.attrs = {}
        frame = pd.concat(chunks, ignore_index=True)
    frame.attrs["read_problems"] = problems
    return frame


def _empty_frame() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series([], dtype=object) for c in STANDARD_COLUMNS})
    return _coerce_types(frame)


def _coerce_types(frame: pd.DataFrame) -> pd.DataFrame:
    for column in ("document_id", "authors", "class_code", "assignee"):
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    frame["rxn_smiles"] = frame["rxn_smiles"].fillna("").astype(str)
    frame["year"] = pd.array(frame["year"], dtype="Int64")
    frame["source_row"] = frame["source_row"].astype(np.int64)
    return frame[list(STANDARD_COLUMNS)]


def _blank_to_na(values: pd.Series) -> pd.Series:
    text = values.astype(object).where(values.notna(), None)
    return text.map(lambda v: None if v is None or (isinstance(v, str) and not v.strip()) else (v.strip() if isinstance(v, str) else v))


def _parse_years(values: pd.Series, rows: np.ndarray, problems: list[dict]) -> list[int | None]:
    out: list[int | None] = []
    for value, row in zip(values.tolist(), rows.tolist(), strict=True):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            out.append(None)
            continue
        text = str(value).strip()
        if not text:
            out.append(None)
            continue
        try:
            number = float(text)
            if not number.is_integer():
                raise ValueError
            year = int(number)
        except ValueError:
            problems.append({"row": int(row), "reason": f"year {text!r} is not a whole number; read as missing"})
            out.append(None)
            continue
        if not _MIN_YEAR <= year <= _MAX_YEAR:
            problems.append({"row": int(row), "reason": f"year {year} is outside {_MIN_YEAR}-{_MAX_YEAR}; read as missing"})
            out.append(None)
            continue
        out.append(year)
    return out


def _join_list(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        names = [str(v).strip() for v in value if v is not None and str(v).strip()]
        return ";".join(names) if names else None
    text = str(value).strip()
    return text or None


def _normalize_documents(values: pd.Series) -> pd.Series:
    cache: dict[str, str] = {}

    def one(value):
        if value is None or (isinstance(value, float) and np.isnan(value)):
            return None
        text = str(value).strip()
        if not text:
            return None
        if text not in cache:
            cache[text] = normalize_patent_id(text)
        return cache[text]

    return values.astype(object).map(one)


def _finish(frame: pd.DataFrame, problems: list[dict], derive_year: bool) -> pd.DataFrame:
    frame["document_id"] = _normalize_documents(frame["document_id"])
    frame["year"] = pd.array(frame["year"].astype(object).where(frame["year"].notna(), None), dtype="Int64")
    if derive_year:
        missing = frame["year"].isna() & frame["document_id"].notna()
        if missing.any():
            derived = years_from_patents(frame.loc[missing, "document_id"].tolist())
            frame.loc[missing, "year"] = pd.array(derived, dtype="Int64")
    frame = _coerce_types(frame)
    frame.attrs["read_problems"] = problems
    return frame


def _resolve_columns(path: Path, columns: list[str]) -> dict[str, str | None]:
    resolved: dict[str, str | None] = {}
    for standard, aliases in COLUMN_ALIASES.items():
        resolved[standard] = next((a for a in aliases if a in columns), None)
    if resolved["rxn_smiles"] is None:
        raise UserInputError(
            f"{path}: no reaction column; expected one of {list(COLUMN_ALIASES['rxn_smiles'])}, "
            f"found {columns[:12]}"
        )
    return resolved


def _standard_from_table(raw: pd.DataFrame, mapping: dict[str, str | None], first_row: int, problems: list[dict]) -> pd.DataFrame:
    rows = np.arange(first_row, first_row + len(raw), dtype=np.int64)
    out = pd.DataFrame(index=range(len(raw)))
    out["rxn_smiles"] = raw[mapping["rxn_smiles"]].astype(object).fillna("").astype(str).str.strip().to_numpy()
    for standard in ("document_id", "authors", "class_code", "assignee"):
        source = mapping[standard]
        if source is None:
            out[standard] = None
        elif standard in ("authors", "assignee"):
            out[standard] = [_join_list(v) for v in raw[source].tolist()]
        else:
            out[standard] = _blank_to_na(raw[source].reset_index(drop=True)).to_numpy()
    year_source = mapping["year"]
    out["year"] = _parse_years(raw[year_source].reset_index(drop=True), rows, problems) if year_source else None
    out["source_row"] = rows
    return out


def _iter_delimited(path: Path, kind: str, chunk_rows: int) -> Iterator[tuple[pd.DataFrame, list[dict]]]:
    header = _header(path)
    suffixes = _suffixes(path)
    if kind == "rsmi" or ".tsv" in suffixes or ".tab" in suffixes or "\t" in header:
        sep = "\t"
    else:
        sep = ","

    handle = open_text(path)
    try:
        reader = pd.read_csv(
            handle, sep=sep, dtype=str, keep_default_na=False, chunksize=chunk_rows,
            quoting=3 if kind == "rsmi" else 0,  # rsmi SMILES may hold quote characters
        )
    except pd.errors.EmptyDataError:
        handle.close()
        raise UserInputError(f"{path}: the file is empty; expected a reaction table with a header") from None
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        handle.close()
        raise UserInputError(f"{path}: cannot read as a table ({exc})") from None
    if kind == "schneider":
        mapping = {"rxn_smiles": "rxn", "document_id": "source", "authors": None, "year": None,
                   "class_code": "rxn_class", "assignee": None}
        needed = ("rxn", "source", "rxn_class")
    elif kind == "rsmi":
        mapping = {"rxn_smiles": "ReactionSmiles", "document_id": "PatentNumber", "authors": None,
                   "year": "Year", "class_code": None, "assignee": None}
        needed = ("ReactionSmiles", "PatentNumber")
    else:
        mapping = None
        needed = ()
    first_row = 1
    try:
        for raw in reader:
            columns = [str(c) for c in raw.columns]
            if mapping is None:
                mapping = _resolve_columns(path, columns)
            missing = [c for c in needed if c not in columns]
            if missing:
                raise UserInputError(
                    f"{path}: not a {kind} file: missing column(s) {missing}; found {columns[:12]}"
                )
            if kind == "rsmi" and "Year" not in columns:
                mapping = {**mapping, "year": None}
            problems: list[dict] = []
            yield _standard_from_table(raw, mapping, first_row, problems), problems
            first_row += len(raw)
    except (pd.errors.ParserError, UnicodeDecodeError, EOFError, OSError) as exc:
        raise UserInputError(f"{path}: cannot read as a {kind} table near row {first_row} ({exc})") from None
    finally:
        handle.close()


def _iter_parquet(path: Path, chunk_rows: int) -> Iterator[tuple[pd.DataFrame, list[dict]]]:
    try:
        parquet = pq.ParquetFile(path)
    except (OSError, ValueError) as exc:
        raise UserInputError(f"{path}: cannot read as Parquet ({exc})") from None
    columns = list(parquet.schema_arrow.names)
    mapping = _resolve_columns(path, columns)
    wanted = [c for c in dict.fromkeys(v for v in mapping.values() if v)]
    first_row = 1
    for batch in parquet.iter_batches(batch_size=chunk_rows, columns=wanted):
        raw = batch.to_pandas()
        problems: list[dict] = []
        yield _standard_from_table(raw, mapping, first_row, problems), problems
        first_row += len(raw)


def _pistachio_record(line: str, row: int, problems: list[dict]) -> dict:
    record = {"rxn_smiles": "", "document_id": None, "authors": None, "year": None,
              "class_code": None, "assignee": None, "source_row": row}
    try:
        entry = json.loads(line)
    except json.JSONDecodeError as exc:
        problems.append({"row": row, "reason": f"not valid JSON ({exc.msg}); reaction kept empty"})
        return record
    if not isinstance(entry, dict):
        problems.append({"row": row, "reason": "JSON line is not an object; reaction kept empty"})
        return record
    data = entry.get("data") if isinstance(entry.get("data"), dict) else {}
    smiles = data.get("smiles")
    record["rxn_smiles"] = smiles.strip() if isinstance(smiles, str) else ""
    title = entry.get("title") or data.get("documentId")
    record["document_id"] = str(title).strip() if title else None
    namerxn = data.get("namerxn")
    record["class_code"] = str(namerxn).strip() if namerxn not in (None, "") else None
    record["authors"] = _join_list(data.get("authors"))
    record["assignee"] = _join_list(data.get("assignees"))
    date = str(data.get("date") or "").strip()
    if date:
        if len(date) >= 4 and date[:4].isdigit():
            record["year"] = int(date[:4])
        else:
            problems.append({"row": row, "reason": f"date {date!r} does not start with a year; read as missing"})
    return record


def _pistachio_check(path: Path, records: list[dict], first_line: str | None) -> None:
    """Refuse JSON lines that hold no Pistachio record at all (a different layout, not bad rows)."""
    if any(r["rxn_smiles"] for r in records):
        return
    try:
        entry = json.loads(first_line) if first_line is not None else None
    except json.JSONDecodeError:
        entry = None
    shape = f"first record keys {sorted(entry)[:8]}" if isinstance(entry, dict) else "no JSON object on the first line"
    raise UserInputError(
        f"{path}: not Pistachio JSON lines (no record has a reaction in data.smiles; {shape}); "
        f"reaction files are read as {FORMATS_ACCEPTED}"
    )


def _iter_pistachio(path: Path, chunk_rows: int) -> Iterator[tuple[pd.DataFrame, list[dict]]]:
    records: list[dict] = []
    problems: list[dict] = []
    row = 0
    checked = False
    first_line: str | None = None
    try:
        with open_text(path) as handle:
            for line in handle:
                if not line.strip():
                    continue
                row += 1
                if first_line is None:
                    first_line = line
                records.append(_pistachio_record(line, row, problems))
                if len(records) >= chunk_rows:
                    if not checked:
                        _pistachio_check(path, records, first_line)
                        checked = True
                    yield pd.DataFrame.from_records(records, columns=list(STANDARD_COLUMNS)), problems
                    records, problems = [], []
    except (UnicodeDecodeError, EOFError, OSError) as exc:
        raise UserInputError(f"{path}: cannot read as JSON lines near row {row + 1} ({exc})") from None
    if records and not checked:
        _pistachio_check(path, records, first_line)
    if records or row == 0:
        yield pd.DataFrame.from_records(records, columns=list(STANDARD_COLUMNS)), problems
