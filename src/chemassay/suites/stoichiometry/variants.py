"""The ChemAlgebra datasets (eight variants) and the USPTO-T1/T2 probes.

ChemAlgebra variant = encoding (``smiles``: canonical SMILES species, ``formula``: Hill
formulas) x task (``t1``, ``t2``) x augmentation (``x1``, ``x5``: each reaction written once
or five times with fresh coefficients). Starting from a balanced reaction with species
multiplicities ``m_R`` (reactants, co-reactants included), ``m_G`` (reagents) and ``m_P``
(products, by-products included):

* ``t1``: one factor ``k`` drawn from the coefficient set ``S``; every species gets
  ``k * m`` on its side, reagents on both sides.
* ``t2`` (the paper's Appendix C): every species ``s`` draws its own ``c_s`` from ``S``
  (one draw per species, shared across roles, as in the authors' notebook); with
  ``k_hat = min_s c_s`` the reaction runs ``k_hat`` times: the left side holds
  ``c_s (m_R + m_G) + (c_s - k_hat) m_P`` of ``s`` and the right side
  ``c_s (m_P + m_G) + (c_s - k_hat) m_R``; the excess ``c_s - k_hat`` is copied to the other
  side, so left minus right is ``k_hat (sum m_R v - sum m_P v) = 0``: balanced. With
  ``khat="reference"`` ``k_hat`` is drawn uniformly from ``1..min_s c_s`` instead, as the
  authors' notebook does.

Coefficients come from ``S_in = 1..5`` (train, valid, test_in) and ``S_out = 6..10``
(test_out). The cross-distribution split halves the training reactions (input order): the
first half draws from ``S_in`` and the second from ``S_out`` in ``train_cross`` (and
``valid_cross``, on the validation reactions), and swapped in ``test_cross`` (the training
reactions again). Test files are written once per reaction (``test_aug``, default 1, as the
authors' evaluation files ``test_in_x1``/``test_out_x1``); train and valid files ``aug``
times. The order of molecules on each side is shuffled.

Every random draw comes from a numpy ``Generator`` seeded with the sha256 of the seed, the
task, the augmentation, the ``k_hat`` rule and the split (not the encoding), so the SMILES
and formula variants of one seed hold the same coefficients, in the same order, line by
line. Lines are generated in vectorized blocks, and every line written is checked for
balance (element-count matrix, charge included); an unbalanced line is an internal error.
(USPTO-T1/T2 use Python's ``random.Random`` seeded with the seed and the split.)
File names follow the paper's Appendix G: ``src-train.txt``, ``tgt-train.txt``,
``src-valid.txt``, ``src-test_in.txt``, ``src-test_out.txt``, ``src-train_cross.txt``,
``src-valid_cross.txt``, ``src-test_cross.txt`` (and the ``tgt-`` files), with
``manifest.json`` (sizes, seed, config, sha256 of every file).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from chemassay import __version__
from chemassay.runtime.files import atomic_write_text, atomic_writer
from chemassay.runtime.parallel import Failure, parallel_map
from chemassay.suites.stoichiometry.prepare import BalancedReaction, ProcessedSource
from chemassay.suites.stoichiometry.species import Species

S_IN = (1, 2, 3, 4, 5)
S_OUT = (6, 7, 8, 9, 10)
ENCODINGS = ("smiles", "formula")
TASKS = ("t1", "t2")
AUGMENTATIONS = (1, 5)
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class VariantConfig:
    """One ChemAlgebra variant and its generation settings."""

    encoding: str
    task: str
    aug: int
    seed: int = 0
    s_in: tuple[int, ...] = S_IN
    s_out: tuple[int, ...] = S_OUT
    khat: str = "min"
    test_aug: int = 1

    def __post_init__(self) -> None:
        if self.encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {ENCODINGS}, got {self.encoding!r}")
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        if self.aug < 1 or self.test_aug < 1:
            raise ValueError("augmentation counts must be at least 1")
        if self.khat not in ("min", "reference"):
            raise ValueError(f"khat must be 'min' or 'reference', got {self.khat!r}")
        if not self.s_in or not self.s_out or min(self.s_in + self.s_out) < 1:
            raise ValueError("coefficient sets must be non-empty sets of positive integers")

    @property
    def name(self) -> str:
        """Folder name used by ``build-all``: ``smiles_t1_x1``."""
        return f"{self.encoding}_{self.task}_x{self.aug}"


# split name -> (source split, coefficient set of the first half, of the second half, test?)
SPLIT_PLAN: dict[str, tuple[str, str, str, bool]] = {
    "train": ("train", "in", "in", False),
    "valid": ("valid", "in", "in", False),
    "test_in": ("test", "in", "in", True),
    "test_out": ("test", "out", "out", True),
    "train_cross": ("train", "in", "out", False),
    "valid_cross": ("valid", "in", "out", False),
    "test_cross": ("train", "out", "in", True),
}


@dataclass
class CompiledSplit:
    """Reactions of one split in a compact, picklable form for the writers.

    ``reactions[i]`` is a tuple of ``(species index, m_R, m_G, m_P)``; species texts, element
    counts and charges are in parallel lists.
    """

    smiles: list[str] = field(default_factory=list)
    formulas: list[str] = field(default_factory=list)
    counts: list[tuple[tuple[str, int], ...]] = field(default_factory=list)
    charges: list[int] = field(default_factory=list)
    reactions: list[tuple[tuple[int, int, int, int], ...]] = field(default_factory=list)

    def entry_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``offsets`` (reaction ``i`` owns entries ``offsets[i]:offsets[i+1]``) and the
        ``entries`` array (one row ``species, m_R, m_G, m_P`` per entry)."""
        sizes = np.fromiter((len(r) for r in self.reactions), dtype=np.int64, count=len(self.reactions))
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        entries = np.array([e for r in self.reactions for e in r], dtype=np.int64).reshape(-1, 4)
        return offsets, entries

    def isomer_reactions(self) -> np.ndarray:
        """Boolean per reaction: two of its species share a formula (merged when written as formulas)."""
        return np.array([len({self.formulas[e[0]] for e in r}) < len(r) for r in self.reactions], dtype=bool)

    def element_matrix(self) -> np.ndarray:
        """Species x (elements + charge) integer matrix, for vectorized balance checks."""
        elements = sorted({e for entry in self.counts for e, _ in entry})
        column = {e: i for i, e in enumerate(elements)}
        matrix = np.zeros((len(self.counts), len(elements) + 1), dtype=np.int64)
        for row, (entry, charge) in enumerate(zip(self.counts, self.charges, strict=True)):
            for element, count in entry:
                matrix[row, column[element]] = count
            matrix[row, -1] = charge
        return matrix


