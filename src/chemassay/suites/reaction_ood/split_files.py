"""Writing a split to a folder: one Parquet file per part plus ``manifest.json``.

Layout of ``DIR`` (what ``chemassay reaction-ood split`` writes and ``verify`` reads)::

    DIR/<part>.parquet   the rows of each part, all columns of the input, input row order
    DIR/manifest.json    kind, seed, resolved config, input path/sha256/rows (and the registered
                         dataset the cleaned input was made from, when ``clean`` recorded it), per part the
                         file name, rows and sha256, what the procedure recorded (``meta``),
                         the guarantees ``verify`` checks, and software versions

Parts are Parquet only (typed columns: ``year`` stays an integer, missing values stay missing).
No timestamp is written, so the same input, config and seed give byte-identical files.
:func:`split_file` keeps memory bounded: it loads only the columns the procedure needs, then
streams the input in batches to the part files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import current_versions
from chemassay.runtime.files import atomic_write_text, sha256_file
from chemassay.suites.reaction_ood.data import cleaned_table_dataset
from chemassay.suites.reaction_ood.splits import (
    Assignment,
    assign_split,
    colliding_positions,
    reaction_keys,
)
from chemassay.suites.reaction_ood.verify import MANIFEST, guarantees

SPLIT_COLUMNS = ("rxn_smiles", "document_id", "authors", "year", "class_code")
_KEY_BATCH = 250_000


def _is_parquet(path: Path) -> bool:
    return any(s.lower() in (".parquet", ".pq") for s in path.suffixes)


def _iter_column(path: Path, column: str, batch_rows: int = _KEY_BATCH):
    if _is_parquet(path):
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows, columns=[column]):
            yield batch.column(0).to_pylist()
    else:
        for chunk in pd.read_csv(path, usecols=[column], dtype=str, keep_default_na=False, chunksize=batch_rows):
            yield chunk[column].tolist()


def read_reaction_keys(path: str | os.PathLike) -> tuple[np.ndarray, dict[int, str]]:
    """Reaction keys of every row (streamed) and the texts of the rows whose keys collide."""
    target = Path(path)
    keys = np.concatenate([reaction_keys(batch) for batch in _iter_column(target, "rxn_smiles")] or [np.zeros(0, np.uint64)])
    shared = colliding_positions(keys)
    texts: dict[int, str] = {}
    if len(shared):
        wanted = set(shared.tolist())
        offset = 0
        for batch in _iter_column(target, "rxn_smiles"):
            for index, text in enumerate(batch):
                if offset + index in wanted:
                    texts[offset + index] = str(text)
            offset += len(batch)
    return keys, texts


def read_split_columns(path: str | os.PathLike, columns: Sequence[str] = SPLIT_COLUMNS) -> pd.DataFrame:
    """The columns a split needs from a cleaned table (Parquet or CSV); absent ones are NA.

    Raises when the table has no ``rxn_smiles`` column; the column itself is read only if it
    is in ``columns``.
    """
    target = Path(path)
    if not target.is_file():
        raise UserInputError(f"{target}: no such file")
    if _is_parquet(target):
        try:
            available = set(pq.ParquetFile(target).schema_arrow.names)
        except (OSError, ValueError) as exc:
            raise UserInputError(f"{target}: cannot read as Parquet ({exc})") from None
        present = [c for c in columns if c in available]
        frame = pq.read_table(target, columns=present).to_pandas()
    else:
        try:
            available = set(pd.read_csv(target, nrows=0).columns)
        except (ValueError, OSError, pd.errors.ParserError) as exc:
            raise UserInputError(f"{target}: cannot read as a table ({exc})") from None
        present = [c for c in columns if c in available]
        frame = pd.read_csv(target, usecols=present, dtype={c: str for c in present if c != "year"},
                            keep_default_na=True)
    if "rxn_smiles" not in available:
        raise UserInputError(f"{target}: no 'rxn_smiles' column; split a table written by 'reaction-ood clean'")
    for column in columns:
        if column not in frame.columns:
            frame[column] = None
    frame["year"] = pd.array(pd.to_numeric(frame["year"], errors="coerce"), dtype="Int64")
    for column in ("document_id", "authors", "class_code"):
        frame[column] = frame[column].astype(object).where(frame[column].notna(), None)
    return frame


def _iter_input_tables(source: Path | pd.DataFrame, batch_rows: int):
    """Arrow tables of the input in row order (Parquet batches are passed through untouched)."""
    if isinstance(source, pd.DataFrame):
        yield pa.Table.from_pandas(_normalize_batch(source.reset_index(drop=True)), preserve_index=False)
    elif _is_parquet(source):
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(source)
        schema = parquet.schema_arrow
        for batch in parquet.iter_batches(batch_size=batch_rows):
            yield pa.Table.from_batches([batch], schema=schema)
    else:
        for chunk in pd.read_csv(source, chunksize=batch_rows, dtype=str, keep_default_na=True):
            yield pa.Table.from_pandas(_normalize_batch(chunk.reset_index(drop=True)), preserve_index=False)


def _normalize_batch(frame: pd.DataFrame) -> pd.DataFrame:
    if "year" in frame.columns:
        frame["year"] = pd.array(pd.to_numeric(frame["year"], errors="coerce"), dtype="Int64")
    for column in ("n_records", "source_row"):
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
    return frame


def write_parts(
    source: Path | pd.DataFrame,
    assignment: Assignment,
    out_dir: Path,
    *,
    batch_rows: int = 200_000,
) -> dict[str, dict]:
    """Write every part of ``assignment`` (rows of ``source``) to ``out_dir/<part>.parquet``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    membership: dict[str, np.ndarray] = {name: rows for name, rows in assignment.parts.items()}
    writers: dict[str, Any] = {}
    temps = {name: out_dir / f".{name}.parquet.tmp" for name in membership}
    schema = None
    try:
        offset = 0
        for table in _iter_input_tables(source, batch_rows):
            if schema is None:
                schema = table.schema  # keeps the pandas metadata: 'year' reads back as Int64
            table = table.replace_schema_metadata(schema.metadata).cast(schema)
            stop = offset + table.num_rows
            for name, rows in membership.items():
                lo, hi = np.searchsorted(rows, [offset, stop])
                if name not in writers:
                    writers[name] = pq.ParquetWriter(temps[name], schema)
                if hi > lo:
                    writers[name].write_table(table.take(pa.array(rows[lo:hi] - offset)))
            offset = stop
        if schema is None:
            raise UserInputError("the input table is empty; nothing to split")
        for name in membership:
            if name not in writers:
                writers[name] = pq.ParquetWriter(temps[name], schema)
        for writer in writers.values():
            writer.close()
        writers.clear()
        entries = {}
        for name, rows in membership.items():
            final = out_dir / f"{name}.parquet"
            os.replace(temps[name], final)
            entries[name] = {"file": final.name, "rows": int(len(rows)), "sha256": sha256_file(final)}
        return entries
    finally:
        for writer in writers.values():
            writer.close()
        for temp in temps.values():
            if temp.exists():
                temp.unlink()


