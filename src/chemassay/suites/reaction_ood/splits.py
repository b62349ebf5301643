"""Random, document, author, time, reaction-type and bespoke splits (Bradshaw et al. S1.2-S1.4).

``make_split(df, kind, config, seed) -> dict[str, DataFrame]`` returns the parts of a split of
a cleaned reaction table (one row per distinct reaction; run
:func:`~chemassay.suites.reaction_ood.clean.clean_reactions` first). Part names:

``train``, ``valid``, ``test``
    training, validation and in-distribution (ID) test sets (every kind except ``time``).
``test_ood``
    the out-of-distribution test set: new documents (``document``), new authors (``author``),
    held-out classes (``reaction-type``).
``ood_train``
    a small OOD set that may be added to training for the "intrinsic difficulty" baseline
    (``document``/``author``: drawn from the OOD side; ``reaction-type``: held-out classes,
    from other documents than ``test_ood``). Present when its size is not 0.
``test_ood_document``
    ``author`` only: new documents whose authors may be seen in training.
``test_<year>``, ``train_upto_<year>``, ``valid_upto_<year>``
    ``time``: a held-out test set for every year with enough reactions, and a train/valid pair
    for every cutoff year (reactions of that year or earlier, never from a test set).
``test_bespoke``
    every reaction of the classes named in ``config["bespoke"]``; those reactions are removed
    before any other part is drawn, so no training part holds them (any kind; ``bespoke``
    alone adds a random train/valid/test split of the rest).

The returned dict is a :class:`SplitParts`; its ``meta`` attribute records what was drawn
(documents used, reactions left out and why). Sizes in ``config`` are counts (``int``),
fractions of the eligible reactions (``float`` in (0, 1)), or ``"rest"``. Rows inside each part
keep the input order. Randomness: ``numpy.random.default_rng(seed)``; reactions are put in a
canonical order (by a 64-bit BLAKE2b key of ``rxn_smiles``) first, so the split depends only on
the set of reactions, not on the row order of the file.

The procedures follow the authors' code (github.com/john-bradshaw/rxn-splits): levels are
filled with whole documents taken in random order, the last document of a level is truncated
and its remaining reactions are left out (so no document straddles two levels). Where we
deliberately differ (the author split guarantees author-disjoint sides by default) is described
in ``docs/reaction-ood-data.md``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from chemassay.contract.errors import UserInputError

KINDS = ("random", "document", "author", "time", "reaction-type", "bespoke")
REST = "rest"
#: Keys of a split definition file that describe it without changing the procedure.
METADATA_KEYS = ("name", "description", "source")

DEFAULT_CONFIGS: dict[str, dict[str, Any]] = {
    "random": {"train": 0.8, "valid": 0.1, "test": 0.1},
    "document": {"test_ood": 0.1, "ood_train": 0, "train": REST, "valid": 0.05, "test": 0.1, "leeway": 0},
    "author": {
        "test_ood": 0.1, "test_ood_document": 0.1, "ood_train": 0, "train": REST, "valid": 0.05,
        "test": 0.1, "leeway": 0, "author_overbuffer": 200, "author_disjoint": "strict",
    },
    "time": {
        "cutoff_years": None, "test_size": 3000, "valid_fraction": 0.05, "document_split": True,
        "fixed_train_size": False, "max_train_size": None, "max_valid_size": 2000, "leeway": 750,
        "min_year": 1900,
    },
    "reaction-type": {
        "held_out": None, "test_ood": 10000, "ood_train": 1000, "train": REST, "valid": 10000,
        "test": 10000, "exclude_all_relevant_docs": True, "leeway": 200,
    },
    "bespoke": {"train": 0.8, "valid": 0.1, "test": 0.1},
}


class SplitParts(dict):
    """``dict`` of part name → DataFrame, with the split's bookkeeping in :attr:`meta`."""

    def __init__(self, *args, meta: dict | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.meta: dict = meta or {}


@dataclass
class Assignment:
    """Row positions (into the input table) of every part, and what the procedure recorded."""

    parts: dict[str, np.ndarray]
    meta: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)


# --------------------------------------------------------------------------------------
# Configuration


