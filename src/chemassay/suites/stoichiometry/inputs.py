"""Where reactions come from: registered datasets, folders of split files, single files.

A reaction source is one of

* a registered dataset name: ``uspto-15k`` (bundled) or ``uspto-mit`` (downloaded once from
  its official URL; a zip whose members ``train.txt``, ``valid.txt``, ``test.txt`` are read
  in place);
* a folder holding ``train``, ``valid`` and ``test`` files (``.txt``, ``.txt.gz``, ``.smi``,
  ``.rsmi``, optionally gzipped);
* one text file (``.txt``/``.gz``) or a zip, read as a single split ``all`` (or as its
  train/valid/test members).

Each line holds a reaction SMILES (``reactants>reagents>products``; atom maps allowed) or a
reaction of bags (``{1}O=C=O.{4}[H][H]>>{1}C.{2}O``), optionally followed by whitespace and a
reaction-edits field (USPTO-15K / USPTO-MIT). Blank lines and ``#`` comments are skipped.
"""

from __future__ import annotations

import gzip
import io
import os
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from chemassay.data import get_spec
from chemassay.data.registry import dataset_file
from chemassay.errors import UserInputError
from chemassay.report.result import InputRef
from chemassay.runtime.files import sha256_file

SPLITS = ("train", "valid", "test")
_SUFFIXES = (".txt", ".txt.gz", ".smi", ".smi.gz", ".rsmi", ".rsmi.gz", ".gz")


@dataclass(frozen=True)
class SplitFile:
    """One split of a reaction source: a plain/gzipped file, or a member of a zip."""

    split: str
    path: Path
    member: str | None = None

    def describe(self) -> str:
        return f"{self.path}:{self.member}" if self.member else str(self.path)

    def lines(self) -> Iterator[tuple[int, str]]:
        """``(line_number, text)`` of every non-blank, non-comment line."""
        if self.member is not None:
            with zipfile.ZipFile(self.path) as archive, archive.open(self.member) as raw:
                handle = io.TextIOWrapper(raw, encoding="utf-8")
                yield from _content_lines(handle)
            return
        opener = gzip.open if self.path.suffix == ".gz" else open
        with opener(self.path, "rt", encoding="utf-8") as handle:
            yield from _content_lines(handle)


def _content_lines(handle) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(handle, start=1):
        text = line.strip()
        if text and not text.startswith("#"):
            yield number, text


@dataclass(frozen=True)
class ReactionSource:
    """A resolved source: its name, its split files, and references for result files."""

    name: str
    files: tuple[SplitFile, ...]
    dataset: str | None = None

    def split(self, name: str) -> SplitFile:
        for entry in self.files:
            if entry.split == name:
                return entry
        raise UserInputError(
            f"{self.name}: no {name!r} split (it has {[f.split for f in self.files]}); "
            f"pass a dataset name or a folder with {', '.join(s + '.txt' for s in SPLITS)}"
        )

    def input_refs(self) -> list[InputRef]:
        seen: dict[Path, InputRef] = {}
        for entry in self.files:
            if entry.path not in seen:
                seen[entry.path] = InputRef(path=str(entry.path), sha256=sha256_file(entry.path))
        return list(seen.values())


def _zip_splits(path: Path) -> tuple[SplitFile, ...]:
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if not n.endswith("/")]
    except zipfile.BadZipFile:
        raise UserInputError(f"{path}: not a readable zip file") from None
    found = []
    for split in SPLITS:
        member = next((n for n in names if Path(n).name in (f"{split}.txt", f"{split}.txt.proc")), None)
        if member:
            found.append(SplitFile(split, path, member))
    if not found:
        raise UserInputError(f"{path}: the zip holds no train.txt/valid.txt/test.txt")
    return tuple(found)


def resolve_source(source: str | os.PathLike, *, download: bool = True) -> ReactionSource:
    """Resolve a dataset name, a folder or a file into its split files (see module doc)."""
    text = str(source)
    path = Path(text).expanduser()
    if not path.exists() and os.sep not in text and "." not in Path(text).name:
        try:
            spec = get_spec(text)
        except UserInputError:
            raise UserInputError(
                f"{text}: no such file or folder, and not a registered dataset "
                f"(try 'uspto-15k', 'uspto-mit', a folder with train/valid/test files or a reaction file)"
            ) from None
        names = [f.name for f in spec.files]
        if names == ["data.zip"]:
            return ReactionSource(text, _zip_splits(dataset_file(text, "data.zip", download=download)), text)
        files = []
        for split in SPLITS:
            name = next((n for n in names if n.split(".")[0] == split), None)
            if name:
                files.append(SplitFile(split, dataset_file(text, name, download=download)))
        if not files:
            raise UserInputError(f"dataset {text!r} has no train/valid/test reaction files")
        return ReactionSource(text, tuple(files), text)
    if path.is_dir():
        files = []
        for split in SPLITS:
            match = next((path / (split + s) for s in _SUFFIXES if (path / (split + s)).is_file()), None)
            if match:
                files.append(SplitFile(split, match))
        if not files:
            raise UserInputError(
                f"{path}: folder has no train/valid/test reaction files (expected train.txt, valid.txt, test.txt)"
            )
        return ReactionSource(str(path), tuple(files))
    if path.is_file():
        if path.suffix == ".zip":
            return ReactionSource(str(path), _zip_splits(path))
        return ReactionSource(str(path), (SplitFile("all", path),))
    raise UserInputError(f"{path}: no such file or folder")