def compile_split(reactions: list[BalancedReaction], species: dict[str, Species]) -> CompiledSplit:
    """Turn balanced reactions into a :class:`CompiledSplit` (species indexed once)."""
    compiled = CompiledSplit()
    index: dict[str, int] = {}
    for reaction in reactions:
        roles: dict[str, list[int]] = {}
        for position, side in enumerate((reaction.reactants, reaction.reagents, reaction.products)):
            for key, multiplicity in side:
                roles.setdefault(key, [0, 0, 0])[position] += multiplicity
        entries = []
        for key, (m_r, m_g, m_p) in roles.items():
            number = index.get(key)
            if number is None:
                item = species[key]
                number = index[key] = len(compiled.smiles)
                compiled.smiles.append(item.smiles)
                compiled.formulas.append(item.formula)
                compiled.counts.append(item.counts)
                compiled.charges.append(item.charge)
            entries.append((number, m_r, m_g, m_p))
        compiled.reactions.append(tuple(entries))
    return compiled


def _seed_text(config: VariantConfig, split: str) -> str:
    return f"chemassay-stoichiometry/{config.seed}/{config.task}/x{config.aug}/{config.khat}/{split}"


def _generator(text: str) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little"))


@dataclass
class AugmentedBlock:
    """Coefficients of a block of generated lines, one row per (line, species) entry.

    ``line`` is the line index of each entry (non-decreasing), ``species`` its species index,
    ``left``/``right`` the coefficient on each side (0: absent from that side), and
    ``left_key``/``right_key`` random keys ordering the molecules within each line.
    """

    line: np.ndarray
    species: np.ndarray
    left: np.ndarray
    right: np.ndarray
    left_key: np.ndarray
    right_key: np.ndarray


