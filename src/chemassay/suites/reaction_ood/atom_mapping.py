"""Atom mapping of unmapped reactions with RXNMapper, and the shipped mapped Schneider 50k set.

Template extraction needs atom maps; the bundled Schneider 50k reactions have none. RXNMapper
(Schwaller et al., Sci. Adv. 2021; an ALBERT transformer whose weights ship inside its PyPI
wheel) maps them. Mapping is slow on a CPU (about 9 reactions/s on one core), so the mapped
Schneider set is computed once with :func:`map_reactions_to_file` and shipped as package data
(``data/schneider50k_mapped.tsv.gz``, provenance in ``data/SCHNEIDER50K_MAPPED.md``).

RXNMapper 0.4 requires ``transformers<5``; where the environment has transformers 5 it has to
live in a separate environment (see docs/reaction-ood.md). It is imported lazily.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from chemassay.contract.errors import UserInputError, require
from chemassay.runtime.files import atomic_writer

PACKAGE_DATA = Path(__file__).resolve().parent / "data"
SCHNEIDER_MAPPED_FILE = PACKAGE_DATA / "schneider50k_mapped.tsv.gz"
MAPPED_COLUMNS = ("rxn", "mapped_rxn", "confidence", "error")


@dataclass(frozen=True)
class MappedReaction:
    """One reaction and its atom-mapped form (``mapped_rxn`` empty when mapping failed)."""

    rxn: str
    mapped_rxn: str
    confidence: float
    error: str = ""


def _mapper(threads: int):
    require("rxnmapper", "mapping", "atom mapping with RXNMapper")
    torch = require("torch", "torch", "atom mapping with RXNMapper")
    torch.set_num_threads(max(1, threads))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from rxnmapper import RXNMapper

    return RXNMapper()


def map_with_rxnmapper(
    reactions: Sequence[str],
    *,
    batch_size: int = 16,
    threads: int = 1,
    on_batch: Callable[[list[MappedReaction]], None] | None = None,
) -> list[MappedReaction]:
    """Atom-map ``reactions`` (reaction SMILES, reagents anywhere) with RXNMapper.

    Reactions are sorted by length before batching so little padding is wasted; the
    result keeps the input order. A batch that fails (e.g. a reaction over the model's 512
    tokens) is retried one reaction at a time, so one bad reaction only fails itself and
    is returned with ``error`` set. ``on_batch`` receives each finished batch (used to
    checkpoint long runs).
    """
    mapper = _mapper(threads)
    order = sorted(range(len(reactions)), key=lambda i: len(reactions[i]))
    results: list[MappedReaction | None] = [None] * len(reactions)
    for start in range(0, len(order), batch_size):
        indices = order[start:start + batch_size]
        batch = [reactions[i] for i in indices]
        try:
            outputs = _map_batch(mapper, batch)
        except Exception:  # retry singly so one reaction cannot sink its batch
            outputs = [_map_one(mapper, rxn) for rxn in batch]
        for i, mapped in zip(indices, outputs, strict=True):
            results[i] = mapped
        if on_batch is not None:
            on_batch(outputs)
    return [r for r in results if r is not None]


def _map_batch(mapper, batch: list[str]) -> list[MappedReaction]:
    out = mapper.get_attention_guided_atom_maps(batch, canonicalize_rxns=False)
    return [MappedReaction(rxn, o["mapped_rxn"], float(o["confidence"])) for rxn, o in zip(batch, out, strict=True)]


def _map_one(mapper, rxn: str) -> MappedReaction:
    try:
        return _map_batch(mapper, [rxn])[0]
    except Exception as exc:  # recorded per reaction, never dropped
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return MappedReaction(rxn, "", 0.0, f"{type(exc).__name__}: {reason}"[:200])


def read_mapped_file(path: str | os.PathLike) -> dict[str, MappedReaction]:
    """Read a mapped-reaction table (TSV, optionally gzipped) into ``{rxn: MappedReaction}``."""
    target = Path(path)
    if not target.is_file():
        raise UserInputError(f"{target}: no such mapped-reaction file")
    opener = gzip.open if target.suffix == ".gz" else open
    table: dict[str, MappedReaction] = {}
    with opener(target, "rt", encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = [c for c in ("rxn", "mapped_rxn") if c not in (reader.fieldnames or [])]
        if missing:
            raise UserInputError(f"{target}: missing column(s) {missing}; expected {list(MAPPED_COLUMNS)}")
        for row in reader:
            table[row["rxn"]] = MappedReaction(
                row["rxn"], row["mapped_rxn"], float(row.get("confidence") or 0.0), row.get("error") or ""
            )
    return table


def write_mapped_rows(handle: io.TextIOBase, rows: Iterable[MappedReaction]) -> None:
    """Append mapped rows to an open TSV handle (tab and newline never occur in SMILES)."""
    for row in rows:
        handle.write(f"{row.rxn}\t{row.mapped_rxn}\t{row.confidence:.6g}\t{row.error}\n")


def map_reactions_to_file(
    reactions: Sequence[str],
    out_path: str | os.PathLike,
    *,
    batch_size: int = 16,
    threads: int = 1,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """Map the distinct ``reactions`` with RXNMapper into a gzipped TSV, resumably.

    Work goes into ``OUT.partial.tsv`` batch by batch; a rerun skips reactions already
    there, so an interrupted run loses at most one batch. When everything is mapped the
    rows are written in input order to ``out_path`` (gzip, fixed mtime so the bytes are
    reproducible) and the partial file is removed.
    """
    target = Path(out_path)
    partial = target.with_name(target.name.replace(".gz", "") + ".partial.tsv")
    distinct = list(dict.fromkeys(reactions))
    done: dict[str, MappedReaction] = read_mapped_file(partial) if partial.is_file() else {}
    todo = [r for r in distinct if r not in done]
    if todo:
        new_file = not partial.is_file()
        with open(partial, "a", encoding="utf-8") as handle:
            if new_file:
                handle.write("\t".join(MAPPED_COLUMNS) + "\n")

            def checkpoint(batch: list[MappedReaction]) -> None:
                write_mapped_rows(handle, batch)
                handle.flush()
                if progress is not None:
                    progress(len(batch))

            map_with_rxnmapper(todo, batch_size=batch_size, threads=threads, on_batch=checkpoint)
        done = read_mapped_file(partial)
    with atomic_writer(target, "wb", encoding=None) as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as zipped:
            text = io.TextIOWrapper(zipped, encoding="utf-8", newline="")
            text.write("\t".join(MAPPED_COLUMNS) + "\n")
            write_mapped_rows(text, (done[r] for r in distinct))
            text.flush()
            text.detach()
    partial.unlink(missing_ok=True)
    return target


@lru_cache(maxsize=1)
def schneider_mapped() -> dict[str, MappedReaction]:
    """The shipped RXNMapper mapping of the Schneider 50k set, keyed by the original ``rxn``."""
    if not SCHNEIDER_MAPPED_FILE.is_file():
        raise UserInputError(
            f"{SCHNEIDER_MAPPED_FILE}: the mapped Schneider 50k file is missing from this install; "
            "reinstall chemassay or run 'chemassay reaction-ood map' to rebuild it"
        )
    return read_mapped_file(SCHNEIDER_MAPPED_FILE)


def _looks_mapped(text: str) -> bool:
    return isinstance(text, str) and ":" in text and "[" in text and ">" in text


def mapped_reactions_for(frame, maps: str = "auto") -> tuple[list[str | None], str]:
    """Atom-mapped reaction SMILES for each row of a reaction table, and where they came from.

    ``maps`` is ``auto`` (a ``mapped_rxn_smiles`` column; else reactions that already carry
    maps; else the shipped Schneider 50k mapping, looked up by ``source_rxn_smiles`` or
    ``rxn_smiles``/``rxn``), ``schneider`` (the shipped mapping only), ``none`` (the table's
    own maps only) or the path of a mapped-reaction TSV written by ``reaction-ood map``.
    Rows without a mapping get ``None``.
    """
    columns = [str(c) for c in frame.columns]
    if "mapped_rxn_smiles" in columns and maps in ("auto", "none"):
        values = [v if isinstance(v, str) and v else None for v in frame["mapped_rxn_smiles"].tolist()]
        return values, "column mapped_rxn_smiles"
    key_column = next((c for c in ("source_rxn_smiles", "rxn_smiles", "rxn", "reaction") if c in columns), None)
    if key_column is None:
        raise UserInputError(f"the reaction table has no reaction column (columns: {columns})")
    keys = frame[key_column].astype(str).tolist()
    own = [k if _looks_mapped(k) else None for k in keys]
    if maps == "none" or (maps == "auto" and all(v is not None for v in own)):
        return own, f"atom maps in column {key_column}"
    if maps in ("auto", "schneider"):
        table, source = schneider_mapped(), "shipped RXNMapper mapping of Schneider 50k"
    else:
        table, source = read_mapped_file(maps), f"mapping file {maps}"
    out: list[str | None] = []
    for key, mapped in zip(keys, own, strict=True):
        if mapped is not None:
            out.append(mapped)
            continue
        found = table.get(key)
        out.append(found.mapped_rxn if found is not None and found.mapped_rxn else None)
    return out, f"{source} (by {key_column})"
