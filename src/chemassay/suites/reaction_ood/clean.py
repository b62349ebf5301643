"""Cleaning of reaction tables as in Bradshaw et al., Section S1.1.

Each reaction is standardized (CXSMILES extension and anything after the first space dropped,
atom maps and isotope labels removed, every molecule canonicalized by RDKit with stereo kept,
reagents merged into the reactants), then filtered by the paper's six rules, checked in this
order and counted under the first rule a reaction fails (the order of the reference code,
cheapest first):

=================================  ===========================================================
report key                         a reaction is removed when ...
=================================  ===========================================================
``too_few_reactant_heavy_atoms``   its reactants (with multiplicity) hold fewer than 5 heavy atoms
``no_carbon_in_reactants``         no reactant contains a carbon atom
``too_many_tokens``                the reactants or the products, written ``.``-joined, have
                                   ``max_tokens`` (800) SMILES tokens or more
``no_reactant_with_2_bonds``       no reactant molecule has at least 2 bonds
``no_new_product_heavy_enough``    no product that is absent from the reactants has at least 2
                                   heavy atoms
``protonation_only``               after neutralizing common charges, every product is among
                                   the reactants (a (de)protonation), or there is no product
=================================  ===========================================================

Reactions that cannot be read are counted under ``unparsable`` and listed with their row and
the reason. Survivors are deduplicated on the canonical (reactant multiset, product multiset)
pair; ``dedup="paper"`` keeps, among copies, the record with a class code, then the earliest
year, then the first in the file; ``dedup="reference"`` reproduces the reference code's
sequential rule exactly (see ``docs/reaction-ood-data.md`` for the one case where they differ),
``dedup="none"`` keeps every copy.

Public API: :class:`CleanConfig`, :func:`standardize_reaction`, :func:`filter_reason`,
:func:`clean_reactions` (in memory) and :func:`clean_file` (streaming, bounded memory).
``clean_reactions(df) -> (clean_df, report)``: ``clean_df`` has the standard columns of
:mod:`~chemassay.suites.reaction_ood.io` with ``rxn_smiles`` replaced by the canonical
``reactants>>products``, plus ``reactants`` and ``products`` (canonical molecules, ``.``-joined,
sorted, repeats kept), ``source_rxn_smiles`` (the reaction as read) and ``n_records`` (how many
input rows held this reaction).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from rdkit import Chem

from chemassay.chem.molecules import (
    InvalidSmiles,
    parse_smiles,
    rdkit_log_silenced,
    safe_mol_from_smiles,
)
from chemassay.chem.tokenizer import SMILES_TOKEN_PATTERN, TokenizationError
from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import plain_file_mode
from chemassay.runtime.parallel import Failure, parallel_map
from chemassay.runtime.progress import progress_task
from chemassay.suites.reaction_ood.io import STANDARD_COLUMNS, iter_reactions

_TOKEN_RE = re.compile(SMILES_TOKEN_PATTERN)

RULES = (
    "too_few_reactant_heavy_atoms",
    "no_carbon_in_reactants",
    "too_many_tokens",
    "no_reactant_with_2_bonds",
    "no_new_product_heavy_enough",
    "protonation_only",
)
DEDUP_MODES = ("paper", "reference", "none")
CLEAN_COLUMNS = (
    "rxn_smiles", "reactants", "products", "document_id", "authors", "year", "class_code",
    "assignee", "source_row", "source_rxn_smiles", "n_records",
)


@dataclass(frozen=True)
class CleanConfig:
    """Thresholds of the filter rules (defaults: the paper's) and the dedup rule."""

    min_reactant_heavy_atoms: int = 5
    min_bonds_in_a_reactant: int = 2
    min_new_product_heavy_atoms: int = 2
    max_tokens: int = 800
    remove_isotopes: bool = True
    keep_stereo: bool = True
    dedup: str = "paper"

    def __post_init__(self) -> None:
        if self.dedup not in DEDUP_MODES:
            raise UserInputError(f"unknown dedup rule {self.dedup!r}; use one of {', '.join(DEDUP_MODES)}")
        if self.max_tokens < 1:
            raise UserInputError(f"max_tokens must be positive, got {self.max_tokens}")


@dataclass(eq=False)
class CleanReport(Mapping):
    """What cleaning did: rows read, removed per rule, duplicates, kept, and unreadable rows.

    Reads as a mapping of the counts (``report["duplicates"]``, ``dict(report)``); the listed
    unparsable rows are in :attr:`problems`, unreadable cells in :attr:`read_problems`.
    """

    rows_in: int = 0
    unparsable: int = 0
    removed: dict[str, int] = field(default_factory=lambda: {rule: 0 for rule in RULES})
    duplicates: int = 0
    rows_out: int = 0
    problems: list[dict] = field(default_factory=list)
    read_problems: list[dict] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Flat counts: rows in/out, unparsable, each rule, duplicates (stable keys)."""
        return {"rows_in": self.rows_in, "unparsable": self.unparsable, **self.removed,
                "duplicates": self.duplicates, "rows_out": self.rows_out}

    def __getitem__(self, key: str) -> int:
        return self.counts()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.counts())

    def __len__(self) -> int:
        return len(self.counts())

    def to_dict(self) -> dict:
        """JSON-ready form (counts plus the listed problems)."""
        return {**self.counts(), "problems": self.problems, "read_problems": self.read_problems}


# --------------------------------------------------------------------------------------
# Molecules (cached per process: solvents and reagents repeat across millions of reactions)

_CACHE_LIMIT = 400_000
# raw molecule text -> canonical SMILES; canonical SMILES -> properties (see molecule_properties)
_canonical_cache: dict[tuple[str, bool, bool], str] = {}
_props_cache: dict[str, tuple[int, bool, int, int, str]] = {}
_CHARGED_ATOM = None
_CARBON = None
_ISOTOPE_TEXT = re.compile(r"\[\d")
_CHARGE_TEXT = re.compile(r"\[[^\]]*[+-]")
_quiet_depth = 0  # > 0 while a batch holds RDKit's logs blocked (one block per batch, not per molecule)


class _BadMolecule(ValueError):
    """A molecule of a reaction that RDKit cannot read (the reaction is counted and listed)."""


def _patterns():
    global _CHARGED_ATOM, _CARBON
    if _CHARGED_ATOM is None:
        # +1 with a hydrogen and no negative neighbour, or -1 with no positive neighbour:
        # the charges a (de)protonation adds or removes (RDKit Cookbook, "Neutralizing Molecules").
        _CHARGED_ATOM = Chem.MolFromSmarts("[+1!h0!$([*]~[-1,-2,-3,-4]),-1!$([*]~[+1,+2,+3,+4])]")
        _CARBON = Chem.MolFromSmarts("[#6]")
    return _CHARGED_ATOM, _CARBON


def _neutralized(mol: Chem.Mol, smiles: str) -> str:
    charged, _ = _patterns()
    matches = mol.GetSubstructMatches(charged)
    if not matches:
        return smiles
    editable = Chem.RWMol(mol)
    try:
        for (index,) in matches:
            atom = editable.GetAtomWithIdx(index)
            charge = atom.GetFormalCharge()
            hydrogens = atom.GetTotalNumHs()
            atom.SetFormalCharge(0)
            atom.SetNumExplicitHs(hydrogens - charge)
            atom.UpdatePropertyCache()
        return Chem.MolToSmiles(editable)
    except Exception:  # RDKit raises assorted types on odd valences; keep the molecule as is
        return smiles


def _token_count(smiles: str) -> int:
    tokens = _TOKEN_RE.findall(smiles)
    if sum(map(len, tokens)) != len(smiles):
        raise TokenizationError(smiles, 0)
    return len(tokens)


def _properties_of(mol: Chem.Mol, canonical: str) -> tuple[int, bool, int, int, str]:
    _, carbon = _patterns()
    try:
        tokens = _token_count(canonical)
    except TokenizationError:
        tokens = 10**9  # untokenizable text can never pass the length rule
    neutral = _neutralized(mol, canonical) if _CHARGE_TEXT.search(canonical) else canonical
    return (mol.GetNumHeavyAtoms(), mol.HasSubstructMatch(carbon), mol.GetNumBonds(), tokens, neutral)


def canonical_molecule(smiles: str, *, remove_isotopes: bool = True, stereo: bool = True) -> str:
    """Canonical SMILES of one molecule, atom maps (and isotopes) removed; raises on bad input.

    Parsing is RDKit's default (sanitized, explicit hydrogens folded in), as in the reference
    code, so ``[H]OC`` and ``CO`` give the same molecule. The molecule's filter properties are
    computed from the same parse and cached (see :func:`molecule_properties`).
    """
    key = (smiles, remove_isotopes, stereo)
    cached = _canonical_cache.get(key)
    if cached is not None:
        return cached
    # the reference's exact parse (RDKit's defaults), with the core's size limits
    mol = safe_mol_from_smiles(smiles)
    if mol is None:
        try:
            parse_smiles(smiles)
            reason = "RDKit cannot read it"
        except InvalidSmiles as exc:
            reason = exc.reason
        raise _BadMolecule(f"molecule {smiles[:80]!r}: {reason}")
    has_maps = ":" in smiles
    has_isotopes = remove_isotopes and _ISOTOPE_TEXT.search(smiles) is not None
    if has_maps or has_isotopes:
        for atom in mol.GetAtoms():
            if has_maps and atom.GetAtomMapNum():
                atom.SetAtomMapNum(0)
            if has_isotopes and atom.GetIsotope():
                atom.SetIsotope(0)
    canonical = Chem.MolToSmiles(mol, isomericSmiles=stereo)
    if len(_canonical_cache) > _CACHE_LIMIT:
        _canonical_cache.clear()
    _canonical_cache[key] = canonical
    if canonical not in _props_cache and "[H" not in canonical:
        # With an explicit hydrogen left in the graph (an isotope label just removed, e.g. D2O
        # -> [H]O[H]) the parse above differs from a parse of the canonical text, which the
        # rules are defined on (the reference re-parses); molecule_properties handles that case.
        if len(_props_cache) > _CACHE_LIMIT:
            _props_cache.clear()
        if _quiet_depth:
            _props_cache[canonical] = _properties_of(mol, canonical)
        else:
            with rdkit_log_silenced():
                _props_cache[canonical] = _properties_of(mol, canonical)
    return canonical


def molecule_properties(canonical: str) -> tuple[int, bool, int, int, str]:
    """``(heavy atoms, has carbon, bonds, SMILES tokens, neutralized SMILES)`` of a canonical molecule.

    Heavy atoms, bonds and carbon are counted on the hydrogen-suppressed graph; the
    neutralized SMILES is the molecule with (de)protonation charges removed, used by the
    ``protonation_only`` rule (the SMILES itself when it carries no charge).
    """
    cached = _props_cache.get(canonical)
    if cached is not None:
        return cached
    mol = safe_mol_from_smiles(canonical)
    if mol is None:  # canonical output RDKit cannot read back (rare aromaticity corner cases)
        raise _BadMolecule(f"canonical SMILES {canonical[:80]!r} cannot be read back by RDKit")
    if _quiet_depth:
        props = _properties_of(mol, canonical)
    else:
        with rdkit_log_silenced():
            props = _properties_of(mol, canonical)
    if len(_props_cache) > _CACHE_LIMIT:
        _props_cache.clear()
    _props_cache[canonical] = props
    return props


# --------------------------------------------------------------------------------------
# Reactions


def standardize_reaction(rxn_smiles: str, config: CleanConfig = CleanConfig()) -> tuple[list[str], list[str]]:
    """Canonical reactants (reagents merged) and products of a reaction SMILES, each sorted.

    Raises ``ValueError`` with the reason when the text is not ``reactants>reagents>products``
    or a molecule cannot be read.
    """
    if not isinstance(rxn_smiles, str) or not rxn_smiles.strip():
        raise ValueError("empty reaction")
    body = rxn_smiles.split()[0]
    roles = body.split(">")
    if len(roles) != 3:
        raise ValueError(f"expected 'reactants>reagents>products' (2 '>' signs), found {len(roles) - 1}")

    def canon(role: str) -> list[str]:
        out = []
        for part in role.split("."):
            if not part:
                continue
            smiles = canonical_molecule(part, remove_isotopes=config.remove_isotopes, stereo=config.keep_stereo)
            if smiles:
                out.append(smiles)
        return out

    try:
        reactants = sorted(canon(roles[0]) + canon(roles[1]))
        products = sorted(canon(roles[2]))
    except _BadMolecule as exc:
        raise ValueError(str(exc)) from None
    return reactants, products


def filter_reason(reactants: list[str], products: list[str], config: CleanConfig = CleanConfig()) -> str | None:
    """The first rule (see :data:`RULES`) the standardized reaction fails, or ``None``."""
    reactant_props = [molecule_properties(m) for m in reactants]
    if sum(p[0] for p in reactant_props) < config.min_reactant_heavy_atoms:
        return "too_few_reactant_heavy_atoms"
    if not any(p[1] for p in reactant_props):
        return "no_carbon_in_reactants"
    product_props = [molecule_properties(m) for m in products]

    def joined_tokens(props: list[tuple]) -> int:
        return sum(p[3] for p in props) + max(len(props) - 1, 0)

    if joined_tokens(reactant_props) >= config.max_tokens or joined_tokens(product_props) >= config.max_tokens:
        return "too_many_tokens"
    if max(p[2] for p in reactant_props) < config.min_bonds_in_a_reactant:
        return "no_reactant_with_2_bonds"
    reactant_set = set(reactants)
    if not any(
        smiles not in reactant_set and props[0] >= config.min_new_product_heavy_atoms
        for smiles, props in zip(products, product_props, strict=True)
    ):
        return "no_new_product_heavy_enough"
    neutral_reactants = {p[4] for p in reactant_props}
    neutral_products = {p[4] for p in product_props}
    if not neutral_products or not (neutral_products - neutral_reactants):
        return "protonation_only"
    return None


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def _standardize_batch(texts: list[str], config: CleanConfig) -> list[tuple]:
    """Per reaction: ``("ok", reactants, products, digest)``, ``("rule", name)`` or ``("bad", reason)``."""
    global _quiet_depth
    with rdkit_log_silenced():
        _quiet_depth += 1
        try:
            return [_standardize_one(text, config) for text in texts]
        finally:
            _quiet_depth -= 1


def _standardize_one(text: str, config: CleanConfig) -> tuple:
    try:
        reactants, products = standardize_reaction(text, config)
        reason = filter_reason(reactants, products, config)
    except ValueError as exc:  # _BadMolecule is a ValueError too
        return ("bad", str(exc))
    if reason is not None:
        return ("rule", reason)
    reactant_text = ".".join(reactants)
    product_text = ".".join(products)
    return ("ok", reactant_text, product_text, _digest(f"{reactant_text}>>{product_text}"))


# --------------------------------------------------------------------------------------
# Engine: pass 1 standardizes and filters chunk by chunk (parallel), keeping survivors in
# memory or spilled to Parquet; dedup then works on small key columns only; pass 2 emits
# the kept rows in file order.


class _Survivors:
    def __init__(self, spill_dir: Path | None) -> None:
        self.spill_dir = spill_dir
        self.frames: list[pd.DataFrame] = []
        self.paths: list[Path] = []
        self.keys: list[np.ndarray] = []
        self.has_class: list[np.ndarray] = []
        self.years: list[np.ndarray] = []
        self.orders: list[np.ndarray] = []

    def add(self, frame: pd.DataFrame, digests: list[bytes]) -> None:
        keys = np.frombuffer(b"".join(digests), dtype="<u8").reshape(-1, 2) if digests else np.zeros((0, 2), "<u8")
        self.keys.append(keys)
        self.has_class.append(frame["class_code"].notna().to_numpy())
        self.years.append(frame["year"].to_numpy(dtype="float64", na_value=np.nan))
        self.orders.append(frame["_order"].to_numpy(dtype=np.int64))
        if self.spill_dir is None:
            self.frames.append(frame)
        else:
            path = self.spill_dir / f"part-{len(self.paths):06d}.parquet"
            frame.to_parquet(path, index=False)
            self.paths.append(path)

    def iter_frames(self) -> Iterator[pd.DataFrame]:
        if self.spill_dir is None:
            yield from self.frames
        else:
            for path in self.paths:
                yield pd.read_parquet(path)


def _choose(keys: np.ndarray, has_class: np.ndarray, years: np.ndarray, orders: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Indices (into the survivor arrays) of the kept records and the size of each one's group."""
    n = len(orders)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if mode == "none":
        return np.arange(n), np.ones(n, dtype=np.int64)
    by_key = np.lexsort((orders, keys[:, 1], keys[:, 0]))
    sorted_keys = keys[by_key]
    starts = np.flatnonzero(np.r_[True, np.any(sorted_keys[1:] != sorted_keys[:-1], axis=1)])
    sizes = np.diff(np.r_[starts, n])
    if mode == "paper":
        year_rank = np.where(np.isnan(years), np.inf, years)
        priority = np.lexsort((orders, year_rank, ~has_class, keys[:, 1], keys[:, 0]))
        return priority[starts], sizes
    kept = by_key[starts].copy()
    for group, (start, size) in enumerate(zip(starts, sizes, strict=True)):
        if size == 1:
            continue
        members = by_key[start:start + size]  # file order inside the group
        best = members[0]
        for candidate in members[1:]:
            if has_class[candidate] and not has_class[best]:
                best = candidate
            elif np.isnan(years[best]) or (not np.isnan(years[candidate]) and years[candidate] < years[best]):
                # the reference falls through to the year test even when the candidate has no
                # class and the kept one has: that is reproduced here on purpose.
                best = candidate
        kept[group] = best
    return kept, sizes


def _clean_chunks(
    chunks: Iterable[pd.DataFrame],
    config: CleanConfig,
    *,
    n_jobs: int,
    scheduler: str | None,
    batch_size: int,
    spill_dir: Path | None,
    show_progress: bool | None,
) -> tuple[_Survivors, CleanReport, np.ndarray, np.ndarray]:
    report = CleanReport()
    survivors = _Survivors(spill_dir)
    work = functools.partial(_standardize_batch, config=config)
    order = 0
    with progress_task("cleaning reactions", None, disable=None if show_progress is None else not show_progress) as advance:
        for chunk in chunks:
            report.read_problems.extend(chunk.attrs.get("read_problems", []))
            texts = chunk["rxn_smiles"].tolist()
            batches = [texts[i:i + batch_size] for i in range(0, len(texts), batch_size)]
            outcomes = parallel_map(work, batches, n_jobs=n_jobs, chunk_size=1, scheduler=scheduler,
                                    description="cleaning", show_progress=False)
            flat: list[tuple] = []
            for outcome in outcomes:
                if isinstance(outcome, Failure):
                    raise RuntimeError(f"a cleaning worker failed: {outcome}")
                flat.extend(outcome)
            rows = chunk["source_row"].to_numpy()
            keep_index: list[int] = []
            reactant_texts: list[str] = []
            product_texts: list[str] = []
            digests: list[bytes] = []
            for index, result in enumerate(flat):
                status = result[0]
                if status == "ok":
                    keep_index.append(index)
                    reactant_texts.append(result[1])
                    product_texts.append(result[2])
                    digests.append(result[3])
                elif status == "rule":
                    report.removed[result[1]] += 1
                else:
                    report.unparsable += 1
                    report.problems.append({"row": int(rows[index]), "reason": result[1]})
            kept = chunk.iloc[keep_index].reset_index(drop=True)
            kept = kept.rename(columns={"rxn_smiles": "source_rxn_smiles"})
            kept["reactants"] = reactant_texts
            kept["products"] = product_texts
            kept["_order"] = np.arange(order, order + len(chunk), dtype=np.int64)[keep_index]
            survivors.add(kept, digests)
            report.rows_in += len(chunk)
            order += len(chunk)
            advance(len(chunk))
    keys = np.concatenate(survivors.keys) if survivors.keys else np.zeros((0, 2), "<u8")
    kept_idx, sizes = _choose(
        keys,
        np.concatenate(survivors.has_class) if survivors.has_class else np.zeros(0, bool),
        np.concatenate(survivors.years) if survivors.years else np.zeros(0),
        np.concatenate(survivors.orders) if survivors.orders else np.zeros(0, np.int64),
        config.dedup,
    )
    orders = np.concatenate(survivors.orders) if survivors.orders else np.zeros(0, np.int64)
    winner_orders = orders[kept_idx]
    report.duplicates = int(len(orders) - len(kept_idx))
    report.rows_out = int(len(kept_idx))
    return survivors, report, winner_orders, sizes


def _finish_frames(survivors: _Survivors, winner_orders: np.ndarray, sizes: np.ndarray) -> Iterator[pd.DataFrame]:
    total = int(winner_orders.max()) + 1 if len(winner_orders) else 0
    group_size = np.zeros(total, dtype=np.int64)  # 0 marks a row that is not kept
    group_size[winner_orders] = sizes
    for frame in survivors.iter_frames():
        orders = frame["_order"].to_numpy(dtype=np.int64)
        in_range = orders < total
        size = np.zeros(len(orders), dtype=np.int64)
        size[in_range] = group_size[orders[in_range]]
        kept = frame.loc[size > 0].copy()
        if kept.empty:  # a chunk with no survivor (its columns may not even be text): nothing to write
            continue
        kept["n_records"] = size[size > 0]
        kept["rxn_smiles"] = kept["reactants"] + ">>" + kept["products"]
        yield kept[list(CLEAN_COLUMNS)].reset_index(drop=True)


def clean_reactions(
    df: pd.DataFrame,
    config: CleanConfig | None = None,
    *,
    n_jobs: int = 1,
    scheduler: str | None = None,
    batch_size: int = 2000,
    show_progress: bool | None = None,
) -> tuple[pd.DataFrame, CleanReport]:
    """Clean an in-memory reaction table; returns ``(clean_df, report)`` (see module docstring).

    ``df`` needs ``rxn_smiles``; the other standard columns are optional (missing ones are
    NA). ``n_jobs`` worker processes (or a Dask ``scheduler``) share the RDKit work.
    """
    config = config or CleanConfig()
    frame = _as_standard(df)
    survivors, report, winners, sizes = _clean_chunks(
        [frame], config, n_jobs=n_jobs, scheduler=scheduler, batch_size=batch_size,
        spill_dir=None, show_progress=show_progress,
    )
    parts = list(_finish_frames(survivors, winners, sizes))
    clean = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(CLEAN_COLUMNS))
    return clean, report