def augment_block(
    data: CompiledSplit, reactions: np.ndarray, coefficient_sets: list[np.ndarray], set_of_line: np.ndarray,
    task: str, khat: str, rng: np.random.Generator, arrays: tuple[np.ndarray, np.ndarray] | None = None,
) -> AugmentedBlock:
    """Draw coefficients for lines of compiled reactions (``reactions[i]`` for line ``i``).

    ``set_of_line[i]`` picks the coefficient set of line ``i``. ``t1``: one draw ``k`` per
    line, ``k * m`` everywhere; ``t2``: one draw per species, ``k_hat`` the line minimum (or
    uniform in ``1..min`` for ``khat="reference"``), excess copied across (module doc).
    ``arrays`` are ``data.entry_arrays()``, computed once by callers drawing many blocks.
    """
    offsets, table = arrays if arrays is not None else data.entry_arrays()
    sizes = offsets[reactions + 1] - offsets[reactions]
    line = np.repeat(np.arange(len(reactions), dtype=np.int64), sizes)
    first_of_line = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    positions = np.repeat(offsets[reactions] - first_of_line, sizes) + np.arange(len(line), dtype=np.int64)
    flat = table[positions]
    species, m_r, m_g, m_p = flat[:, 0], flat[:, 1], flat[:, 2], flat[:, 3]
    if task == "t1":
        k = np.empty(len(reactions), dtype=np.int64)
        for number, values in enumerate(coefficient_sets):
            chosen = set_of_line == number
            k[chosen] = values[rng.integers(0, len(values), size=int(chosen.sum()))]
        c = k[line]
        left = c * (m_r + m_g)
        right = c * (m_p + m_g)
    else:
        c = np.empty(len(line), dtype=np.int64)
        entry_set = set_of_line[line]
        for number, values in enumerate(coefficient_sets):
            chosen = entry_set == number
            c[chosen] = values[rng.integers(0, len(values), size=int(chosen.sum()))]
        k_hat = np.minimum.reduceat(c, first_of_line) if len(c) else np.zeros(0, dtype=np.int64)
        if khat == "reference":
            k_hat = rng.integers(1, k_hat + 1)
        excess = c - k_hat[line]
        left = c * (m_r + m_g) + excess * m_p
        right = c * (m_p + m_g) + excess * m_r
    return AugmentedBlock(line, species, left, right, rng.random(len(line)), rng.random(len(line)))


def check_block_balance(block: AugmentedBlock, matrix: np.ndarray, lines: int) -> np.ndarray:
    """Indices of unbalanced lines in a block (empty when every line balances)."""
    starts = np.searchsorted(block.line, np.arange(lines))
    vectors = matrix[block.species]
    difference = np.add.reduceat(vectors * (block.left - block.right)[:, None], starts, axis=0)
    return np.nonzero(difference.any(axis=1))[0]


class _EntryTexts(dict):
    """``{n}X.`` or ``{n}X\\n`` texts by ``(species << 21) | (n << 1) | last``, formatted on first use."""

    def __init__(self, texts: list[str]) -> None:
        super().__init__()
        self.texts = texts

    def __missing__(self, code: int) -> str:
        end = "\n" if code & 1 else "."
        text = self[code] = f"{{{(code >> 1) & 0xFFFFF}}}{self.texts[code >> 21]}{end}"
        return text