def resolve_config(kind: str, config: Mapping[str, Any] | None) -> dict[str, Any]:
    """Defaults of ``kind`` overlaid with ``config``; unknown keys are an error."""
    if kind not in KINDS:
        raise UserInputError(f"unknown split kind {kind!r}; use one of {', '.join(KINDS)}")
    merged = dict(DEFAULT_CONFIGS[kind])
    given = dict(config or {})
    given.pop("kind", None)
    given.pop("seed", None)  # the caller passes the seed (the CLI takes it from the file)
    for key in METADATA_KEYS:
        if key in given:
            merged[key] = given.pop(key)
    bespoke = given.pop("bespoke", None)
    unknown = sorted(set(given) - set(merged))
    if unknown:
        raise UserInputError(
            f"unknown key(s) {unknown} in the {kind} split config; allowed: "
            f"{sorted(merged) + ['bespoke', 'kind', 'seed', *METADATA_KEYS]}"
        )
    merged.update(given)
    if bespoke is not None:
        merged["bespoke"] = _check_bespoke(bespoke)
    elif kind == "bespoke":
        raise UserInputError("a bespoke split needs \"bespoke\": {\"classes\": [...]} in its config")
    return merged


def _check_bespoke(bespoke: Any) -> dict:
    if isinstance(bespoke, list):
        bespoke = {"classes": bespoke}
    if not isinstance(bespoke, dict) or not bespoke.get("classes"):
        raise UserInputError("config 'bespoke' must be {\"classes\": [\"1.3.1\", ...], \"name\": ...}")
    classes = [str(c).strip() for c in bespoke["classes"]]
    return {"classes": classes, "name": str(bespoke.get("name", "bespoke"))}


def _size(value: Any, n_eligible: int, name: str) -> int | None:
    """A size as a count; ``None`` means "the rest". Floats below 1 are fractions of ``n_eligible``."""
    if value is None or value == REST:
        return None
    bad = UserInputError(f"size of {name!r} must be a count, a fraction in (0, 1) or \"rest\", got {value!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad
    if isinstance(value, float) and 0 < value < 1:
        return int(math.floor(value * n_eligible))
    if value < 0 or (isinstance(value, float) and not value.is_integer()):
        raise bad
    return int(value)


def list_split_definitions() -> dict[str, str]:
    """Names and descriptions of the shipped split definitions (``data/split_defs/*.json``).

    ``paper_*`` are the paper's settings (from the authors' code) for Pistachio-sized data;
    ``schneider_*`` size the same procedures for the cleaned Schneider 50k set.
    """
    folder = resources.files("chemassay.suites.reaction_ood").joinpath("data", "split_defs")
    out = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".json"):
            out[entry.name[:-5]] = json.loads(entry.read_text("utf-8")).get("description", "")
    return out


def split_definition(name: str) -> dict[str, Any]:
    """A shipped split definition by name (see :func:`list_split_definitions`)."""
    entry = resources.files("chemassay.suites.reaction_ood").joinpath("data", "split_defs", f"{name}.json")
    if not entry.is_file():
        raise UserInputError(
            f"no shipped split definition {name!r}; choose one of {', '.join(list_split_definitions())} "
            f"or give a JSON file"
        )
    return json.loads(entry.read_text("utf-8"))


# --------------------------------------------------------------------------------------
# Class codes


def class_matches(code: Any, prefixes: Sequence[str]) -> bool:
    """Whether a hierarchical class code falls under one of ``prefixes``, level by level.

    ``"3.1"`` covers ``"3.1"``, ``"3.1.4"`` and ``"3.1.4.2"`` but not ``"3.10.1"`` or ``"3"``.
    """
    if not isinstance(code, str) or not code:
        return False
    levels = code.split(".")
    for prefix in prefixes:
        wanted = prefix.split(".")
        if levels[: len(wanted)] == wanted:
            return True
    return False


def is_categorized(code: Any) -> bool:
    """False for a missing class code or NameRxn's unrecognized class (``0`` / ``0.0``)."""
    return isinstance(code, str) and bool(code.strip()) and code.split(".")[0] != "0"


def _class_mask(codes: pd.Series, prefixes: Sequence[str]) -> np.ndarray:
    unique = pd.unique(codes.astype(object))
    hits = {code: class_matches(code, prefixes) for code in unique}
    return codes.astype(object).map(hits).fillna(False).to_numpy(dtype=bool)


