"""The stoichiometry suite's part in ``chemassay assay``: ChemAlgebra's headline test sets.

* **bag-predictor** (ChemAlgebra Tables 4 and 10): the four ``x1`` variants built from the
  bundled USPTO-15K (``formula_t1_x1``, ``formula_t2_x1``, ``smiles_t1_x1``,
  ``smiles_t2_x1``), each on its ``test_in``, ``test_cross`` and ``test_out`` split: twelve
  tasks, 14,114 items per variant. The ``x5`` variants are left out: they differ from the
  ``x1`` ones only in how many times each *training* reaction is written, and their test files
  hold the same reactions with coefficients drawn again from the same ranges, so for a model
  the assay does not train they would measure the same thing twice (and double an endpoint's
  requests).
* **reaction-predictor** (ChemAlgebra Table 2): USPTO-15K's test split as read (``uspto``),
  re-balanced (``uspto-bal``) and as USPTO-T1 and USPTO-T2, the model's top-1 product scored
  as a bag (ACC, ALO, VAL and the mass balance of Tables 6-9).

A model implementing both protocols gets both. The data is built by the tasks themselves,
once: every variant (and the four Table 2 sets) is built in one pass, archived in the chemassay
cache (``stoichiometry/assay-data``) keyed by the dataset's and the by-product library's
checksums, the seed and the chemassay version, and unpacked under the assay's folder
(``data/<variant>/``, checked against its manifest's sha256 sums), so a second assay, of any
model, reuses it.

The built-in baseline is ``copy-coefficient``, ChemAlgebra's T1 shortcut: it memorises the
species of the variant's training pairs (``train`` for ``test_in``/``test_out``,
``train_cross`` for ``test_cross``; the task builds them) and gives every product the input's
most common coefficient. It is the pattern-matching the suite is built to expose: right on most
T1 reactions it has seen, wrong on T2, where its products are unbalanced (the alchemy gallery
shows them). ``algebraic`` (the same memory, the reaction vector solved from the element
matrix: exact wherever it knows the species, and always balanced) runs the same way with
``--model algebraic``.

``--quick`` builds ``formula_t1_x1`` and the Table 2 sets from the first 120 reactions of each
split of USPTO-15K and scores the first 40 lines of each test file: three bag-predictor tasks
and four reaction-predictor tasks of 40 items.

``--limit N`` scores a seeded subset of at most ``N`` lines of each test file (the same lines
for every model with the same seed; the item ids stay the file's line numbers). Every task is
one variant and one split, so there are no strata to keep within a task: the variants and
splits are kept apart by the tasks themselves.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chemassay.contract.assay import AssayContext, AssayTask, SuiteAssay, TaskItems
from chemassay.contract.result import Result
from chemassay.data import get_spec
from chemassay.data.readers import iter_lines
from chemassay.report.intervals import metric_interval
from chemassay.report.subsets import task_subset
from chemassay.runtime.cache import cached_file
from chemassay.runtime.files import sha256_file
from chemassay.runtime.progress import info
from chemassay.suites.stoichiometry.api import build_table2, evaluate
from chemassay.suites.stoichiometry.data import resolve_source, source_info
from chemassay.suites.stoichiometry.library import load_library
from chemassay.suites.stoichiometry.scoring import encoding_for
from chemassay.suites.stoichiometry.variants import VariantConfig, build_variants

HEADLINE_VARIANTS = ("formula_t1_x1", "formula_t2_x1", "smiles_t1_x1", "smiles_t2_x1")
"""The ChemAlgebra variants of the full assay (see the module docstring for why only ``x1``)."""
SPLITS = ("test_in", "test_cross", "test_out")
TABLE2_SETS = ("uspto", "uspto-bal", "uspto-t1", "uspto-t2")
QUICK_VARIANTS = ("formula_t1_x1",)
QUICK_REACTIONS = 120
"""Reactions read from each split of USPTO-15K for the quick build."""
QUICK_ITEMS = 40
"""Lines scored per quick task."""
SEED = 0
DATASET = "uspto-15k"
FULL_ITEMS = {"test_in": 2553, "test_cross": 9008, "test_out": 2553}
"""Lines of each test file of a variant built from the whole of USPTO-15K (2,553 balanced or
re-balanced test reactions; test_cross: the 9,008 training ones), measured."""
TABLE2_ITEMS = {"uspto": 3000, "uspto-bal": 2553, "uspto-t1": 3000, "uspto-t2": 3000}
"""Lines of Table 2's test sets built from USPTO-15K's 3,000 test reactions, measured."""
CACHE_NAMESPACE = "stoichiometry/assay-data"

QUICK_NOTE = (f"{', '.join(QUICK_VARIANTS)} (test_in, test_cross, test_out) and Table 2's four test sets, built from "
              f"the first {QUICK_REACTIONS} reactions of each USPTO-15K split; the first {QUICK_ITEMS} lines of each")


def _data_key(what: str, names: tuple[str, ...], quick: bool) -> dict[str, Any]:
    """What a cached build is computed from: the dataset and library checksums, the build's
    settings and the chemassay version (the generator's code)."""
    from chemassay import __version__

    return {"what": what, "names": list(names), "seed": SEED, "limit": QUICK_REACTIONS if quick else None,
            "dataset": DATASET, "files": {f.name: f.sha256 for f in get_spec(DATASET).files},
            "library": load_library(None).sha256, "chemassay": __version__}


def _variant_config(name: str):
    """The :class:`~chemassay.suites.stoichiometry.variants.VariantConfig` a variant name stands for."""
    encoding, task, aug = name.split("_")
    return VariantConfig(encoding, task, int(aug.removeprefix("x")), seed=SEED)


def _build_chemalgebra(names: tuple[str, ...], quick: bool, n_jobs: int) -> Callable[[Path], None]:
    def build(archive: Path) -> None:
        from chemassay.suites.stoichiometry.prepare import RebalanceConfig, process_source

        info(f"[stoichiometry] building the ChemAlgebra variants {', '.join(names)} from {DATASET} (once; cached)")
        source = resolve_source(DATASET)
        processed = process_source(source, RebalanceConfig(), limit=QUICK_REACTIONS if quick else None,
                                   n_jobs=n_jobs)
        with tempfile.TemporaryDirectory(dir=archive.parent) as folder:
            root = Path(folder)
            build_variants(processed, [_variant_config(name) for name in names], [root / name for name in names],
                           source_info=source_info(source), n_jobs=n_jobs)
            _archive(root, names, archive)

    return build


def _build_table2(quick: bool, n_jobs: int) -> Callable[[Path], None]:
    def build(archive: Path) -> None:
        info(f"[stoichiometry] building ChemAlgebra Table 2's test sets from {DATASET} (once; cached)")
        with tempfile.TemporaryDirectory(dir=archive.parent) as folder:
            root = Path(folder)
            build_table2(DATASET, root, seed=SEED, limit=QUICK_REACTIONS if quick else None, n_jobs=n_jobs)
            _archive(root, TABLE2_SETS, archive)

    return build


def _archive(root: Path, names: tuple[str, ...], archive: Path) -> None:
    with tarfile.open(archive, "w") as tar:
        for name in names:
            tar.add(root / name, arcname=name)


def _intact(folder: Path, manifest: bytes) -> bool:
    """Whether ``folder`` holds exactly the build of ``manifest`` (every file's sha256)."""
    path = folder / "manifest.json"
    if not path.is_file() or path.read_bytes() != manifest:
        return False
    files = json.loads(manifest)["files"]
    return all((folder / name).is_file() and sha256_file(folder / name) == entry["sha256"]
               for name, entry in files.items())


def _unpack(archive: Path, name: str, dest: Path) -> Path:
    """``dest/name``, unpacked from the cached archive unless it is already there intact."""
    folder = dest / name
    with tarfile.open(archive) as tar:
        member = tar.extractfile(f"{name}/manifest.json")
        if member is None:
            raise RuntimeError(f"{archive}: holds no {name}/manifest.json")
        manifest = member.read()
        if _intact(folder, manifest):
            return folder
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=dest) as temporary:
            members = [m for m in tar.getmembers() if m.name == name or m.name.startswith(name + "/")]
            tar.extractall(temporary, members=members, filter="data")
            shutil.rmtree(folder, ignore_errors=True)
            (Path(temporary) / name).rename(folder)
    return folder


