"""MOSES-style splits of any molecule set: a random test set and a held-out scaffold test set.

MOSES holds out a random subset of Bemis–Murcko scaffolds: every molecule with one of those
scaffolds goes to the *scaffold test* set, so a model trained on the rest never saw them;
the remaining molecules are split at random into train and test. :func:`scaffold_split`
does the same on any SMILES list:

1. parse every SMILES (unparseable ones are skipped with their reason) and, by default,
   drop repeats of a molecule already seen (same canonical SMILES), reporting each;
2. compute each molecule's Bemis–Murcko scaffold (RDKit ``MurckoScaffold``, canonical
   SMILES, as MOSES' ``compute_scaffold``); acyclic molecules have the empty scaffold and
   are never held out (they share no ring system to generalize to);
3. shuffle the distinct scaffolds (sorted first, so the input order does not matter) with
   ``seed`` and hold out scaffolds in that order until the held-out molecules reach
   ``scaffold_test_fraction`` of the valid molecules (the last scaffold may overshoot);
4. shuffle the other molecules with the same generator and take ``test_fraction`` of the
   valid molecules as the test set; the rest is the training set.

:func:`write_split` writes ``train.csv``, ``test.csv``, ``test_scaffolds.csv`` (one
``SMILES`` column, input order kept), ``skipped.csv`` and a ``manifest.json`` with the sizes,
seed, configuration, versions and sha256 of every file.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rdkit import Chem
from rdkit.Chem.Scaffolds import MurckoScaffold

from chemassay.chem.molecules import InvalidSmiles
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import current_versions
from chemassay.runtime.files import atomic_write_text, sha256_file
from chemassay.runtime.parallel import Failure, parallel_map
from chemassay.suites.generation.filters import parse_like_moses


def murcko_scaffold(molecule: str | Chem.Mol) -> str:
    """Canonical SMILES of the Bemis–Murcko scaffold (``""`` for an acyclic molecule).

    Raises :class:`~chemassay.chem.molecules.InvalidSmiles` for unparseable SMILES.
    """
    mol = molecule if isinstance(molecule, Chem.Mol) else parse_like_moses(molecule)
    return Chem.MolToSmiles(MurckoScaffold.GetScaffoldForMol(mol))


def _identity_and_scaffold(smiles: str) -> tuple[str, str]:
    mol = parse_like_moses(smiles)
    return Chem.MolToSmiles(mol), murcko_scaffold(mol)


@dataclass
class ScaffoldSplit:
    """Indices (into the input list, ascending) of each part, and what was left out.

    ``scaffolds`` holds each input's scaffold (``None`` when skipped); ``skipped`` one
    record per left-out input: ``index``, ``smiles``, ``reason``.
    """

    train: list[int]
    test: list[int]
    test_scaffolds: list[int]
    scaffolds: list[str | None]
    held_out_scaffolds: list[str]
    skipped: list[dict] = field(default_factory=list)
    config: dict = field(default_factory=dict)

    @property
    def sizes(self) -> dict[str, int]:
        return {"train": len(self.train), "test": len(self.test), "test_scaffolds": len(self.test_scaffolds)}


def scaffold_split(
    smiles: Sequence[str],
    *,
    test_fraction: float = 0.1,
    scaffold_test_fraction: float = 0.1,
    seed: int = 0,
    deduplicate: bool = True,
    n_jobs: int = 1,
    show_progress: bool | None = None,
) -> ScaffoldSplit:
    """Split ``smiles`` into train / test / scaffold test as described in the module docs."""
    for name, value in (("test_fraction", test_fraction), ("scaffold_test_fraction", scaffold_test_fraction)):
        if not 0.0 <= value < 1.0:
            raise UserInputError(f"--{name.replace('_', '-')} must be in [0, 1), got {value}")
    if test_fraction + scaffold_test_fraction >= 1.0:
        raise UserInputError("--test-fraction plus --scaffold-test-fraction must be below 1")
    results = parallel_map(
        _identity_and_scaffold, list(smiles), n_jobs=n_jobs, description="scaffolds",
        show_progress=show_progress,
    )
    scaffolds: list[str | None] = [None] * len(results)
    skipped: list[dict] = []
    first_seen: dict[str, int] = {}
    valid: list[int] = []
    for index, result in enumerate(results):
        if isinstance(result, Failure):
            reason = result.message
            if result.error_type == InvalidSmiles.__name__:
                reason = reason.split(": ", 1)[-1]
            skipped.append({"index": index, "smiles": smiles[index], "reason": f"invalid SMILES: {reason}"})
            continue
        identity, scaffold = result
        if deduplicate:
            if identity in first_seen:
                skipped.append({
                    "index": index, "smiles": smiles[index],
                    "reason": f"duplicate of input {first_seen[identity]}",
                })
                continue
            first_seen[identity] = index
        scaffolds[index] = scaffold
        valid.append(index)

    rng = np.random.default_rng(seed)
    distinct = sorted({scaffolds[i] for i in valid if scaffolds[i]})
    members: dict[str, list[int]] = {}
    for index in valid:
        if scaffolds[index]:
            members.setdefault(scaffolds[index], []).append(index)
    target_scaffold = round(scaffold_test_fraction * len(valid))
    held_out: list[str] = []
    held_indices: set[int] = set()
    for position in rng.permutation(len(distinct)):
        if len(held_indices) >= target_scaffold:
            break
        scaffold = distinct[position]
        held_out.append(scaffold)
        held_indices.update(members[scaffold])
    rest = np.array([i for i in valid if i not in held_indices], dtype=np.int64)
    n_test = min(round(test_fraction * len(valid)), len(rest))
    shuffled = rest[rng.permutation(len(rest))]
    test = sorted(shuffled[:n_test].tolist())
    train = sorted(shuffled[n_test:].tolist())
    config = {
        "test_fraction": test_fraction,
        "scaffold_test_fraction": scaffold_test_fraction,
        "seed": seed,
        "deduplicate": deduplicate,
        "scaffold": "Bemis-Murcko (RDKit MurckoScaffold.GetScaffoldForMol, canonical SMILES)",
    }
    return ScaffoldSplit(
        train=train, test=test, test_scaffolds=sorted(held_indices), scaffolds=scaffolds,
        held_out_scaffolds=sorted(held_out), skipped=skipped, config=config,
    )


def _csv_text(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def _line_of(skipped: dict, lines: Sequence[int] | None) -> int:
    if skipped.get("line") is not None:  # rows the file reader itself could not use
        return skipped["line"]
    return lines[skipped["index"]] if lines is not None else skipped["index"] + 1


def write_split(
    split: ScaffoldSplit,
    smiles: Sequence[str],
    out_dir: str | os.PathLike,
    *,
    lines: Sequence[int] | None = None,
    input_path: str | os.PathLike | None = None,
) -> Path:
    """Write the split files and ``manifest.json`` into ``out_dir``; return the manifest path.

    ``lines`` maps input indices to line numbers of the source file (for ``skipped.csv``).
    Every file is written atomically; the manifest lists each file's rows and sha256.
    """
    target = Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    parts = {"train.csv": split.train, "test.csv": split.test, "test_scaffolds.csv": split.test_scaffolds}
    files: dict[str, dict] = {}
    for name, indices in parts.items():
        atomic_write_text(target / name, _csv_text(["SMILES"], [[smiles[i]] for i in indices]))
        files[name] = {"rows": len(indices), "sha256": sha256_file(target / name)}
    skipped_rows = [[_line_of(s, lines), s["smiles"], s["reason"]] for s in split.skipped]
    atomic_write_text(target / "skipped.csv", _csv_text(["line", "smiles", "reason"], skipped_rows))
    files["skipped.csv"] = {"rows": len(skipped_rows), "sha256": sha256_file(target / "skipped.csv")}
    held_text = "".join(f"{s}\n" for s in split.held_out_scaffolds)
    atomic_write_text(target / "held_out_scaffolds.txt", held_text)
    files["held_out_scaffolds.txt"] = {
        "rows": len(split.held_out_scaffolds), "sha256": sha256_file(target / "held_out_scaffolds.txt"),
    }
    manifest = {
        "kind": "chemassay generation scaffold split",
        "input": None if input_path is None else {"path": str(input_path), "sha256": sha256_file(input_path)},
        "n_input": len(smiles),
        "n_skipped": len(split.skipped),
        "sizes": split.sizes,
        "n_scaffolds": len({s for s in split.scaffolds if s}),
        "n_held_out_scaffolds": len(split.held_out_scaffolds),
        "n_acyclic": sum(1 for s in split.scaffolds if s == ""),
        "seed": split.config.get("seed"),
        "config": split.config,
        "files": files,
        "versions": current_versions(),
    }
    manifest_path = target / "manifest.json"
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2) + "\n")
    return manifest_path
