"""The suite's data layer: where reactions come from, and the registry loader of its datasets.

A reaction source is one of

* a registered dataset name: ``uspto-15k`` (bundled) or ``uspto-mit`` (downloaded once from
  its official URL; a zip whose members ``train.txt``, ``valid.txt``, ``test.txt`` are read
  in place);
* a folder holding ``train``, ``valid`` and ``test`` files (``.txt``, ``.txt.gz``, ``.smi``,
  ``.rsmi``, optionally gzipped);
* one text file (``.txt``/``.gz``) or a zip, read as a single split ``all`` (or as its
  train/valid/test members);
* reaction lines in memory: a list of strings (split ``all``) or a dict ``{split: lines}``
  (the Python API).

Each line holds a reaction SMILES (``reactants>reagents>products``; atom maps allowed) or a
reaction of bags (``{1}O=C=O.{4}[H][H]>>{1}C.{2}O``), optionally followed by whitespace and a
reaction-edits field (USPTO-15K / USPTO-MIT). Blank lines and ``#`` comments are skipped.
Files are read through :mod:`chemassay.data.readers`, so a binary, non-UTF-8 or truncated
gzip file is a one-line :class:`~chemassay.contract.errors.UserInputError` naming it.

:func:`load_uspto` is the registry loader of ``uspto-15k`` and ``uspto-mit``
(``chemassay.load_dataset("uspto-15k", part="test")``).
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import InputRef
from chemassay.data import get_spec
from chemassay.data.readers import open_text, text_read_error
from chemassay.data.registry import dataset_file
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
        """``(line_number, text)`` of every non-blank, non-comment line; a file that cannot be
        read as text (binary, not UTF-8, truncated gzip or zip member) is a one-line
        :class:`UserInputError` naming it."""
        if self.member is None:
            with open_text(self.path) as handle:
                yield from _content_lines(handle)
            return
        number = 0
        try:
            with zipfile.ZipFile(self.path) as archive, archive.open(self.member) as raw:
                handle = io.TextIOWrapper(raw, encoding="utf-8")
                for number, text in _content_lines(handle):
                    yield number, text
        except (UnicodeDecodeError, EOFError, zlib.error, zipfile.BadZipFile) as exc:
            raise UserInputError(text_read_error(self.describe(), exc, line=number + 1)) from None


@dataclass(frozen=True)
class MemorySplit:
    """One split of reaction lines handed over in memory (the Python API)."""

    split: str
    texts: tuple[str, ...]
    path: None = None
    member: None = None

    def describe(self) -> str:
        return f"<memory:{self.split}>"

    def lines(self) -> Iterator[tuple[int, str]]:
        """``(position, text)`` of every non-blank, non-comment item (1-based positions)."""
        for number, line in enumerate(self.texts, start=1):
            text = line.strip()
            if text and not text.startswith("#"):
                yield number, text


def _content_lines(handle) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(handle, start=1):
        text = line.strip()
        if text and not text.startswith("#"):
            yield number, text


@dataclass(frozen=True)
class ReactionSource:
    """A resolved source: its name, its split files, and references for result files."""

    name: str
    files: tuple[SplitFile | MemorySplit, ...]
    dataset: str | None = None

    def split(self, name: str) -> SplitFile | MemorySplit:
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
            if entry.path is not None and entry.path not in seen:
                seen[entry.path] = InputRef(path=str(entry.path), sha256=sha256_file(entry.path))
        return list(seen.values())


def source_info(source: ReactionSource) -> dict:
    """JSON-ready description of a source for manifests: name, dataset, and each split's file
    (or ``<memory:split>``) with its sha256 (of the lines joined by newlines, for memory)."""
    refs = {ref.path: ref.sha256 for ref in source.input_refs()}
    files = []
    for entry in source.files:
        if entry.path is None:
            digest = hashlib.sha256("\n".join(entry.texts).encode("utf-8")).hexdigest()
        else:
            digest = refs[str(entry.path)]
        files.append({"split": entry.split, "path": entry.describe(), "sha256": digest})
    return {"name": source.name, "dataset": source.dataset, "files": files}


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


ReactionsLike = str | os.PathLike | Iterable[str] | Mapping[str, Iterable[str]] | ReactionSource
"""What every entry point that reads reactions accepts: a dataset name (or alias), a folder,
a file, a list of reaction lines, a dict ``{split: lines}``, or a resolved source."""


def _memory_source(source: Iterable[str] | Mapping[str, Iterable[str]]) -> ReactionSource:
    groups = source.items() if isinstance(source, Mapping) else [("all", source)]
    files = []
    for split, lines in groups:
        if isinstance(lines, (str, bytes)):
            raise UserInputError(f"reactions of split {split!r}: expected a list of reaction lines, got one string")
        texts = tuple(lines)
        bad = next((type(t).__name__ for t in texts if not isinstance(t, str)), None)
        if bad:
            raise UserInputError(f"reactions of split {split!r}: expected strings, got {bad}")
        files.append(MemorySplit(str(split), texts))
    return ReactionSource("<memory>", tuple(files))


def resolve_source(source: ReactionsLike, *, download: bool = True) -> ReactionSource:
    """Resolve a dataset name, a folder, a file or reaction lines in memory into its splits
    (see module doc). Dataset names and aliases are resolved through the registry."""
    if isinstance(source, ReactionSource):
        return source
    if not isinstance(source, (str, os.PathLike)):
        return _memory_source(source)
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
        name = spec.name
        names = [f.name for f in spec.files]
        if names == ["data.zip"]:
            return ReactionSource(name, _zip_splits(dataset_file(name, "data.zip", download=download)), name)
        files = []
        for split in SPLITS:
            found = next((n for n in names if n.split(".")[0] == split), None)
            if found:
                files.append(SplitFile(split, dataset_file(name, found, download=download)))
        if not files:
            raise UserInputError(f"dataset {name!r} has no train/valid/test reaction files")
        return ReactionSource(name, tuple(files), name)
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


def load_uspto(name: str, part: str | None = None, *, limit: int | None = None) -> list[str] | dict[str, list[str]]:
    """The registry loader of ``uspto-15k`` and ``uspto-mit``: their reaction lines.

    A line is ``reaction_smiles edits`` as in the published files (atom-mapped reaction SMILES
    and the reaction-edits field). With ``part`` (``train``, ``valid`` or ``test``) the lines of
    that split, else a dict of all three; ``limit`` keeps the first lines of each split.
    ``uspto-mit`` is downloaded on first use. Called through ``chemassay.load_dataset(name,
    part=...)``; the lists can be handed back to :func:`chemassay.stoichiometry.balance`.
    """
    source = resolve_source(get_spec(name).name)
    splits = [source.split(part)] if part is not None else list(source.files)
    loaded: dict[str, list[str]] = {}
    for entry in splits:
        lines: list[str] = []
        for _, text in entry.lines():
            if limit is not None and len(lines) >= limit:
                break
            lines.append(text)
        loaded[entry.split] = lines
    return loaded[part] if part is not None else loaded