def prepared_folder(name: str, ctx: AssayContext) -> Path:
    """The built folder of a ChemAlgebra variant or a Table 2 set under ``ctx.out_dir/data``
    (quick or full as ``ctx.quick``), built once into the chemassay cache."""
    if name in TABLE2_SETS:
        key = _data_key("table2", TABLE2_SETS, ctx.quick)
        archive = cached_file(CACHE_NAMESPACE, key, _build_table2(ctx.quick, ctx.n_jobs), suffix=".tar")
    else:
        names = QUICK_VARIANTS if ctx.quick else HEADLINE_VARIANTS
        key = _data_key("chemalgebra", names, ctx.quick)
        archive = cached_file(CACHE_NAMESPACE, key, _build_chemalgebra(names, ctx.quick, ctx.n_jobs), suffix=".tar")
    return _unpack(archive, name, Path(ctx.out_dir) / ("data-quick" if ctx.quick else "data"))


def _listing(name: str, split: str, protocol: str) -> Callable[[AssayContext], TaskItems]:
    def listing(ctx: AssayContext) -> TaskItems:
        """The test file's lines (quick: the first :data:`QUICK_ITEMS`), ids their line numbers,
        and the bag notation a text model is asked in (the variant's encoding)."""
        folder = prepared_folder(name, ctx)
        sources = [line for _, line in iter_lines(folder / f"src-{split}.txt")]
        if ctx.quick:
            sources = sources[:QUICK_ITEMS]
        return TaskItems(ids=[str(number) for number in range(1, len(sources) + 1)], items=sources,
                         options={"k": 1} if protocol == "reaction-predictor" else {},
                         context={"encoding": encoding_for(folder / f"tgt-{split}.txt", None)})

    return listing


