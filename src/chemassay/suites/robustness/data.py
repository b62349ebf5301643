"""Molecule tables of the robustness suite and its dataset loaders.

A :class:`MoleculeTable` is an ordered list of (id, SMILES) rows read from one file, with
the file's line number of every row so that problems can be reported precisely. Files are
comma- or tab-separated (the AMORE files are tab-separated, with CRLF line endings) with a
header naming the SMILES column; they are decoded by the one text reader of chemassay
(:func:`chemassay.data.readers.read_text`: gzip, binary, non-UTF-8 and truncated files give
one-line errors). SMILES are kept exactly as written: 484 ChEBI-20 originals contain a
literal double backslash (``\\\\``), which RDKit reads as the same molecule, and AMORE feeds
these strings to the models unchanged, so we do too.

**Empty cells.** As everywhere in chemassay, a row whose SMILES cell is empty is kept as an
empty (invalid) SMILES and its line is listed in :attr:`MoleculeTable.empty_lines`: it stays
aligned with its partner row and is reported as a skipped item where it is used, never
silently dropped. A row too short to have a SMILES field at all is malformed and returned
separately with its line number.

Loaders named by the dataset registry (``chemassay.load_dataset``):

* :func:`load_amore` — ``amore-chebi20`` (alias ``chebi20``, 3,300 molecules) and
  ``amore-isomers`` (alias ``isomers``, 918 QM9 isomers): a :class:`MoleculeTable`;
* :func:`load_solubility` — ``solubility-huuskonen`` (alias ``solubility``; parts ``train``
  and ``test``): a :class:`MoleculeTable` whose ``columns`` hold ``name``, ``logS``,
  ``solubility_class`` and ``split``.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import DatasetRef
from chemassay.data import dataset_file, get_spec
from chemassay.data.readers import read_text
from chemassay.runtime.files import sha256_file, sha256_text

SMILES_COLUMNS = ("smiles", "SMILES", "Smiles", "canonical_smiles", "smi", "mol", "molecule")
ID_COLUMNS = ("CID", "cid", "cids", "id", "ID", "name")


@dataclass
class MoleculeTable:
    """Rows of a molecule file: ids, SMILES text, source line numbers and extra columns."""

    smiles: list[str]
    ids: list[str]
    lines: list[int]
    path: Path | None = None
    name: str = ""
    columns: dict[str, list[str]] = field(default_factory=dict)
    empty_lines: list[int] = field(default_factory=list)
    """Lines whose SMILES cell is empty (kept in :attr:`smiles` as ``""``)."""

    def __len__(self) -> int:
        return len(self.smiles)

    def checksum(self) -> str:
        """sha256 of the SMILES column (one per line): the key of cached embeddings."""
        return sha256_text("\n".join(self.smiles))

    def file_sha256(self) -> str | None:
        """sha256 of the file the table was read from (``None`` for in-memory tables)."""
        return sha256_file(self.path) if self.path is not None else None

    def subset(self, keep: Sequence[bool]) -> MoleculeTable:
        """The rows where ``keep`` is true (columns included), same path and name."""
        chosen = [i for i, flag in enumerate(keep) if flag]
        empty = set(self.empty_lines)
        return MoleculeTable(
            [self.smiles[i] for i in chosen], [self.ids[i] for i in chosen], [self.lines[i] for i in chosen],
            path=self.path, name=self.name,
            columns={name: [values[i] for i in chosen] for name, values in self.columns.items()},
            empty_lines=[self.lines[i] for i in chosen if self.lines[i] in empty],
        )

    @classmethod
    def from_smiles(cls, smiles: Sequence[str], ids: Sequence[str] | None = None, name: str = "in-memory") -> MoleculeTable:
        """An in-memory table (row ``i`` gets id ``str(i)`` and line ``i + 1`` unless ``ids`` are given)."""
        texts = [str(s) for s in smiles]
        if ids is not None and len(ids) != len(texts):
            raise UserInputError(f"{len(ids)} ids for {len(texts)} SMILES; give one id per molecule")
        return cls(texts, [str(i) for i in ids] if ids is not None else [str(i) for i in range(len(texts))],
                   list(range(1, len(texts) + 1)), name=name,
                   empty_lines=[i + 1 for i, s in enumerate(texts) if not s.strip()])


def _delimiter(header: str, path: Path) -> str:
    if "\t" in header:
        return "\t"
    name = path.name.lower().removesuffix(".gz")
    if name.endswith((".tsv", ".tab")):
        return "\t"
    return ","


def read_table(path: str | os.PathLike) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and ``(line number, fields)`` rows of a comma- or tab-separated text file.

    The delimiter is a tab when the header line contains one, else a comma; CRLF line
    endings, a UTF-8 byte-order mark and gzip compression are accepted. Raises a one-line
    :class:`UserInputError` for a missing, empty, binary, non-UTF-8 or truncated file.
    """
    target = Path(path)
    if not target.exists():
        raise UserInputError(f"{target}: no such file")
    if target.is_dir():
        raise UserInputError(f"{target}: is a directory, expected a CSV/TSV file")
    text = read_text(target).removeprefix("\ufeff")
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise UserInputError(f"{target}: empty file; expected a header line with a SMILES column")
    delimiter = _delimiter(lines[0], target)
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    reader = csv.reader(io.StringIO(text), delimiter=delimiter, quoting=quoting)
    try:
        header = [h.strip() for h in next(reader)]
        rows = []
        for fields in reader:
            if not fields or not any(f.strip() for f in fields):
                continue
            rows.append((reader.line_num, fields))
    except csv.Error as exc:
        raise UserInputError(f"{target}: not a readable CSV/TSV file (line {reader.line_num}: {exc})") from None
    return header, rows


