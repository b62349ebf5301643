"""Checking a dataset folder written by ``build``/``build-all``/``build-uspto-t``.

Every file listed in ``manifest.json`` must exist with the recorded line count and sha256;
for ChemAlgebra datasets every ``src``/``tgt`` line pair must also parse and balance
(same atoms of every element, implicit hydrogens included, and the same net charge). Every
distinct species is parsed once (in parallel); lines are then checked by table lookups.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from chemassay.chem.formula import MAX_COUNT_DIGITS, FormulaError
from chemassay.chem.molecules import InvalidSmiles
from chemassay.contract.errors import UserInputError
from chemassay.data.readers import iter_lines
from chemassay.runtime.files import sha256_file
from chemassay.runtime.parallel import Failure, parallel_map
from chemassay.suites.stoichiometry.species import SpeciesTable
from chemassay.suites.stoichiometry.variants import MANIFEST

_COEFFICIENT = re.compile(r"^\{(\d+)\}")


@dataclass
class VerifyReport:
    """Outcome of a verification: problems found (each with file, line, reason) and counts."""

    manifest: dict
    files_checked: int = 0
    pairs_checked: int = 0
    problems: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def read_manifest(folder: Path) -> dict:
    """The manifest of a dataset folder; a clear error when missing or unreadable."""
    path = folder / MANIFEST
    if not path.is_file():
        raise UserInputError(f"{folder}: no {MANIFEST} (not a folder written by 'chemassay stoichiometry build')")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserInputError(f"{path}: not valid JSON ({exc.msg})") from None


def _species_texts(lines: list[str]) -> set[str]:
    found: set[str] = set()
    for line in lines:
        for chunk in line.split("."):
            match = _COEFFICIENT.match(chunk)
            found.add(chunk[match.end():] if match else chunk)
    return found


def _parse_species(texts: list[str], encoding: str) -> list[tuple[str, tuple | str]]:
    table = SpeciesTable(encoding)
    parsed = []
    for text in texts:
        try:
            item = table.get(text)
            parsed.append((text, (item.counts, item.charge)))
        except (InvalidSmiles, FormulaError, ValueError) as exc:
            parsed.append((text, str(exc)))
    return parsed


def _side_totals(line: str, species: dict[str, tuple | str]) -> tuple[dict[str, int], int]:
    totals: dict[str, int] = {}
    charge = 0
    for position, chunk in enumerate(line.split("."), start=1):
        match = _COEFFICIENT.match(chunk)
        if not match or not chunk[match.end():]:
            raise ValueError(f"item #{position} {chunk[:60]!r} is not {{n}}SPECIES")
        if len(match.group(1)) > MAX_COUNT_DIGITS:
            raise ValueError(f"item #{position}: coefficient has {len(match.group(1)):,} digits (at most {MAX_COUNT_DIGITS})")
        coefficient = int(match.group(1))
        found = species[chunk[match.end():]]
        if isinstance(found, str):
            raise ValueError(f"item #{position}: {found}")
        if coefficient < 1:
            raise ValueError(f"item #{position}: coefficient {coefficient}")
        counts, species_charge = found
        for element, count in counts:
            totals[element] = totals.get(element, 0) + coefficient * count
        charge += coefficient * species_charge
    return totals, charge


def _check_balance(folder: Path, pairs: list[tuple[str, str]], encoding: str, n_jobs: int,
                   max_problems: int) -> tuple[int, list[dict]]:
    """Parse every distinct species once (in parallel), then check every line pair."""
    contents = {name: [line for _, line in iter_lines(folder / name)] for pair in pairs for name in pair}
    texts: set[str] = set()
    for lines in contents.values():
        texts |= _species_texts(lines)
    ordered = sorted(texts)
    size = max(1, len(ordered) // max(1, 8 * n_jobs))
    batches = [ordered[i:i + size] for i in range(0, len(ordered), size)]
    species: dict[str, tuple | str] = {}
    for batch, result in zip(batches, parallel_map(partial(_parse_species, encoding=encoding), batches,
                                                   n_jobs=n_jobs, chunk_size=1, description="parsing species"),
                             strict=True):
        if isinstance(result, Failure):
            species.update(dict.fromkeys(batch, f"internal error: {result}"))
        else:
            species.update(result)
    problems: list[dict] = []
    checked = 0
    for src_name, tgt_name in pairs:
        for number, (src_line, tgt_line) in enumerate(zip(contents[src_name], contents[tgt_name], strict=False), start=1):
            checked += 1
            try:
                balanced = _side_totals(src_line, species) == _side_totals(tgt_line, species)
            except ValueError as exc:
                problems.append({"file": src_name, "line": number, "reason": f"unreadable: {exc}"})
                continue
            if not balanced:
                problems.append({"file": src_name, "line": number, "reason": "not balanced"})
            if len(problems) >= max_problems:
                return checked, problems
    return checked, problems


def verify_folder(folder: Path, *, n_jobs: int = 1, max_problems: int = 1000) -> VerifyReport:
    """Check checksums, line counts and (ChemAlgebra datasets) the balance of every line."""
    manifest = read_manifest(folder)
    report = VerifyReport(manifest)
    files = manifest.get("files", {})
    for name, expected in files.items():
        path = folder / name
        if not path.is_file():
            report.problems.append({"file": name, "line": None, "reason": "missing"})
            continue
        report.files_checked += 1
        actual = sha256_file(path)
        if actual != expected.get("sha256"):
            report.problems.append({"file": name, "line": None,
                                    "reason": f"sha256 {actual} differs from the manifest's {expected.get('sha256')}"})
        lines = sum(1 for _ in iter_lines(path))
        if lines != expected.get("lines"):
            report.problems.append({"file": name, "line": None,
                                    "reason": f"{lines} lines, manifest says {expected.get('lines')}"})
    if manifest.get("kind") == "chemalgebra":
        pairs = [
            (name, "tgt-" + name[len("src-"):])
            for name in sorted(files)
            if name.startswith("src-") and (folder / name).is_file() and (folder / ("tgt-" + name[len("src-"):])).is_file()
        ]
        encoding = manifest.get("config", {}).get("encoding", "smiles")
        checked, problems = _check_balance(folder, pairs, encoding, n_jobs, max_problems)
        report.pairs_checked = checked
        report.problems.extend(problems)
    return report