def _run(name: str, split: str, protocol: str, key: str) -> Callable[[AssayContext], Result]:
    def run(ctx: AssayContext) -> Result:
        folder = prepared_folder(name, ctx)
        context = dict(ctx.model_context)
        if protocol == "bag-predictor":
            # the built-in baselines memorise the variant's training pairs when their spec names no folder
            context.setdefault("train_dir", str(folder))
        predictions = Path(ctx.out_dir) / ("predictions-quick" if ctx.quick else "predictions") / f"{key}.txt"
        predictions.parent.mkdir(parents=True, exist_ok=True)
        lines, subset = None, None
        if ctx.limit is not None:  # a seeded subset of the file's lines, the same for every model
            ids, subset = task_subset(ctx, _listing(name, split, protocol)(ctx).ids)
            lines = [int(i) for i in ids]
        result = evaluate(model=ctx.spec, protocol=protocol, sources=folder / f"src-{split}.txt",
                          reference=folder / f"tgt-{split}.txt",
                          limit=QUICK_ITEMS if ctx.quick and lines is None else None,
                          seed=ctx.seed, context=context, out=predictions, lines=lines)
        return result.model_copy(update={"quick": ctx.quick, "subset": subset})

    return run


class StoichiometryAssay(SuiteAssay):
    """ChemAlgebra's headline test sets for ``chemassay assay`` (see the module docstring)."""

    baseline = "copy-coefficient"
    quick_note = QUICK_NOTE

    def tasks(self, protocols: set[str], *, quick: bool, spec: str, limit: int | None = None) -> list[AssayTask]:
        """Twelve bag-predictor tasks (four variants × in/cross/out) and four reaction-predictor
        tasks (Table 2's test sets); on ``quick`` one variant and 40 items each; with ``limit``
        at most ``limit`` lines each."""
        tasks = []

        def size(full: int) -> int:
            items = QUICK_ITEMS if quick else full
            return min(items, limit) if limit is not None else items

        if "bag-predictor" in protocols:
            for variant in QUICK_VARIANTS if quick else HEADLINE_VARIANTS:
                for split in SPLITS:
                    key = f"{variant}-{split}"
                    tasks.append(AssayTask(
                        key=key, title=f"ChemAlgebra Table 4: {variant} {split}", protocol="bag-predictor",
                        dataset=DATASET, setting={"variant": variant, "split": split}, items=size(FULL_ITEMS[split]),
                        run=_run(variant, split, "bag-predictor", key),
                        listing=_listing(variant, split, "bag-predictor"), headline=("EM",)))
        if "reaction-predictor" in protocols:
            for name in TABLE2_SETS:
                key = f"table2-{name}"
                tasks.append(AssayTask(
                    key=key, title=f"ChemAlgebra Table 2: {name} test set", protocol="reaction-predictor",
                    dataset=DATASET, setting={"variant": name, "split": "test"}, items=size(TABLE2_ITEMS[name]),
                    run=_run(name, "test", "reaction-predictor", key),
                    listing=_listing(name, "test", "reaction-predictor"), headline=("ACC",)))
        return tasks

    def verdict(self, results: list[Result]) -> str:
        """EM per split pooled over the variants, and top-1 ACC per Table 2 set, with intervals."""
        parts = []
        bags = [r for r in results if r.setting.get("variant") and r.setting["variant"] not in TABLE2_SETS]
        if bags:
            variants = sorted({r.setting["variant"] for r in bags})
            cells = [f"{split.removeprefix('test_')} {_pooled(bags, split, 'EM')}" for split in SPLITS
                     if any(r.setting.get("split") == split for r in bags)]
            parts.append(f"EM {' · '.join(cells)} ({len(variants)} variant{'s' if len(variants) > 1 else ''})")
        table2 = [r for r in results if r.setting.get("variant") in TABLE2_SETS]
        if table2:
            cells = [f"{name} {_pooled(table2, None, 'ACC', name)}" for name in TABLE2_SETS
                     if any(r.setting.get("variant") == name for r in table2)]
            parts.append("top-1 ACC " + " · ".join(cells))
        return "; ".join(parts)