def _find_column(header: list[str], wanted: str | None, candidates: tuple[str, ...], path: Path, what: str) -> int | None:
    if wanted is not None:
        if wanted not in header:
            raise UserInputError(f"{path}: no column {wanted!r} (columns: {', '.join(h or '<unnamed>' for h in header)})")
        return header.index(wanted)
    for name in candidates:
        if name in header:
            return header.index(name)
    lowered = [h.lower() for h in header]
    for name in candidates:
        if name.lower() in lowered:
            return lowered.index(name.lower())
    if what == "SMILES":
        raise UserInputError(
            f"{path}: no SMILES column found (columns: {', '.join(h or '<unnamed>' for h in header)}); "
            "name it 'SMILES' or pass --smiles-column"
        )
    return None


def read_molecules(
    path: str | os.PathLike, *, smiles_column: str | None = None, id_column: str | None = None,
    keep_columns: tuple[str, ...] = (),
) -> tuple[MoleculeTable, list[tuple[int, str]]]:
    """Read a molecule file; return the table and the malformed rows ``(line, reason)``.

    A row with an empty SMILES cell stays in the table as ``""`` (see the module doc); a
    row too short to have a SMILES field is malformed: it is left out and returned with its
    line number, so callers can report it. SMILES are not parsed here (parsing happens where
    the molecule is used, with its own error reporting). ``keep_columns`` (plus every column
    when it is ``("*",)``) are kept in :attr:`MoleculeTable.columns`.
    """
    target = Path(path)
    header, rows = read_table(target)
    smiles_at = _find_column(header, smiles_column, SMILES_COLUMNS, target, "SMILES")
    id_at = _find_column(header, id_column, ID_COLUMNS, target, "id")
    names = [h for h in header if h] if keep_columns == ("*",) else list(keep_columns)
    keep_at = {name: header.index(name) for name in names if name in header}
    table = MoleculeTable([], [], [], path=target, name=target.name, columns={k: [] for k in keep_at})
    malformed: list[tuple[int, str]] = []
    for line, fields in rows:
        if smiles_at is None or smiles_at >= len(fields):
            malformed.append((line, f"row has {len(fields)} fields, no SMILES field"))
            continue
        text = fields[smiles_at].strip()
        if not text:
            table.empty_lines.append(line)
        table.smiles.append(text)
        table.ids.append(fields[id_at].strip() if id_at is not None and id_at < len(fields) else str(len(table.ids)))
        table.lines.append(line)
        for name, at in keep_at.items():
            table.columns[name].append(fields[at] if at < len(fields) else "")
    if not table.smiles and not malformed:
        raise UserInputError(f"{target}: no data rows under the header")
    return table, malformed


def _registry_file(name: str) -> Path:
    spec = get_spec(name)
    return dataset_file(spec.name, spec.files[0].name)


def load_amore(name: str = "amore-chebi20", part: str | None = None, **options) -> MoleculeTable:
    """Loader of ``amore-chebi20`` (3,300 ChEBI-20 test molecules) and ``amore-isomers``
    (918 QM9 isomers, all C7H10O2): the shipped originals as a :class:`MoleculeTable`
    (ids are PubChem CIDs; the isomers keep their ``name`` column).

    >>> from chemassay import load_dataset
    >>> len(load_dataset("isomers")), load_dataset("chebi20").ids[0]
    (918, '5354212')
    """
    from chemassay.data import get_spec

    spec = get_spec(name)
    if part is not None:
        raise UserInputError(f"dataset {spec.name!r} has no parts (asked for {part!r})")
    if options:
        raise UserInputError(f"dataset {spec.name!r} takes no options (got {', '.join(sorted(options))})")
    table, malformed = read_molecules(_registry_file(spec.name), keep_columns=("name",))
    if malformed or table.empty_lines:
        raise UserInputError(f"shipped dataset {spec.name} has malformed rows: {(malformed or table.empty_lines)[:3]}")
    if not table.columns.get("name"):
        table.columns.pop("name", None)
    table.name = spec.name
    return table