def side_text(block: AugmentedBlock, side: str, entry_texts: _EntryTexts, lines: int,
              merge_lines: np.ndarray | None = None) -> str:
    """All lines of one side of a block, joined (each ends with a newline).

    Molecules within a line are ordered by the block's random keys. Lines flagged in
    ``merge_lines`` (isomers written as one formula) have equal texts merged.
    """
    coefficients = block.left if side == "left" else block.right
    keys = block.left_key if side == "left" else block.right_key
    present = np.nonzero(coefficients)[0]
    order = present[np.lexsort((keys[present], block.line[present]))]
    line_of = block.line[order]
    last = np.ones(len(order), dtype=np.int64)
    last[:-1] = line_of[1:] != line_of[:-1]
    codes = (block.species[order] << 21) | (coefficients[order] << 1) | last
    if merge_lines is None or not merge_lines.any():
        return "".join(map(entry_texts.__getitem__, codes.tolist()))
    pieces = []
    bounds = np.concatenate(([0], np.cumsum(np.bincount(line_of, minlength=lines))))
    flagged = np.nonzero(merge_lines)[0].tolist()
    start_line = 0
    for line in flagged + [lines]:
        run = codes[bounds[start_line]:bounds[line]]
        pieces.append("".join(map(entry_texts.__getitem__, run.tolist())))
        if line < lines:
            pieces.append(_merged_line(codes[bounds[line]:bounds[line + 1]].tolist(), entry_texts.texts))
        start_line = line + 1
    return "".join(pieces)


def _merged_line(codes: list[int], texts: list[str]) -> str:
    merged: dict[str, int] = {}
    for code in codes:
        text = texts[code >> 21]
        merged[text] = merged.get(text, 0) + ((code >> 1) & 0xFFFFF)
    return ".".join(f"{{{c}}}{t}" for t, c in merged.items()) + "\n"


class UnbalancedLineError(AssertionError):
    """A generated line is not balanced: a bug in the generator, never bad input."""


BLOCK_LINES = 20000


