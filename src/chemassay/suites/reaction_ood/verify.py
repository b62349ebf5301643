"""The guarantees of each split kind, and their verification on split parts.

:func:`guarantees` derives, from a split's kind, config and part names alone, the checks the
split must pass (it never trusts a list stored next to the data):

* ``disjoint_reactions``: no reaction (canonical ``rxn_smiles``) in two parts of a group
  (all parts; for ``time``: every cutoff's train/valid pair together with every test year);
* ``disjoint_documents``: no document on both sides (OOD vs ID parts; every time-split test
  year vs every training part);
* ``disjoint_authors`` (author split, strict) or ``novel_author_each`` (the reference's weaker
  rule: every OOD reaction has at least one author absent from training);
* ``year_at_most`` / ``year_equals``: every training reaction of a cutoff is from that year or
  earlier; every reaction of ``test_<year>`` is from that year;
* ``no_class`` / ``all_class``: no held-out (or bespoke) class in any training part; every OOD
  (bespoke) reaction is of a held-out (bespoke) class.

:func:`verify_parts` runs them on in-memory parts; :func:`verify_split_dir` also checks every
file against the manifest (size and sha256). Each check returns a :class:`CheckResult`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import sha256_file
from chemassay.suites.reaction_ood.splits import class_matches, reaction_keys, split_authors

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Check:
    """One guarantee: its type, the parts it concerns and its parameter."""

    name: str
    parts: tuple[str, ...] = ()
    other: tuple[str, ...] = ()
    value: Any = None

    def describe(self) -> str:
        """A one-line human description."""
        a = ", ".join(self.parts)
        b = ", ".join(self.other)
        return {
            "disjoint_reactions": f"no reaction in two of: {a}",
            "disjoint_documents": f"no document in both [{a}] and [{b}]",
            "disjoint_authors": f"no author in both [{a}] and [{b}]",
            "novel_author_each": f"every reaction of [{a}] has an author absent from [{b}]",
            "year_at_most": f"every reaction of [{a}] is from {self.value} or earlier",
            "year_equals": f"every reaction of [{a}] is from {self.value}",
            "no_class": f"no reaction of [{a}] has a class under {self.value}",
            "all_class": f"every reaction of [{a}] has a class under {self.value}",
            "file": f"{a}: file matches the manifest (rows and sha256)",
        }[self.name]


@dataclass
class CheckResult:
    """Outcome of one check: passed or not, with a count and examples of violations."""

    check: str
    description: str
    passed: bool
    violations: int = 0
    examples: list[str] = field(default_factory=list)


def _present(names: Sequence[str], wanted: Sequence[str]) -> tuple[str, ...]:
    return tuple(n for n in wanted if n in names)


def guarantees(kind: str, config: Mapping[str, Any], part_names: Sequence[str]) -> list[Check]:
    """The checks a ``kind`` split with ``config`` and these parts must pass."""
    names = list(part_names)
    checks: list[Check] = []
    bespoke = config.get("bespoke")
    non_bespoke = [n for n in names if n != "test_bespoke"]
    if kind == "time":
        tests = [n for n in names if n.startswith("test_") and n[5:].isdigit()]
        cutoffs = sorted({int(n.rsplit("_", 1)[1]) for n in names if n.startswith("train_upto_")})
        for cutoff in cutoffs:
            group = _present(names, [f"train_upto_{cutoff}", f"valid_upto_{cutoff}"] + tests + ["test_bespoke"])
            checks.append(Check("disjoint_reactions", group))
            checks.append(Check("year_at_most", _present(names, [f"train_upto_{cutoff}", f"valid_upto_{cutoff}"]), value=cutoff))
            if config.get("document_split", True):
                checks.append(Check("disjoint_documents", _present(names, [f"train_upto_{cutoff}"]),
                                    _present(names, [f"valid_upto_{cutoff}"])))
        for test in tests:
            checks.append(Check("year_equals", (test,), value=int(test[5:])))
        training = tuple(n for n in names if n.startswith(("train_upto_", "valid_upto_")))
        if config.get("document_split", True) and tests and training:
            checks.append(Check("disjoint_documents", tuple(tests), training))
    else:
        checks.append(Check("disjoint_reactions", tuple(names)))
    id_parts = _present(names, ["train", "valid", "test"])
    if kind == "document":
        checks.append(Check("disjoint_documents", _present(names, ["test_ood", "ood_train"]), id_parts))
    if kind == "author":
        ood = _present(names, ["test_ood"])
        others = tuple(n for n in non_bespoke if n != "test_ood")
        checks.append(Check("disjoint_documents", ood, others))
        checks.append(Check("disjoint_documents", _present(names, ["test_ood_document", "ood_train"]), id_parts))
        if config.get("author_disjoint", "strict") == "strict":
            checks.append(Check("disjoint_authors", ood, others))
        else:
            checks.append(Check("novel_author_each", ood, _present(names, ["train"])))
    if kind == "reaction-type":
        held_out = tuple(config.get("held_out") or ())
        checks.append(Check("no_class", id_parts, value=held_out))
        checks.append(Check("all_class", _present(names, ["test_ood", "ood_train"]), value=held_out))
        checks.append(Check("disjoint_documents", _present(names, ["test_ood", "ood_train"]), id_parts))
    if bespoke:
        classes = tuple(bespoke["classes"])
        checks.append(Check("no_class", tuple(non_bespoke), value=classes))
        checks.append(Check("all_class", ("test_bespoke",), value=classes))
    return [c for c in checks if c.parts or c.name == "disjoint_reactions"]


# --------------------------------------------------------------------------------------
# Running checks


def _cached(cache: dict | None, key: tuple, compute):
    if cache is None:
        return compute()
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def _texts(parts: Mapping[str, pd.DataFrame], name: str, cache: dict | None) -> list[str]:
    loader = (cache or {}).get("text_loader")
    if loader is not None:
        return loader(name)
    return parts[name]["rxn_smiles"].astype(str).tolist()


def _check_disjoint_reactions(parts: Mapping[str, pd.DataFrame], names: Sequence[str], cache: dict | None = None) -> tuple[int, list[str]]:
    violations = 0
    examples: list[str] = []
    keyed = {n: _cached(cache, ("keys", n), lambda n=n: np.unique(reaction_keys(_texts(parts, n, cache)))) for n in names}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            common = np.intersect1d(keyed[a], keyed[b], assume_unique=True)
            if len(common) == 0:
                continue
            # keys can collide: confirm on the text
            shared = set(_texts(parts, a, cache)) & set(_texts(parts, b, cache))
            violations += len(shared)
            examples += [f"{a} & {b}: {s[:100]}" for s in sorted(shared)[:3]]
    return violations, examples


def _documents_of(parts: Mapping[str, pd.DataFrame], names: Sequence[str], cache: dict | None = None) -> set[str]:
    found: set[str] = set()
    for n in names:
        found |= _cached(cache, ("documents", n), lambda n=n: set(parts[n]["document_id"].dropna().astype(str)))
    return found


def _authors_of(parts: Mapping[str, pd.DataFrame], names: Sequence[str], cache: dict | None = None) -> set[str]:
    def of_part(name: str) -> set[str]:
        names_found: set[str] = set()
        for cell in parts[name]["authors"].dropna().unique():
            names_found.update(split_authors(cell))
        return names_found

    found: set[str] = set()
    for n in names:
        found |= _cached(cache, ("authors", n), lambda n=n: of_part(n))
    return found


def run_check(check: Check, parts: Mapping[str, pd.DataFrame], cache: dict | None = None) -> CheckResult:
    """Evaluate one :class:`Check` on the parts (name → DataFrame).

    ``cache`` (a dict shared between calls on the same parts) keeps per-part hashes and sets so
    a split with many overlapping checks (time splits) reads each part once.
    """
    missing = [n for n in check.parts + check.other if n not in parts]
    if missing:
        return CheckResult(check.name, check.describe(), False, len(missing), [f"missing part {m}" for m in missing])
    violations = 0
    examples: list[str] = []
    if check.name == "disjoint_reactions":
        violations, examples = _check_disjoint_reactions(parts, check.parts, cache)
    elif check.name == "disjoint_documents":
        shared = _documents_of(parts, check.parts, cache) & _documents_of(parts, check.other, cache)
        violations, examples = len(shared), sorted(shared)[:5]
    elif check.name == "disjoint_authors":
        shared = _authors_of(parts, check.parts, cache) & _authors_of(parts, check.other, cache)
        violations, examples = len(shared), sorted(shared)[:5]
    elif check.name == "novel_author_each":
        seen = _authors_of(parts, check.other, cache)
        for n in check.parts:
            for cell in parts[n]["authors"].tolist():
                names = set(split_authors(cell))
                if not names - seen:
                    violations += 1
                    if len(examples) < 5:
                        examples.append(f"{n}: {cell}")
    elif check.name in ("year_at_most", "year_equals"):
        for n in check.parts:
            years = parts[n]["year"].to_numpy(dtype="float64", na_value=np.nan)
            bad = np.isnan(years) | ((years > check.value) if check.name == "year_at_most" else (years != check.value))
            violations += int(bad.sum())
            examples += [f"{n}: year {y}" for y in years[bad][:3]]
    elif check.name in ("no_class", "all_class"):
        prefixes = list(check.value)
        for n in check.parts:
            codes = parts[n]["class_code"].astype(object)
            unique = pd.unique(codes)
            hit = {code: class_matches(code, prefixes) for code in unique}
            matched = codes.map(hit).fillna(False).to_numpy(dtype=bool)
            bad = matched if check.name == "no_class" else ~matched
            violations += int(bad.sum())
            examples += [f"{n}: class {c}" for c in codes[bad].head(3)]
    else:
        raise ValueError(f"unknown check {check.name!r}")
    return CheckResult(check.name, check.describe(), violations == 0, int(violations), examples[:5])


def verify_parts(parts: Mapping[str, pd.DataFrame], kind: str, config: Mapping[str, Any]) -> list[CheckResult]:
    """Run every guarantee of the split kind on in-memory parts."""
    cache: dict = {}
    return [run_check(check, parts, cache) for check in guarantees(kind, config, list(parts))]


# --------------------------------------------------------------------------------------
# Split folders


_VERIFY_COLUMNS = ("document_id", "authors", "year", "class_code")


def read_manifest(directory: str | Path) -> dict:
    """The manifest of a split folder; a clear error when it is missing or unreadable."""
    folder = Path(directory)
    path = folder / MANIFEST
    if not folder.is_dir():
        raise UserInputError(f"{folder}: no such split folder")
    if not path.is_file():
        raise UserInputError(f"{folder}: no {MANIFEST}; is this a folder written by 'reaction-ood split'?")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        raise UserInputError(f"{path}: not a readable manifest ({exc})") from None
    for key in ("kind", "config", "parts"):
        if key not in manifest:
            raise UserInputError(f"{path}: manifest lacks {key!r}")
    return manifest


def verify_split_dir(directory: str | Path) -> tuple[dict, list[CheckResult]]:
    """Check every file of a split folder against its manifest and every guarantee of its kind."""
    folder = Path(directory)
    manifest = read_manifest(folder)
    results: list[CheckResult] = []
    parts: dict[str, pd.DataFrame] = {}
    cache: dict = {}

    def texts_of(name: str) -> list[str]:
        # reaction texts are read again only where two parts' keys meet (a failing check)
        table = pq.read_table(folder / manifest["parts"][name]["file"], columns=["rxn_smiles"])
        return [str(s) for s in table.column(0).to_pylist()]

    cache["text_loader"] = texts_of
    for name, entry in manifest["parts"].items():
        path = folder / entry["file"]
        check = Check("file", (name,))
        if not path.is_file():
            results.append(CheckResult("file", check.describe(), False, 1, [f"{path} is missing"]))
            continue
        problems = []
        digest = sha256_file(path)
        if digest != entry.get("sha256"):
            problems.append(f"sha256 {digest} != manifest {entry.get('sha256')}")
        parquet = pq.ParquetFile(path)
        keys = [reaction_keys(batch.column(0).to_pylist())
                for batch in parquet.iter_batches(batch_size=250_000, columns=["rxn_smiles"])]
        cache[("keys", name)] = np.unique(np.concatenate(keys) if keys else np.zeros(0, np.uint64))
        frame = pd.read_parquet(path, columns=list(_VERIFY_COLUMNS))
        if len(frame) != entry.get("rows"):
            problems.append(f"{len(frame)} rows != manifest {entry.get('rows')}")
        results.append(CheckResult("file", check.describe(), not problems, len(problems), problems))
        parts[name] = frame
    for check in guarantees(manifest["kind"], manifest["config"], list(manifest["parts"])):
        results.append(run_check(check, parts, cache))
    return manifest, results


def results_as_dicts(results: Sequence[CheckResult]) -> list[dict]:
    """JSON-ready form of check results."""
    return [asdict(r) for r in results]