def load_solubility(name: str = "solubility-huuskonen", part: str | None = None, **options) -> MoleculeTable:
    """Loader of ``solubility-huuskonen``: 1,282 molecules with measured logS, a 3-class
    label and the RDKit book's split; ``part="train"`` (1,025) or ``"test"`` (257) selects
    one side. ``columns`` holds ``name``, ``logS``, ``solubility_class`` and ``split``.

    >>> from chemassay import load_dataset
    >>> test = load_dataset("solubility", part="test")
    >>> len(test), test.columns["logS"][0]
    (257, '-3.68')
    """
    from chemassay.data import get_spec

    spec = get_spec(name)
    if options:
        raise UserInputError(f"dataset {spec.name!r} takes no options (got {', '.join(sorted(options))})")
    if part is not None and part not in spec.parts:
        raise UserInputError(f"dataset {spec.name!r} has no part {part!r}; parts: {', '.join(spec.parts)}")
    table, malformed = read_molecules(_registry_file(spec.name), id_column="id", keep_columns=("*",))
    if malformed:
        raise UserInputError(f"shipped dataset {spec.name} has malformed rows: {malformed[:3]}")
    for column in ("id", "SMILES"):
        table.columns.pop(column, None)
    if part is not None:
        table = table.subset([value == part for value in table.columns["split"]])
    table.name = spec.name if part is None else f"{spec.name}/{part}"
    return table


def molecule_table(
    source: str | os.PathLike | Sequence[str] | MoleculeTable, *, smiles_column: str | None = None,
    keep_columns: tuple[str, ...] = (),
) -> tuple[MoleculeTable, list[tuple[int, str]], str]:
    """A molecule table from a registered dataset name or alias (``chebi20``, ``isomers``,
    ...), a CSV/TSV path, a list of SMILES or a table; returns ``(table, malformed rows,
    kind)`` with ``kind`` one of ``dataset``, ``file``, ``memory``.

    A name that is also an existing file is read as the file.
    """
    if isinstance(source, MoleculeTable):
        return source, [], "file" if source.path is not None else "memory"
    if isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        from chemassay.data.registry import get_spec, is_dataset_name, load_dataset

        if is_dataset_name(text) and not Path(text).exists():
            loaded = load_dataset(text)
            if not isinstance(loaded, MoleculeTable):
                raise UserInputError(
                    f"dataset {get_spec(text).name!r} is not a molecule list this suite reads; "
                    "use chebi20, isomers, solubility or a CSV/TSV file with a SMILES column"
                )
            return loaded, [], "dataset"
        path = Path(text)
        if not path.exists() and not any(sep in text for sep in "/\\") and "." not in text:
            from chemassay.data.registry import list_specs

            names = [s.name for s in list_specs() if "robustness" in s.suites]
            raise UserInputError(f"{text}: no such file, and not a dataset name (robustness datasets: {', '.join(names)})")
        table, malformed = read_molecules(path, smiles_column=smiles_column, keep_columns=keep_columns)
        return table, malformed, "file"
    if isinstance(source, Sequence) and all(isinstance(s, str) for s in source):
        return MoleculeTable.from_smiles(list(source)), [], "memory"
    raise UserInputError(
        f"molecules must be a dataset name, a CSV/TSV path or a list of SMILES strings, got {type(source).__name__}"
    )


AMORE_DATASETS = {"amore-chebi20": "chebi20", "amore-isomers": "isomers"}
"""Registered dataset → its name in AMORE's published tables (the ``dataset`` setting)."""


def amore_setting(dataset: str | None) -> dict[str, str]:
    """The ``Result.setting`` of a retrieval run on ``dataset`` (a registered name), in the
    words of AMORE's tables: ``{"dataset": "chebi20"}`` or ``{"dataset": "isomers"}``; empty
    for other data (a user's file), which no published row was measured on."""
    name = AMORE_DATASETS.get(dataset or "")
    return {"dataset": name} if name else {}


def dataset_ref(table: MoleculeTable, kind: str):
    """The result's ``dataset`` for a table from :func:`molecule_table`."""
    if kind == "memory":
        return DatasetRef(name=table.name or "in-memory", sha256=table.checksum())
    name = table.name if kind == "dataset" else (table.path.name if table.path is not None else table.name)
    return DatasetRef(name=name, sha256=table.file_sha256())