def _prepare_dir(out_dir: Path, overwrite: bool) -> None:
    manifest_path = out_dir / MANIFEST
    if out_dir.exists() and not out_dir.is_dir():
        raise UserInputError(f"{out_dir}: exists and is not a folder")
    if manifest_path.exists():
        if not overwrite:
            raise UserInputError(f"{out_dir}: already holds a split (manifest.json); pass --overwrite or choose another folder")
        try:
            old = json.loads(manifest_path.read_text(encoding="utf-8"))
            for entry in old.get("parts", {}).values():
                stale = out_dir / entry["file"]
                if stale.is_file():
                    stale.unlink()
        except (ValueError, KeyError, OSError):
            pass  # no readable earlier manifest: nothing stale to remove
        manifest_path.unlink()


def write_manifest(
    out_dir: Path,
    *,
    kind: str,
    seed: int,
    assignment: Assignment,
    entries: Mapping[str, dict],
    input_info: Mapping[str, Any],
) -> dict:
    """Write ``manifest.json`` (atomically) and return it."""
    manifest = {
        "format": "chemassay reaction-ood split v1",
        "kind": kind,
        "seed": seed,
        "config": assignment.config,
        "input": dict(input_info),
        "parts": dict(entries),
        "meta": assignment.meta,
        "guarantees": [c.describe() for c in guarantees(kind, assignment.config, list(entries))],
        "versions": current_versions(),
    }
    atomic_write_text(out_dir / MANIFEST, json.dumps(_jsonable(manifest), indent=2, sort_keys=False) + "\n")
    return manifest


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def split_file(
    path: str | os.PathLike,
    out_dir: str | os.PathLike,
    kind: str,
    config: Mapping[str, Any] | None = None,
    seed: int = 0,
    *,
    overwrite: bool = False,
) -> dict:
    """Split a cleaned reaction file into ``out_dir`` (parts + manifest); returns the manifest."""
    source = Path(path)
    target = Path(out_dir)
    # the reaction text is only needed for its key: keep memory to the short columns
    frame = read_split_columns(source, [c for c in SPLIT_COLUMNS if c != "rxn_smiles"])
    keys, texts = read_reaction_keys(source)
    assignment = assign_split(frame, kind, config, seed, keys=keys, key_texts=texts)
    _prepare_dir(target, overwrite)
    entries = write_parts(source, assignment, target)

    info = {"path": str(source), "sha256": sha256_file(source), "rows": int(len(frame)),
            "dataset": cleaned_table_dataset(source)}
    return write_manifest(target, kind=kind, seed=seed, assignment=assignment, entries=entries, input_info=info)


def split_frame_to_dir(
    df: pd.DataFrame,
    out_dir: str | os.PathLike,
    kind: str,
    config: Mapping[str, Any] | None = None,
    seed: int = 0,
    *,
    overwrite: bool = False,
    input_info: Mapping[str, Any] | None = None,
) -> dict:
    """Split an in-memory cleaned table into ``out_dir`` (parts + manifest); returns the manifest."""
    target = Path(out_dir)
    frame = df.reset_index(drop=True)
    assignment = assign_split(frame, kind, config, seed)
    _prepare_dir(target, overwrite)
    entries = write_parts(frame, assignment, target)
    info = dict(input_info or {"path": None, "sha256": None})
    info["rows"] = int(len(frame))
    info.setdefault("dataset", df.attrs.get("dataset"))
    return write_manifest(target, kind=kind, seed=seed, assignment=assignment, entries=entries, input_info=info)