def _write_split(
    task: tuple[str, Path], config: VariantConfig, compiled: dict[str, CompiledSplit]
) -> dict[str, dict]:
    split, folder = task
    source, first, second, is_test = SPLIT_PLAN[split]
    data = compiled[source]
    sets = {"in": np.array(config.s_in, dtype=np.int64), "out": np.array(config.s_out, dtype=np.int64)}
    coefficient_sets = [sets[first], sets[second]]
    copies = config.test_aug if is_test else config.aug
    texts = data.smiles if config.encoding == "smiles" else data.formulas
    merge = config.encoding == "formula" and len(set(texts)) < len(texts)
    isomers = data.isomer_reactions() if merge else None
    arrays = data.entry_arrays()
    largest = max((m_r + m_g + m_p for entries in data.reactions for _, m_r, m_g, m_p in entries), default=0)
    if largest * max(config.s_in + config.s_out) >= 1 << 19:
        raise ValueError(f"{split}: coefficients would exceed 2**19 (a multiplicity of {largest})")
    entry_texts = _EntryTexts(texts)
    matrix = data.element_matrix()
    rng = _generator(_seed_text(config, split))
    total = len(data.reactions)
    line_reaction = np.repeat(np.arange(total, dtype=np.int64), copies)
    line_set = (line_reaction >= total // 2).astype(np.int64)
    src_path, tgt_path = folder / f"src-{split}.txt", folder / f"tgt-{split}.txt"
    src_hash, tgt_hash = hashlib.sha256(), hashlib.sha256()
    with atomic_writer(src_path) as src_out, atomic_writer(tgt_path) as tgt_out:
        for start in range(0, len(line_reaction), BLOCK_LINES):
            reactions = line_reaction[start:start + BLOCK_LINES]
            block = augment_block(
                data, reactions, coefficient_sets, line_set[start:start + BLOCK_LINES], config.task, config.khat, rng,
                arrays,
            )
            bad = check_block_balance(block, matrix, len(reactions))
            if len(bad):
                raise UnbalancedLineError(f"{split} line {start + int(bad[0]) + 1}: generated reaction is not balanced")
            merge_lines = isomers[reactions] if isomers is not None else None
            for side, handle, digest in (("left", src_out, src_hash), ("right", tgt_out, tgt_hash)):
                text = side_text(block, side, entry_texts, len(reactions), merge_lines)
                handle.write(text)
                digest.update(text.encode("utf-8"))
    lines = len(line_reaction)
    return {
        src_path.name: {"lines": lines, "sha256": src_hash.hexdigest()},
        tgt_path.name: {"lines": lines, "sha256": tgt_hash.hexdigest()},
    }


def _write_group(group: tuple[str, CompiledSplit, list[tuple[VariantConfig, str, Path]]]) -> list[dict[str, dict]]:
    """Write every (variant, split) drawn from one source split; the split travels once."""
    source, data, jobs = group
    return [_write_split((split, folder), config, {source: data}) for config, split, folder in jobs]


def processed_summary(processed: ProcessedSource) -> dict:
    """Per-split status counts of the input reactions, for manifests and results."""
    return {split: {"lines": len(outcomes), **processed.counts(split)} for split, outcomes in processed.outcomes.items()}


def build_variants(
    processed: ProcessedSource,
    configs: list[VariantConfig],
    folders: list[Path],
    *,
    source_info: dict,
    n_jobs: int = 1,
) -> list[dict]:
    """Write every split of every variant (one folder each) and their manifests.

    Needs the train, valid and test splits. Returns the manifests written.
    """
    compiled = {
        split: compile_split(processed.usable(split), processed.species) for split in ("train", "valid", "test")
    }
    # one task per (source split, encoding): each worker receives a split's reactions once
    groups: dict[tuple[str, str], list[tuple[VariantConfig, str, Path]]] = {}
    for config, folder in zip(configs, folders, strict=True):
        folder.mkdir(parents=True, exist_ok=True)
        for split, (source, *_rest) in SPLIT_PLAN.items():
            groups.setdefault((source, config.encoding), []).append((config, split, folder))
    ordered = sorted(groups.items(), key=lambda item: -len(compiled[item[0][0]].reactions) * len(item[1]))
    tasks = [(source, compiled[source], jobs) for (source, _), jobs in ordered]
    results = parallel_map(_write_group, tasks, n_jobs=n_jobs, chunk_size=1, description="writing datasets")
    failures = [r for r in results if isinstance(r, Failure)]
    if failures:
        raise RuntimeError(f"dataset writing failed: {failures[0]}")
    written: dict[Path, dict[str, dict]] = {}
    for (_, _, jobs), stats_list in zip(tasks, results, strict=True):
        for (_, _, folder), stats in zip(jobs, stats_list, strict=True):
            written.setdefault(folder, {}).update(stats)
    manifests = []
    for config, folder in zip(configs, folders, strict=True):
        files = written.get(folder, {})
        manifest = {
            "format": "chemassay-stoichiometry/chemalgebra-1",
            "kind": "chemalgebra",
            "variant": config.name,
            "config": {**asdict(config), "s_in": list(config.s_in), "s_out": list(config.s_out),
                       "cross_halves": "input order: first floor(n/2) reactions, then the rest"},
            "source": source_info,
            "library": processed.library.describe(),
            "max_byproducts": processed.config.max_byproducts,
            "reactions": processed_summary(processed),
            "used_reactions": {split: len(compiled[split].reactions) for split in compiled},
            "files": dict(sorted(files.items())),
            "chemassay_version": __version__,
        }
        atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")
        manifests.append(manifest)
    return manifests


TABLE2_KINDS = ("uspto", "uspto-bal", "uspto-t1", "uspto-t2")
"""ChemAlgebra Table 2's test sets, named as the paper's published tables name them (``variant``)."""


def _write_pair(folder: Path, name: str, sources: list[str], targets: list[str], files: dict[str, dict]) -> None:
    """Write ``src-NAME.txt`` and ``tgt-NAME.txt`` (one line each per reaction) and record each
    file's line count and SHA-256 in ``files`` (the manifest's ``files``)."""
    for prefix, lines in (("src", sources), ("tgt", targets)):
        text = "".join(lines)
        path = folder / f"{prefix}-{name}.txt"
        atomic_write_text(path, text)
        files[path.name] = {"lines": len(lines), "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def write_uspto_plain(processed: ProcessedSource, kind: str, folder: Path, *, source_info: dict) -> dict:
    """Write Table 2's plain test sets in plain SMILES: ``uspto`` (every valid reaction as read:
    reactants and reagents -> products) or ``uspto-bal`` (the balanced and re-balanced
    reactions, co-reactants and by-products added: USPTO-BAL). A molecule is written once per
    copy; molecules keep their order. ``processed`` needs ``keep_original`` for ``uspto``.
    """
    if kind not in ("uspto", "uspto-bal"):
        raise ValueError(f"kind must be 'uspto' or 'uspto-bal', got {kind!r}")
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, dict] = {}
    for split in processed.outcomes:
        reactions = processed.as_read(split) if kind == "uspto" else processed.usable(split)
        sources, targets = [], []
        for reaction in reactions:
            left = [key for key, m in reaction.reactants + reaction.reagents for _ in range(m)]
            right = [key for key, m in reaction.products for _ in range(m)]
            sources.append(".".join(left) + "\n")
            targets.append(".".join(right) + "\n")
        _write_pair(folder, "test" if split == "all" else split, sources, targets, files)
    manifest = {
        "format": "chemassay-stoichiometry/uspto-1",
        "kind": kind,
        "config": {"kind": kind, "encoding": "smiles"},
        "source": source_info,
        "library": processed.library.describe(),
        "max_byproducts": processed.config.max_byproducts,
        "reactions": processed_summary(processed),
        "files": dict(sorted(files.items())),
        "chemassay_version": __version__,
    }
    atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest


def write_uspto_t(
    processed: ProcessedSource, kind: str, folder: Path, *, seed: int, source_info: dict
) -> dict:
    """Write USPTO-T1 or USPTO-T2 (paper Section 3) in plain SMILES with duplicates.

    ``t1``: every molecule doubled on its side (source: reactants and reagents; target:
    products). ``t2``: one reactant molecule, drawn at random, written once more on the
    source side and added to the target. Every valid reaction is used, balanced or not
    (these probe standard reaction predictors). Molecules are shuffled with the seed.
    """
    if kind not in ("t1", "t2"):
        raise ValueError(f"kind must be 't1' or 't2', got {kind!r}")
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, dict] = {}
    for split in processed.outcomes:
        rng = random.Random(f"chemassay-stoichiometry/uspto-{kind}/{seed}/{split}")
        sources, targets = [], []
        for reaction in processed.as_read(split):
            left = [key for key, m in reaction.reactants + reaction.reagents for _ in range(m)]
            right = [key for key, m in reaction.products for _ in range(m)]
            if kind == "t1":
                left, right = left * 2, right * 2
            else:
                extra = rng.choice([key for key, m in reaction.reactants for _ in range(m)])
                left.append(extra)
                right.append(extra)
            rng.shuffle(left)
            rng.shuffle(right)
            sources.append(".".join(left) + "\n")
            targets.append(".".join(right) + "\n")
        _write_pair(folder, "test" if split == "all" else split, sources, targets, files)
    manifest = {
        "format": "chemassay-stoichiometry/uspto-t-1",
        "kind": f"uspto-{kind}",
        "config": {"kind": kind, "seed": seed, "encoding": "smiles"},
        "source": source_info,
        "reactions": processed_summary(processed),
        "files": dict(sorted(files.items())),
        "chemassay_version": __version__,
    }
    atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2) + "\n")
    return manifest
