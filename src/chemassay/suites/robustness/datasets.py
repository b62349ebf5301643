"""Molecule tables: the shipped AMORE originals and user CSV/TSV files of SMILES.

A :class:`MoleculeTable` is an ordered list of (id, SMILES) rows read from one file, with
the file's line number of every row so that problems can be reported precisely. Readers
accept comma- or tab-separated files (the AMORE ``.csv`` files are tab-separated, with
CRLF line endings and a leading unnamed index column) and find the SMILES column by name.
SMILES are kept exactly as written: 484 ChEBI-20 originals contain a literal double
backslash (``\\\\``), which RDKit reads as the same molecule, and AMORE feeds these strings
to the models unchanged, so we do too.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from pathlib import Path

from chemassay.data import dataset_file
from chemassay.errors import UserInputError
from chemassay.runtime.files import sha256_file, sha256_text

SHIPPED: dict[str, tuple[str, str]] = {
    "chebi20": ("amore-chebi20", "chebi20_original.tsv"),
    "isomers": ("amore-isomers", "qm9_isomers_original.tsv"),
}
"""``--dataset`` names → (registry dataset, file) of the molecule lists shipped with chemassay."""

SMILES_COLUMNS = ("smiles", "SMILES", "Smiles", "canonical_smiles", "mol", "molecule")
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

    def __len__(self) -> int:
        return len(self.smiles)

    def checksum(self) -> str:
        """sha256 of the SMILES column (one per line): the key of cached embeddings."""
        return sha256_text("\n".join(self.smiles))

    def file_sha256(self) -> str | None:
        """sha256 of the file the table was read from (``None`` for in-memory tables)."""
        return sha256_file(self.path) if self.path is not None else None


def _delimiter(header: str, path: Path) -> str:
    if "\t" in header:
        return "\t"
    if path.suffix.lower() in {".tsv", ".tab"}:
        return "\t"
    return ","


def read_table(path: str | os.PathLike) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and ``(line number, fields)`` rows of a comma- or tab-separated text file.

    The delimiter is a tab when the header line contains one, else a comma; CRLF line
    endings and a UTF-8 byte-order mark are accepted. Raises a user error for a missing,
    empty or undecodable file.
    """
    target = Path(path)
    if not target.is_file():
        raise UserInputError(f"{target}: no such file")
    try:
        text = target.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserInputError(f"{target}: not UTF-8 text ({exc.reason}); save it as UTF-8 CSV/TSV") from None
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise UserInputError(f"{target}: empty file; expected a header line with a SMILES column")
    delimiter = _delimiter(lines[0], target)
    quoting = csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
    reader = csv.reader(io.StringIO(text), delimiter=delimiter, quoting=quoting)
    header = [h.strip() for h in next(reader)]
    rows = []
    for fields in reader:
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        rows.append((reader.line_num, fields))
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

    A row whose SMILES field is missing or empty is malformed: it is left out of the table
    and returned with its line number, so callers can report it. SMILES are not parsed
    here (parsing happens where the molecule is used, with its own error reporting).
    """
    target = Path(path)
    header, rows = read_table(target)
    smiles_at = _find_column(header, smiles_column, SMILES_COLUMNS, target, "SMILES")
    id_at = _find_column(header, id_column, ID_COLUMNS, target, "id")
    keep_at = {name: header.index(name) for name in keep_columns if name in header}
    table = MoleculeTable([], [], [], path=target, name=target.name, columns={k: [] for k in keep_at})
    malformed: list[tuple[int, str]] = []
    for line, fields in rows:
        if smiles_at is None or smiles_at >= len(fields):
            malformed.append((line, f"row has {len(fields)} fields, no SMILES field"))
            continue
        text = fields[smiles_at].strip()
        if not text:
            malformed.append((line, "empty SMILES"))
            continue
        table.smiles.append(text)
        table.ids.append(fields[id_at].strip() if id_at is not None and id_at < len(fields) else str(len(table.ids)))
        table.lines.append(line)
        for name, at in keep_at.items():
            table.columns[name].append(fields[at] if at < len(fields) else "")
    if not table.smiles and not malformed:
        raise UserInputError(f"{target}: no data rows under the header")
    return table, malformed


def shipped_dataset(name: str) -> MoleculeTable:
    """The shipped original molecules of ``chebi20`` (3,300) or ``isomers`` (918)."""
    if name not in SHIPPED:
        raise UserInputError(f"unknown dataset {name!r}; choose one of {', '.join(SHIPPED)}")
    registry_name, filename = SHIPPED[name]
    table, malformed = read_molecules(dataset_file(registry_name, filename))
    if malformed:
        raise UserInputError(f"shipped dataset {name} has malformed rows: {malformed[:3]}")
    table.name = name
    return table


def shipped_dataset_ref(name: str) -> tuple[str, str]:
    """``(registry name, sha256)`` of a shipped dataset file, for the result's ``dataset``."""
    registry_name, filename = SHIPPED[name]
    return registry_name, sha256_file(dataset_file(registry_name, filename))
