"""Reading and writing the tables the evaluation side uses (CSV, TSV, Parquet, JSON lines).

Split parts, prediction files and per-item outputs are plain tables; this module reads any of
the four formats by extension (``.gz`` allowed for the text ones) with a clear error naming
the file, and writes them atomically.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pandas as pd

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import open_text
from chemassay.runtime.files import atomic_writer

TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".jsonl", ".json", ".txt")


def table_kind(path: str | os.PathLike) -> str:
    """``csv``, ``tsv``, ``parquet``, ``jsonl`` or ``txt`` from the file name (``.gz`` ignored)."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    for suffix in TABLE_SUFFIXES:
        if name.endswith(suffix):
            return {"json": "jsonl"}.get(suffix[1:], suffix[1:])
    raise UserInputError(
        f"{path}: unknown table format; use one of {', '.join(TABLE_SUFFIXES)} (optionally .gz)"
    )


def first_data_line(path: str | os.PathLike) -> int:
    """The file line of a table's first data row: 1 in JSON lines and text files, else 2
    (below a CSV/TSV header; a Parquet row is numbered as it would be in the CSV export)."""
    return 1 if table_kind(path) in ("jsonl", "txt") else 2


def read_table(path: str | os.PathLike, *, what: str = "table") -> pd.DataFrame:
    """Read a table; every column is kept as read (text columns stay text, blanks stay blank).

    Text formats go through :func:`chemassay.data.readers.open_text`, so a binary, non-UTF-8,
    fake-``.gz`` or truncated gzip file is a one-line error naming the file.
    """
    target = Path(path)
    if not target.exists():
        raise UserInputError(f"{target}: no such {what} file")
    if target.is_dir():
        raise UserInputError(f"{target}: is a directory, expected a {what} file")
    kind = table_kind(target)
    try:
        if kind == "parquet":
            return pd.read_parquet(target)
        with open_text(target) as handle:
            if kind == "jsonl":
                return _read_json_lines(handle, target)
            if kind == "txt":
                return pd.read_csv(handle, header=None, names=["prediction"], dtype=str,
                                   keep_default_na=False, skip_blank_lines=False)
            return pd.read_csv(handle, sep="," if kind == "csv" else "\t", dtype=str, keep_default_na=False)
    except UserInputError:
        raise
    except pd.errors.EmptyDataError:
        raise UserInputError(f"{target}: the {what} file is empty") from None
    except (ValueError, OSError, EOFError, pd.errors.ParserError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserInputError(f"{target}: cannot read it as {kind} ({first})") from None


def _read_json_lines(handle, target: Path) -> pd.DataFrame:
    """One record per non-blank line, each a JSON object; values kept as read (no dtype or
    date guessing). A line that is not a JSON object is an error naming its number."""
    rows = []
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserInputError(f"{target}: line {number} is not JSON ({exc.msg}); give one JSON object per line") from None
        except RecursionError:
            raise UserInputError(f"{target}: line {number} is JSON nested too deeply to read") from None
        if not isinstance(row, dict):
            raise UserInputError(f"{target}: line {number} is not a JSON object ({type(row).__name__}); "
                                 "give one object per line") from None
        rows.append(row)
    return pd.DataFrame.from_records(rows) if rows else pd.DataFrame()


def write_table(frame: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``frame`` atomically in the format its extension names."""
    target = Path(path)
    kind = table_kind(target)
    if kind == "parquet":
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        with atomic_writer(target, "wb", encoding=None) as handle:
            handle.write(buffer.getvalue())
        return target
    if kind == "jsonl":
        text = frame.to_json(orient="records", lines=True)
    elif kind == "txt":
        text = "\n".join(frame.iloc[:, 0].astype(str)) + "\n"
    else:
        text = frame.to_csv(index=False, sep="," if kind == "csv" else "\t")
    if target.name.lower().endswith(".gz"):
        import gzip

        with atomic_writer(target, "wb", encoding=None) as handle:
            with gzip.GzipFile(fileobj=handle, mode="wb", mtime=0) as zipped:
                zipped.write(text.encode("utf-8"))
        return target
    with atomic_writer(target, "w") as handle:
        handle.write(text)
    return target
