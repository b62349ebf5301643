"""Training pairs for the sequence-to-sequence models: reading them and augmenting them.

:func:`read_pairs` turns what a user points ``chemassay models train seq2seq --train`` at into
``(source, target)`` text pairs:

* ``task="reactions"`` — reaction predictors: source = reactants and reagents (the paper's
  models see them merged), target = products, each molecule as canonical SMILES without atom
  maps. From a registered dataset (``uspto-15k``: its ``train`` part, ``valid`` for
  validation), a reaction-ood split folder (``train.parquet``/``valid.parquet``) or part, a
  table with ``reactants``/``products`` or ``rxn_smiles`` columns, or a text file of reaction
  SMILES (``reactants>reagents>products``, anything after the first space ignored, as the
  edits field of USPTO-15K).
* ``task="bags"`` — ChemAlgebra: a dataset folder written by ``chemassay stoichiometry
  build`` (``src-<split>.txt``/``tgt-<split>.txt``, ``split`` ``train`` or ``train_cross``;
  the validation files ``src-valid.txt``/``src-valid_cross.txt`` beside them), or a folder of
  ``build-uspto-t`` (plain SMILES).
* ``task="pairs"`` — any texts: a table with ``source``/``target`` columns (CSV, TSV,
  Parquet, JSON lines) or a folder of ``src-<split>.txt``/``tgt-<split>.txt``.

:func:`augment_pairs` adds randomized SMILES of each source (atoms renumbered by a seeded
permutation, molecules shuffled), the augmentation of the Molecular Transformer.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from rdkit import Chem

from chemassay.chem import TokenizationError, rdkit_log_silenced, tokenize_smiles, try_canonical
from chemassay.contract.errors import UserInputError
from chemassay.data.readers import iter_lines, read_table
from chemassay.models.vocab import guess_tokenizer

TASKS = ("reactions", "bags", "pairs")
Pair = tuple[str, str]


@dataclass
class PairSet:
    """Pairs read from one place, what they are and what could not be read."""

    pairs: list[Pair]
    name: str
    problems: list[str] = field(default_factory=list)
    encoding: str | None = None
    """``smiles`` or ``formula`` for ChemAlgebra folders (from their manifest)."""


def _canonical_side(text: str) -> str | None:
    molecules = [m for m in text.split(".") if m]
    if not molecules:
        return None
    canonical = [try_canonical(m) for m in molecules]
    if any(c is None for c in canonical):
        return None
    return ".".join(canonical)


def reaction_pair(line: str) -> Pair | None:
    """``(reactants.reagents, products)`` of one reaction SMILES, each molecule canonical
    without atom maps (``None`` when a side is empty or does not parse)."""
    text = line.strip().split()[0] if line.strip() else ""
    if text.count(">") != 2:
        return None
    reactants, reagents, products = text.split(">")
    source = _canonical_side(".".join(p for p in (reactants, reagents) if p))
    target = _canonical_side(products)
    if source is None or target is None:
        return None
    return source, target


def _frame_pairs(frame, name: str) -> PairSet:
    columns = set(frame.columns)
    problems: list[str] = []
    pairs: list[Pair] = []
    if {"source", "target"} <= columns:
        for number, (source, target) in enumerate(zip(frame["source"], frame["target"], strict=True), 1):
            if not isinstance(source, str) or not isinstance(target, str) or not source or not target:
                problems.append(f"{name} row {number}: empty source or target")
                continue
            pairs.append((source, target))
        return PairSet(pairs, name, problems)
    if {"reactants", "products"} <= columns:
        texts = (f"{r}>>{p}" for r, p in zip(frame["reactants"], frame["products"], strict=True))
    elif "rxn_smiles" in columns:
        texts = iter(frame["rxn_smiles"])
    else:
        raise UserInputError(f"{name}: no source/target, reactants/products or rxn_smiles columns "
                             f"(it has {', '.join(map(str, frame.columns))})")
    for number, text in enumerate(texts, 1):
        pair = reaction_pair(str(text)) if isinstance(text, str) else None
        if pair is None:
            problems.append(f"{name} row {number}: not a readable reaction")
        else:
            pairs.append(pair)
    return PairSet(pairs, name, problems)


def _line_pairs(lines: Sequence[str], name: str) -> PairSet:
    pairs, problems = [], []
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pair = reaction_pair(line)
        if pair is None:
            problems.append(f"{name} line {number}: not a readable reaction")
        else:
            pairs.append(pair)
    return PairSet(pairs, name, problems)


def _folder_split_pairs(folder: Path, split: str) -> PairSet:
    source, target = folder / f"src-{split}.txt", folder / f"tgt-{split}.txt"
    if not source.is_file() or not target.is_file():
        raise UserInputError(f"{folder}: no src-{split}.txt/tgt-{split}.txt pair (a folder written by "
                             "'chemassay stoichiometry build')")
    sources = [line.replace(" ", "") for _, line in iter_lines(source)]
    targets = [line.replace(" ", "") for _, line in iter_lines(target)]
    if len(sources) != len(targets):
        raise UserInputError(f"{source} has {len(sources)} lines but {target} has {len(targets)}")
    problems = [f"{source.name} line {i}: empty" for i, (s, t) in enumerate(zip(sources, targets, strict=True), 1) if not s or not t]
    pairs = [(s, t) for s, t in zip(sources, targets, strict=True) if s and t]
    encoding = None
    manifest = folder / "manifest.json"
    if manifest.is_file():
        try:
            encoding = json.loads(manifest.read_text(encoding="utf-8")).get("config", {}).get("encoding")
        except (json.JSONDecodeError, AttributeError):
            encoding = None
    return PairSet(pairs, f"{folder}/src-{split}.txt", problems, encoding)


def _read_table(path: Path):
    if path.suffix == ".jsonl" or path.name.endswith(".jsonl.gz"):
        import pandas as pd

        from chemassay.data.readers import iter_lines

        rows = []
        for number, line in iter_lines(path):
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                raise UserInputError(f"{path} line {number}: not JSON") from None
        return pd.DataFrame.from_records(rows)
    return read_table(path)


def read_pairs(where: str | os.PathLike, task: str, *, split: str = "train", limit: int | None = None) -> PairSet:
    """The ``(source, target)`` pairs at ``where`` for ``task`` (see the module docstring).

    ``split`` names the part to read: ``train``, ``valid``, ``train_cross``... (a dataset
    part, a reaction-ood split part, or the ``src-<split>.txt`` files of a folder);
    ``limit`` keeps the first pairs (a registered dataset then reads no more rows than that).
    """
    found = _read_pairs(where, task, split, limit)
    if limit is not None:
        found.pairs = found.pairs[:limit]
    return found


def _read_pairs(where: str | os.PathLike, task: str, split: str, limit: int | None) -> PairSet:
    if task not in TASKS:
        raise UserInputError(f"unknown task {task!r}; choose one of {', '.join(TASKS)}")
    path = Path(where)
    if not path.exists():
        from chemassay.data.registry import get_spec

        try:
            get_spec(str(where))
        except (UserInputError, KeyError):
            raise UserInputError(f"{where}: no such file, folder or registered dataset") from None
        from chemassay.data.registry import load_dataset

        data = load_dataset(str(where), part=split, **({"limit": limit} if limit else {}))
        name = f"{where}:{split}"
        if isinstance(data, list):
            return _line_pairs([str(x) for x in data], name)
        return _frame_pairs(data, name)
    if path.is_dir():
        if (path / f"src-{split}.txt").is_file():
            return _folder_split_pairs(path, split)
        for candidate in (path / f"{split}.parquet", path / f"{split}.csv", path / f"{split}.txt"):
            if candidate.is_file():
                return _read_pairs(candidate, task, split, limit)
        raise UserInputError(f"{path}: neither src-{split}.txt/tgt-{split}.txt nor {split}.parquet/.csv/.txt here")
    suffixes = "".join(path.suffixes[-2:]).lower()
    if any(s in suffixes for s in (".parquet", ".csv", ".tsv", ".jsonl")):
        return _frame_pairs(_read_table(path), str(path))

    return _line_pairs([line for _, line in iter_lines(path)], str(path))


def random_smiles(smiles: str, rng: np.random.Generator) -> str:
    """A randomized (non-canonical) SMILES of the same molecules: atoms renumbered by a
    permutation drawn from ``rng``, molecules in a shuffled order. Text RDKit cannot read is
    returned unchanged."""
    molecules = [m for m in smiles.split(".") if m]
    written = []
    with rdkit_log_silenced():
        for text in molecules:
            mol = Chem.MolFromSmiles(text)
            if mol is None or mol.GetNumAtoms() == 0:
                written.append(text)
                continue
            order = [int(i) for i in rng.permutation(mol.GetNumAtoms())]
            written.append(Chem.MolToSmiles(Chem.RenumberAtoms(mol, order), canonical=False))
    order = rng.permutation(len(written))
    return ".".join(written[i] for i in order)


def _random_bag(bag: str, rng: np.random.Generator) -> str:
    entries = [e for e in bag.split(".") if e]
    written = []
    for entry in entries:
        match = re.match(r"^(\{[0-9]+\})?(.*)$", entry)
        prefix, species = match.group(1) or "", match.group(2)
        written.append(prefix + random_smiles(species, rng))
    order = rng.permutation(len(written))
    return ".".join(written[i] for i in order)


def augment_pairs(pairs: Sequence[Pair], copies: int, tokenizer: str, seed: int) -> list[Pair]:
    """``pairs`` followed by ``copies`` randomized versions of each source (same target).

    Only SMILES sources (tokenizers ``smiles`` and ``bag``) are augmented; for other
    tokenizers the pairs come back unchanged. Pair ``i``'s ``j``-th copy uses the generator
    seeded with ``(seed, i, j)``, so the augmented set is a function of the seed alone.
    """
    if copies <= 0 or tokenizer not in ("smiles", "bag"):
        return list(pairs)
    augmented = list(pairs)
    for copy in range(1, copies + 1):
        for index, (source, target) in enumerate(pairs):
            rng = np.random.default_rng([seed, index, copy])
            if tokenizer == "bag":
                augmented.append((_random_bag(source, rng), target))
            else:
                augmented.append((random_smiles(source, rng), target))
    return augmented


def default_valid(where: str | os.PathLike, split: str) -> tuple[str | os.PathLike, str] | None:
    """Where the validation pairs of a training source are, as ``(where, split)``: the
    ``valid`` part of a registered dataset, ``src-valid.txt`` (``valid_cross`` for
    ``train_cross``) or ``valid.parquet`` beside the training files; ``None`` for a lone file."""
    path = Path(where)
    valid_split = split.replace("train", "valid") if "train" in split else "valid"
    if not path.exists():
        return where, valid_split
    if path.is_dir():
        if (path / f"src-{valid_split}.txt").is_file():
            return path, valid_split
        if any((path / f"{valid_split}{ext}").is_file() for ext in (".parquet", ".csv", ".txt")):
            return path, valid_split
        return None
    for ext in (".parquet", ".csv", ".txt"):
        if path.name == f"{split}{ext}" and (path.parent / f"{valid_split}{ext}").is_file():
            return path.parent / f"{valid_split}{ext}", valid_split
    return None


def tokenizer_for(task: str, pairs: PairSet) -> str:
    """The tokenizer a task's pairs need: ``smiles`` for reactions, ``bag``/``formula`` for
    ChemAlgebra bags (from the folder's manifest, else guessed), guessed for other pairs."""
    texts = [s for s, _ in pairs.pairs[:100]] + [t for _, t in pairs.pairs[:100]]
    if task == "reactions":
        return "smiles"
    if task == "bags" and pairs.encoding == "formula":
        return "formula"
    if task == "bags" and pairs.encoding == "smiles":
        return "bag" if any(t.startswith("{") for t in texts) else "smiles"
    return guess_tokenizer(texts)


# ------------------------------------------------------------------------------------------
# Source order and target rooting (the ``source_order`` and ``target_root`` config settings)


@lru_cache(maxsize=200_000)
def _heavy_atoms(smiles: str) -> int:
    with rdkit_log_silenced():
        mol = Chem.MolFromSmiles(smiles, sanitize=False)
    return mol.GetNumHeavyAtoms() if mol is not None else 0


def order_molecules(text: str, order: str = "largest-first") -> str:
    """The molecules of ``text`` (``.``-separated SMILES) in ``order``: ``largest-first`` sorts
    them by heavy atoms, largest first, ties by their text; ``as-given`` keeps them."""
    if order == "as-given":
        return text
    molecules = [m for m in text.split(".") if m]
    return ".".join(sorted(molecules, key=lambda m: (-_heavy_atoms(m), m)))


def _common_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def aligned_molecule(product: str, sources: Sequence[Sequence[str]]) -> str:
    """``product`` (one molecule) written from the atom whose SMILES shares the longest start
    with one of ``sources`` (token lists of source molecules); the canonical SMILES when no
    root does better, the text unchanged when it does not parse."""
    from chemassay.chem import rdkit_log_silenced, tokenize_smiles

    with rdkit_log_silenced():
        mol = Chem.MolFromSmiles(product)
        if mol is None:
            return product
        best_text = Chem.MolToSmiles(mol)
        best = max((_common_prefix(tokenize_smiles(best_text), s) for s in sources), default=0)
        seen = {best_text}
        for atom in range(mol.GetNumAtoms()):
            text = Chem.MolToSmiles(mol, rootedAtAtom=atom)
            if text in seen:
                continue
            seen.add(text)
            tokens = tokenize_smiles(text)
            score = max((_common_prefix(tokens, s) for s in sources), default=0)
            if score > best:
                best, best_text = score, text
    return best_text


def aligned_product(source: str, product: str) -> str:
    """Every molecule of ``product`` rooted to continue a molecule of ``source`` as far as it
    can (:func:`aligned_molecule`): the same molecules, written so that the product reads as
    an edited copy of the source (what ``target_root="aligned"`` trains on)."""
    sources = []
    for molecule in source.split("."):
        try:
            sources.append(tokenize_smiles(molecule))
        except TokenizationError:
            continue
    return ".".join(aligned_molecule(m, sources) for m in product.split(".") if m)


def arrange_pairs(pairs: Sequence[Pair], *, source_order: str = "as-given", target_root: str = "canonical",
                  tokenizer: str = "smiles") -> list[Pair]:
    """``pairs`` with their sources in ``source_order`` and their targets rooted by
    ``target_root``. Both apply to reaction SMILES (tokenizer ``smiles``); pairs of other
    tokenizers (ChemAlgebra bags, formulas, text) come back as given, so one config serves
    every task."""
    if (source_order == "as-given" and target_root == "canonical") or tokenizer != "smiles":
        return list(pairs)
    arranged = []
    for source, target in pairs:
        source = order_molecules(source, source_order)
        if target_root == "aligned":
            target = aligned_product(source, target)
        arranged.append((source, target))
    return arranged