def _as_standard(df: pd.DataFrame) -> pd.DataFrame:
    if "rxn_smiles" not in df.columns:
        raise UserInputError(f"the reaction table has no 'rxn_smiles' column (columns: {list(df.columns)[:12]})")
    frame = df.copy()
    for column in STANDARD_COLUMNS:
        if column not in frame.columns:
            frame[column] = np.arange(1, len(frame) + 1) if column == "source_row" else None
    frame["year"] = pd.array(frame["year"], dtype="Int64")
    frame["rxn_smiles"] = frame["rxn_smiles"].fillna("").astype(str)
    out = frame[list(STANDARD_COLUMNS)].reset_index(drop=True)
    out.attrs["read_problems"] = list(df.attrs.get("read_problems", []))
    if df.attrs.get("dataset"):
        out.attrs["dataset"] = df.attrs["dataset"]
    return out


def _check_output(out: str | os.PathLike) -> Path:
    target = Path(out)
    if target.suffix.lower() not in (".parquet", ".csv"):
        raise UserInputError(f"{target}: the cleaned table must end in .parquet (compact, typed) or .csv")
    return target


DATASET_METADATA_KEY = b"chemassay.dataset"
"""Parquet schema metadata of a cleaned table: the registered dataset it was cleaned from."""


def write_table(frames: Iterable[pd.DataFrame], out: str | os.PathLike, *, dataset: str | None = None) -> int:
    """Write frames to ``out`` (``.parquet`` or ``.csv``) atomically, streaming; returns the rows.

    ``dataset`` (the registered dataset the rows were cleaned from) is kept in a Parquet
    file's schema metadata, so a split made from it, and every result scored on a part of
    that split, can name the data (a CSV file has no room for it).
    """
    target = _check_output(out)
    is_csv = target.suffix.lower() == ".csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    rows = 0
    writer = None
    schema = None
    try:
        for number, frame in enumerate(frames):
            rows += len(frame)
            if is_csv:
                frame.to_csv(tmp, mode="w" if number == 0 else "a", header=number == 0, index=False)
                continue
            table = pa.Table.from_pandas(frame, preserve_index=False)
            if writer is None:
                schema = table.schema
                if dataset:
                    schema = schema.with_metadata({**(schema.metadata or {}), DATASET_METADATA_KEY: dataset.encode()})
                writer = pq.ParquetWriter(tmp, schema)
            writer.write_table(table.cast(schema))
        if writer is not None:
            writer.close()
            writer = None
        elif not is_csv:
            empty = pa.Table.from_pandas(pd.DataFrame(columns=list(CLEAN_COLUMNS)), preserve_index=False)
            if dataset:
                empty = empty.replace_schema_metadata({**(empty.schema.metadata or {}), DATASET_METADATA_KEY: dataset.encode()})
            pq.write_table(empty, tmp)
        elif rows == 0:
            pd.DataFrame(columns=list(CLEAN_COLUMNS)).to_csv(tmp, index=False)
        plain_file_mode(tmp)  # mkstemp makes it 0600
        os.replace(tmp, target)
    finally:
        if writer is not None:
            writer.close()
        if tmp.exists():
            tmp.unlink()
    return rows