# --------------------------------------------------------------------------------------
# Shared helpers


def reaction_keys(rxn_smiles: Iterable[str]) -> np.ndarray:
    """64-bit keys of reaction SMILES (BLAKE2b), stable across runs, machines and versions."""
    return np.fromiter(
        (int.from_bytes(hashlib.blake2b(str(s).encode("utf-8"), digest_size=8).digest(), "little") for s in rxn_smiles),
        dtype=np.uint64,
    )


def colliding_positions(keys: np.ndarray) -> np.ndarray:
    """Positions whose key is shared with another row (repeated reactions or hash collisions)."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    same = np.r_[False, sorted_keys[1:] == sorted_keys[:-1]]
    shared = same | np.r_[same[1:], False]
    return np.sort(order[shared])


def canonical_order(keys: np.ndarray, texts: Mapping[int, str] | None = None) -> np.ndarray:
    """Row positions sorted by reaction key: the order every split shuffles from.

    The order depends only on the set of reactions, not on the row order of the file. Rows
    sharing a key are told apart by their text (``texts[position]``, needed only for them);
    the same text twice is a repeated reaction and an error.
    """
    order = np.argsort(keys, kind="stable")
    shared = colliding_positions(keys)
    if len(shared) == 0:
        return order
    texts = texts or {}
    missing = [int(p) for p in shared if int(p) not in texts]
    if missing:
        raise ValueError(f"texts needed for rows sharing a key: {missing[:5]}")
    groups: dict[int, list[int]] = {}
    for position in shared.tolist():
        groups.setdefault(int(keys[position]), []).append(position)
    repeated = 0
    example = ""
    for members in groups.values():
        seen = {texts[p] for p in members}
        if len(seen) < len(members):
            repeated += len(members) - len(seen)
            example = example or texts[members[0]]
    if repeated:
        raise UserInputError(
            f"{repeated} reaction(s) appear more than once (e.g. {example[:80]!r}); "
            f"clean the table first ('chemassay reaction-ood clean') so no reaction can land in two parts"
        )
    # a true 64-bit collision between different reactions: order those rows by their text
    sorted_keys = keys[order]
    out = order.copy()
    start = 0
    while start < len(out):
        stop = start + 1
        while stop < len(out) and sorted_keys[stop] == sorted_keys[start]:
            stop += 1
        if stop - start > 1:
            out[start:stop] = sorted(out[start:stop].tolist(), key=lambda p: texts[p])
        start = stop
    return out


def _documents(frame: pd.DataFrame) -> np.ndarray:
    if "document_id" not in frame.columns:
        raise UserInputError("this split needs a 'document_id' column (the document each reaction comes from)")
    codes, _ = pd.factorize(frame["document_id"].astype(object), use_na_sentinel=True)
    return codes


def _levels_total(level: Sequence[tuple[str, int | None]]) -> int | None:
    if any(size is None for _, size in level):
        return None
    return sum(size for _, size in level)


def fill_levels_by_document(
    shuffled_rows: np.ndarray,
    doc_codes: np.ndarray,
    levels: Sequence[Sequence[tuple[str, int | None]]],
    rng: np.random.Generator,
    leeway: int = 0,
) -> tuple[dict[str, np.ndarray], dict]:
    """Fill levels of parts with whole documents taken in random order ("document dense").

    ``shuffled_rows`` are row positions in random order; ``doc_codes[row]`` is the row's
    document (``-1``: unknown, skipped). Documents are shuffled and appended to the current
    level until it holds its total size; the last document is truncated and the rest of its
    reactions are left out. Each level is then shuffled and cut into its parts in order.
    A size ``None`` ("rest") takes everything left (last level only). If the documents run
    out, a level may fall short by at most ``leeway`` reactions, else ``UserInputError``.
    """
    known = shuffled_rows[doc_codes[shuffled_rows] >= 0]
    unknown = int(len(shuffled_rows) - len(known))
    doc_of_known = doc_codes[known]
    # group rows by document, keeping the shuffled order inside each document
    by_doc = np.argsort(doc_of_known, kind="stable")
    grouped = known[by_doc]
    sorted_docs = doc_of_known[by_doc]
    starts = np.flatnonzero(np.r_[True, sorted_docs[1:] != sorted_docs[:-1]]) if len(grouped) else np.zeros(0, int)
    ends = np.r_[starts[1:], len(grouped)] if len(grouped) else np.zeros(0, int)
    doc_order = rng.permutation(len(starts))
    targets = [_levels_total(level) for level in levels]
    if any(t is None for t in targets[:-1]):
        raise UserInputError("\"rest\" may only be used in the last group of parts")
    level_rows: list[list[np.ndarray]] = [[] for _ in levels]
    filled = [0] * len(levels)
    docs_used_per_level = [0] * len(levels)
    truncated_left_out = 0
    level = 0
    docs_used = 0
    for doc_index in doc_order:
        while level < len(levels) and targets[level] == 0:
            level += 1  # an empty group takes no document (it would only discard one)
        if level >= len(levels):
            break
        members = grouped[starts[doc_index]:ends[doc_index]]
        target = targets[level]
        take = members if target is None else members[: max(target - filled[level], 0)]
        truncated_left_out += len(members) - len(take)
        level_rows[level].append(take)
        filled[level] += len(take)
        docs_used += 1
        docs_used_per_level[level] += 1
        if target is not None and filled[level] >= target:
            level += 1
    shortfalls = [
        (t - f) if t is not None else 0 for t, f in zip(targets, filled, strict=True)
    ]
    worst = max(shortfalls) if shortfalls else 0
    if worst > leeway:
        raise UserInputError(
            f"not enough documents to fill the requested sizes: short by {worst} reactions "
            f"(leeway {leeway}); lower the sizes or raise 'leeway'"
        )
    parts: dict[str, np.ndarray] = {}
    actual_levels = []
    for rows_list, level_spec in zip(level_rows, levels, strict=True):
        rows = np.concatenate(rows_list) if rows_list else np.zeros(0, dtype=np.int64)
        rows = rows[rng.permutation(len(rows))]
        # fixed sizes are cut first (in the listed order), a "rest" part takes what remains
        ordered = [(n, s) for n, s in level_spec if s is not None] + [(n, s) for n, s in level_spec if s is None]
        if sum(1 for _, s in level_spec if s is None) > 1:
            raise UserInputError("only one part of a group may be \"rest\"")
        start = 0
        actual = []
        for name, size in ordered:
            stop = len(rows) if size is None else min(start + size, len(rows))
            if name in parts:
                raise UserInputError(f"part {name!r} is defined twice")
            parts[name] = rows[start:stop]
            actual.append((name, int(stop - start)))
            start = stop
        actual_levels.append(actual)
    meta = {
        "reactions_without_document": unknown,
        "documents_total": int(len(starts)),
        "documents_used": docs_used,
        "documents_used_per_level": docs_used_per_level,
        "left_out_from_truncated_documents": int(truncated_left_out),
        "level_sizes_requested": [[(n, s) for n, s in lvl] for lvl in levels],
        "level_sizes_actual": actual_levels,
        "leeway": leeway,
    }
    return parts, meta


def _sorted(parts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {name: np.sort(rows).astype(np.int64) for name, rows in parts.items()}


# --------------------------------------------------------------------------------------
# Kinds


def _split_random(frame: pd.DataFrame, config: dict, rng: np.random.Generator, pool: np.ndarray) -> Assignment:
    names = [k for k in ("train", "valid", "test") if k in config]
    rows = pool[rng.permutation(len(pool))]
    sizes = {name: _size(config[name], len(rows), name) for name in names}
    rests = [n for n, s in sizes.items() if s is None]
    if len(rests) > 1:
        raise UserInputError("only one part may be \"rest\"")
    fixed = sum(s for s in sizes.values() if s is not None)
    if fixed > len(rows):
        raise UserInputError(f"requested {fixed} reactions but only {len(rows)} are available")
    parts: dict[str, np.ndarray] = {}
    start = 0
    for name in names:
        size = sizes[name] if sizes[name] is not None else len(rows) - fixed
        parts[name] = rows[start:start + size]
        start += size
    return Assignment(parts, {"reactions_available": int(len(rows)), "left_out": int(len(rows) - start)})


def _split_document(frame: pd.DataFrame, config: dict, rng: np.random.Generator, pool: np.ndarray) -> Assignment:
    docs = _documents(frame)
    eligible = int((docs[pool] >= 0).sum())
    size = {name: _size(config[name], eligible, name) for name in ("test_ood", "ood_train", "train", "valid", "test")}
    ood_level = [("test_ood", size["test_ood"])]
    if size["ood_train"]:
        ood_level.append(("ood_train", size["ood_train"]))
    levels = [ood_level, [("train", size["train"]), ("test", size["test"]), ("valid", size["valid"])]]
    shuffled = pool[rng.permutation(len(pool))]
    parts, meta = fill_levels_by_document(shuffled, docs, levels, rng, int(config["leeway"]))
    return Assignment(parts, meta)


def _split_author(frame: pd.DataFrame, config: dict, rng: np.random.Generator, pool: np.ndarray) -> Assignment:
    """Author-document-dense split (see the module docstring and the docs for the strict rule)."""
    if "authors" not in frame.columns or frame["authors"].isna().all():
        raise UserInputError(
            "this table has no authors (column 'authors' is empty), so an author split cannot be made; "
            "use --kind document, or give a table with ';'-separated authors per reaction"
        )
    mode = config["author_disjoint"]
    if mode not in ("strict", "reference"):
        raise UserInputError("'author_disjoint' must be \"strict\" or \"reference\"")
    docs = _documents(frame)
    author_lists = frame["authors"].astype(object).map(split_authors).to_numpy()
    shuffled = pool[rng.permutation(len(pool))]
    usable = np.array([docs[r] >= 0 and bool(author_lists[r]) for r in shuffled], dtype=bool)
    no_author_or_doc = int((~usable).sum())
    shuffled = shuffled[usable]
    eligible = len(shuffled)
    names = ("test_ood", "test_ood_document", "ood_train", "train", "valid", "test")
    size = {name: _size(config[name], eligible, name) for name in names}
    if size["test_ood"] is None:
        raise UserInputError("'test_ood' of an author split must be a count or a fraction")
    # author -> documents (first-seen order follows the shuffled reactions), document -> authors
    author_docs: dict[str, list[int]] = {}
    doc_authors: dict[int, set[str]] = {}
    for row in shuffled:
        doc = int(docs[row])
        for author in author_lists[row]:
            author_docs.setdefault(author, [])
            if doc not in doc_authors or author not in doc_authors[doc]:
                author_docs[author].append(doc)
            doc_authors.setdefault(doc, set()).add(author)
    rows_of_doc: dict[int, list[int]] = {}
    for row in shuffled:
        rows_of_doc.setdefault(int(docs[row]), []).append(int(row))
    authors = list(author_docs)
    author_order = [authors[i] for i in rng.permutation(len(authors))]
    overbuffer = int(config["author_overbuffer"])
    leeway = int(config["leeway"])
    claimed: set[int] = set()

    def collect(start: int, target: int | None, blocked: set[str]) -> tuple[list[int], int, int]:
        level_docs: list[int] = []
        count = 0
        position = start
        while position < len(author_order):
            author = author_order[position]
            position += 1
            if author in blocked:
                continue
            their_docs = author_docs[author]
            for index in rng.permutation(len(their_docs)):
                doc = their_docs[index]
                if doc in claimed or (blocked and doc_authors[doc] & blocked):
                    continue
                claimed.add(doc)
                level_docs.append(doc)
                count += len(rows_of_doc[doc])
            if target is not None and count >= target + overbuffer:
                break
        return level_docs, count, position

    # level 1: new authors
    ood_docs, _, position = collect(0, size["test_ood"], set())
    ood_rows = np.array([r for d in ood_docs for r in rows_of_doc[d]], dtype=np.int64)
    ood_rows = ood_rows[rng.permutation(len(ood_rows))]
    ood_parts, ood_meta = fill_levels_by_document(ood_rows, docs, [[("test_ood", size["test_ood"])]], rng, leeway)
    used_ood_docs = {int(d) for d in np.unique(docs[ood_parts["test_ood"]])}
    ood_authors = set().union(*(doc_authors[d] for d in used_ood_docs)) if used_ood_docs else set()
    # level 2: the remaining authors; in strict mode no document touching an OOD author is used
    blocked = ood_authors if mode == "strict" else set()
    id_target = None
    if all(size[n] is not None for n in ("test_ood_document", "ood_train", "train", "valid", "test")):
        id_target = sum(size[n] for n in ("test_ood_document", "ood_train", "train", "valid", "test"))
    id_docs, _, _ = collect(position, id_target, blocked)
    id_rows = np.array([r for d in id_docs for r in rows_of_doc[d]], dtype=np.int64)
    id_rows = id_rows[rng.permutation(len(id_rows))]
    id_levels = []
    first = [("test_ood_document", size["test_ood_document"])] if size["test_ood_document"] else []
    if size["ood_train"]:
        first.append(("ood_train", size["ood_train"]))
    if first:
        id_levels.append(first)
    id_levels.append([("train", size["train"]), ("test", size["test"]), ("valid", size["valid"])])
    id_parts, id_meta = fill_levels_by_document(id_rows, docs, id_levels, rng, leeway)
    excluded = 0
    if mode == "strict":
        excluded = int(sum(len(rows_of_doc[d]) for d in doc_authors if d not in claimed and doc_authors[d] & ood_authors))
    parts = {**ood_parts, **id_parts}
    meta = {
        "author_disjoint": mode,
        "reactions_without_authors_or_document": no_author_or_doc,
        "authors_total": len(authors),
        "ood_authors": len(ood_authors),
        "ood_documents": len(used_ood_docs),
        "left_out_sharing_an_ood_author": excluded,
        "ood_level": ood_meta,
        "id_level": id_meta,
    }
    return Assignment(parts, meta)


def split_authors(value: Any) -> list[str]:
    """Author names of a ``;``-separated cell, lower-cased and stripped, in order, unique."""
    if not isinstance(value, str):
        return []
    seen: dict[str, None] = {}
    for name in value.split(";"):
        cleaned = name.strip().lower()
        if cleaned:
            seen[cleaned] = None
    return list(seen)


def _split_time(frame: pd.DataFrame, config: dict, rng: np.random.Generator, pool: np.ndarray) -> Assignment:
    if "year" not in frame.columns or frame["year"].isna().all():
        raise UserInputError("this table has no years; a time split needs a 'year' (or US patent document ids)")
    cutoffs = config["cutoff_years"]
    if not cutoffs or not all(isinstance(y, int) for y in cutoffs):
        raise UserInputError("a time split needs \"cutoff_years\": [1996, 1998, ...] (whole years) in its config")
    years = frame["year"].to_numpy(dtype="float64", na_value=np.nan)
    shuffled = pool[rng.permutation(len(pool))]
    year_of = years[shuffled]
    no_year = int(np.isnan(year_of).sum())
    before_min = int((year_of < config["min_year"]).sum())
    docs = _documents(frame) if config["document_split"] else None
    test_size = int(config["test_size"])
    valid_fraction = float(config["valid_fraction"])
    if not 0 <= valid_fraction <= 1:
        raise UserInputError("'valid_fraction' must be between 0 and 1")
    leeway = int(config["leeway"])
    year_train: dict[int, np.ndarray] = {}
    year_valid: dict[int, np.ndarray] = {}
    parts: dict[str, np.ndarray] = {}
    per_year = {}
    for year in sorted({int(y) for y in year_of[~np.isnan(year_of)] if y >= config["min_year"]}):
        rows = shuffled[year_of == year]
        n = len(rows)
        n_test = test_size if n > 2 * test_size else 0
        n_train_valid = n - n_test
        n_train = int(n_train_valid * (1 - valid_fraction))
        n_valid = n_train_valid - n_train
        if docs is not None:
            # train takes every document left: the reference asks for n_train and tolerates the
            # shortfall left by truncated documents (its 'leeway'); the result is the same.
            levels = ([[("test", n_test)]] if n_test else []) + [[("valid", n_valid)], [("train", None)]]
            got, _ = fill_levels_by_document(rows, docs, levels, rng, leeway)
        else:
            got = {"train": rows[:n_train], "valid": rows[n_train:n_train + n_valid]}
            if n_test:
                got["test"] = rows[n - n_test:]
        year_train[year] = got["train"]
        year_valid[year] = got["valid"]
        if n_test:
            parts[f"test_{year}"] = got["test"]
        per_year[year] = {"all": n, "train": len(got["train"]), "valid": len(got["valid"]), "test": len(got.get("test", []))}
    max_train = config["max_train_size"]
    if config["fixed_train_size"]:
        smallest = sum(len(rows) for year, rows in year_train.items() if year <= min(cutoffs))
        max_train = smallest if max_train is None else min(smallest, int(max_train))
    max_valid = config["max_valid_size"]
    left_out = {}
    for cutoff in sorted(set(cutoffs)):
        train_pool = np.concatenate([r for y, r in year_train.items() if y <= cutoff] or [np.zeros(0, np.int64)])
        valid_pool = np.concatenate([r for y, r in year_valid.items() if y <= cutoff] or [np.zeros(0, np.int64)])
        train_pool = train_pool[rng.permutation(len(train_pool))]
        valid_pool = valid_pool[rng.permutation(len(valid_pool))]
        train = train_pool if max_train is None else train_pool[: int(max_train)]
        valid = valid_pool if max_valid is None else valid_pool[: int(max_valid)]
        parts[f"train_upto_{cutoff}"] = train
        parts[f"valid_upto_{cutoff}"] = valid
        left_out[cutoff] = {"train": int(len(train_pool) - len(train)), "valid": int(len(valid_pool) - len(valid))}
    meta = {"reactions_without_year": no_year, "reactions_before_min_year": before_min, "per_year": per_year,
            "max_train_size_used": max_train, "left_out_by_size_caps": left_out}
    return Assignment(parts, meta)


def _split_reaction_type(frame: pd.DataFrame, config: dict, rng: np.random.Generator, pool: np.ndarray) -> Assignment:
    held_out = config["held_out"]
    if held_out is None or not isinstance(held_out, list):
        raise UserInputError(
            "a reaction-type split needs \"held_out\": [\"3.1\", ...] (class code prefixes; [] for the "
            "in-distribution-only baseline) in its config"
        )
    held_out = [str(code).strip() for code in held_out]
    if "class_code" not in frame.columns:
        raise UserInputError("a reaction-type split needs a 'class_code' column")
    codes = frame["class_code"].astype(object)
    categorized = codes.map(is_categorized).to_numpy(dtype=bool)
    in_held_out = _class_mask(codes, held_out)
    docs = _documents(frame)
    shuffled = pool[rng.permutation(len(pool))]
    uncategorized = int((~categorized[shuffled]).sum())
    shuffled = shuffled[categorized[shuffled]]
    ood = shuffled[in_held_out[shuffled]]
    leeway = int(config["leeway"])
    ood_train_size = _size(config["ood_train"], len(ood), "ood_train") or 0
    parts: dict[str, np.ndarray] = {}
    ood_meta: dict = {}
    if len(ood) == 0:
        parts["test_ood"] = np.zeros(0, np.int64)
        ood_docs: set[int] = set()
    else:
        requested = _size(config["test_ood"], len(ood), "test_ood")
        available = len(ood) - ood_train_size
        test_ood_size = available if requested is None else min(requested, available)
        levels = ([[("ood_train", ood_train_size)]] if ood_train_size else []) + [[("test_ood", test_ood_size)]]
        got, ood_meta = fill_levels_by_document(ood, docs, levels, rng, leeway)
        parts.update(got)
        if config["exclude_all_relevant_docs"]:
            ood_docs = {int(d) for d in np.unique(docs[ood]) if d >= 0}
        else:
            used = np.concatenate(list(got.values()))
            ood_docs = {int(d) for d in np.unique(docs[used]) if d >= 0}
    id_rows = shuffled[~in_held_out[shuffled]]
    id_docs = docs[id_rows]
    same_doc = np.isin(id_docs, np.fromiter(ood_docs, dtype=np.int64, count=len(ood_docs))) | (id_docs < 0)
    removed_same_doc = int(same_doc.sum())
    id_rows = id_rows[~same_doc]
    valid = _size(config["valid"], len(id_rows), "valid") or 0
    test = _size(config["test"], len(id_rows), "test") or 0
    train_cap = _size(config["train"], len(id_rows), "train")
    available = len(id_rows) - valid - test
    if available < 0:
        raise UserInputError(f"valid + test ({valid + test}) exceed the {len(id_rows)} in-distribution reactions")
    train = None if train_cap is None or train_cap >= available else train_cap
    got, id_meta = fill_levels_by_document(id_rows, docs, [[("valid", valid)], [("test", test)], [("train", train)]], rng, leeway)
    parts.update(got)
    meta = {
        "held_out": held_out,
        "removed_uncategorized": uncategorized,
        "held_out_reactions": int(len(ood)),
        "removed_from_id_sharing_a_document_with_ood": removed_same_doc,
        "ood_level": ood_meta,
        "id_level": id_meta,
    }
    return Assignment(parts, meta)


_KIND_FUNCTIONS = {
    "random": _split_random,
    "bespoke": _split_random,
    "document": _split_document,
    "author": _split_author,
    "time": _split_time,
    "reaction-type": _split_reaction_type,
}


def assign_split(
    frame: pd.DataFrame,
    kind: str,
    config: Mapping[str, Any] | None = None,
    seed: int = 0,
    *,
    keys: np.ndarray | None = None,
    key_texts: Mapping[int, str] | None = None,
) -> Assignment:
    """Row positions of every part of a ``kind`` split of ``frame`` (see :func:`make_split`).

    ``frame`` needs ``rxn_smiles`` (distinct) and, depending on the kind, ``document_id``,
    ``authors``, ``year``, ``class_code``. A caller splitting a table too large to hold whole
    may leave ``rxn_smiles`` out and pass the :func:`reaction_keys` instead, with the texts of
    the rows whose keys collide (see :func:`~chemassay.suites.reaction_ood.split_files.split_file`).
    """
    resolved = resolve_config(kind, config)
    if keys is None:
        if "rxn_smiles" not in frame.columns:
            raise UserInputError("the table has no 'rxn_smiles' column")
        texts = frame["rxn_smiles"].astype(str).tolist()
        keys = reaction_keys(texts)
        key_texts = {int(p): texts[p] for p in colliding_positions(keys)}
    if len(keys) != len(frame):
        raise ValueError("one key per row is needed")
    rng = np.random.default_rng(seed)
    pool = canonical_order(keys, key_texts)
    bespoke_meta = None
    parts: dict[str, np.ndarray] = {}
    if "bespoke" in resolved:
        codes = frame["class_code"].astype(object) if "class_code" in frame.columns else pd.Series([None] * len(frame))
        in_bespoke = _class_mask(codes, resolved["bespoke"]["classes"])
        parts["test_bespoke"] = pool[in_bespoke[pool]]
        pool = pool[~in_bespoke[pool]]
        bespoke_meta = {"classes": resolved["bespoke"]["classes"], "reactions": int(len(parts["test_bespoke"]))}
    assignment = _KIND_FUNCTIONS[kind](frame, resolved, rng, pool)
    for name in assignment.parts:
        if name in parts:
            raise UserInputError(f"part {name!r} is produced twice")
    parts.update(assignment.parts)
    parts = {name: rows for name, rows in parts.items() if name != "ood_train" or len(rows)}
    meta = dict(assignment.meta)
    if bespoke_meta:
        meta["bespoke"] = bespoke_meta
    meta["input_reactions"] = int(len(frame))
    return Assignment(_sorted(parts), meta, resolved)


def make_split(df: pd.DataFrame, kind: str, config: Mapping[str, Any] | None = None, seed: int = 0) -> SplitParts:
    """Split a cleaned reaction table; returns part name → DataFrame (see the module docstring).

    Raises :class:`~chemassay.contract.errors.UserInputError` for an unknown kind or config key,
    duplicated reactions, missing columns (an author split on a table without authors says
    so), or sizes the data cannot fill.
    """
    assignment = assign_split(df, kind, config, seed)
    table = df.reset_index(drop=True)
    parts = SplitParts(
        {name: table.iloc[rows].reset_index(drop=True) for name, rows in assignment.parts.items()},
        meta={**assignment.meta, "kind": kind, "seed": seed, "config": assignment.config},
    )
    return parts