def _pooled(results: list[Result], split: str | None, key: str, variant: str | None = None) -> str:
    """``x.x % [low, high]``: the mean of ``key`` over every item of the matching results, with
    the interval of the pooled items its card declares (Wilson: EM and ACC are proportions)."""
    values: list[float] = []
    for result in results:
        if split is not None and result.setting.get("split") != split:
            continue
        if variant is not None and result.setting.get("variant") != variant:
            continue
        values += [v for v in result.item_scores.get(key, []) if v is not None]
    if not values:
        return "–"
    interval = metric_interval(values, suite="stoichiometry", key=key, resamples=1000, seed=0)
    if interval.low is None or interval.high is None:
        return f"{100 * sum(values) / len(values):.1f} %"
    return f"{100 * sum(values) / len(values):.1f} % [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


ASSAY = StoichiometryAssay()
"""The suite's assay (declared in ``suite.py``)."""


DEMO_NOTES = """
The baseline `copy-coefficient` memorises each variant's training pairs and gives every
product the input's most common coefficient (the Type 1 shortcut). On the cross split (the
training reactions with their coefficient ranges swapped) it names the right molecules, so
its exact match shows whether copying coefficients is enough: it is for T1 and fails for T2,
where its predictions make atoms from nowhere (EXC, the gallery). On the in and out splits
(unseen reactions) it has nothing to copy. `--model algebraic` solves the element balance
instead and always balances.
"""
"""What the demo says of this suite's baseline (``Suite.demo_notes``)."""