def clean_file(
    path: str | os.PathLike,
    out: str | os.PathLike,
    config: CleanConfig | None = None,
    *,
    fmt: str = "auto",
    n_jobs: int = 1,
    scheduler: str | None = None,
    chunk_rows: int = 100_000,
    batch_size: int = 2000,
    show_progress: bool | None = None,
    dataset: str | None = None,
) -> CleanReport:
    """Clean a reaction file into ``out`` (Parquet or CSV) with bounded memory.

    The input is read in chunks of ``chunk_rows``; survivors are spilled to a temporary
    folder next to ``out``; only their dedup keys stay in memory (about 40 bytes a reaction).
    ``dataset`` names the registered dataset the file is (see :func:`write_table`).
    """
    config = config or CleanConfig()
    target = _check_output(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    spill = Path(tempfile.mkdtemp(prefix=".clean-spill-", dir=target.parent))
    try:
        survivors, report, winners, sizes = _clean_chunks(
            iter_reactions(path, fmt, chunk_rows=chunk_rows), config, n_jobs=n_jobs,
            scheduler=scheduler, batch_size=batch_size, spill_dir=spill, show_progress=show_progress,
        )
        write_table(_finish_frames(survivors, winners, sizes), target, dataset=dataset)
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    return report


def config_dict(config: CleanConfig) -> dict:
    """The configuration as a JSON-ready dict (for manifests and results)."""
    return asdict(config)
