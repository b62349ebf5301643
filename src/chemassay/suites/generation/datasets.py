"""The datasets the generation suite owns: MOSES (fetched from its official location or the
``molsets`` wheel on PyPI).
"""

from __future__ import annotations

from chemassay.data.registry import (
    DataFile,
    DatasetSpec,
    LocalDirSource,
    UrlSource,
    WheelSource,
)

MOSES_FILES = {
    "train.csv.gz": ("786f0313aa6b9ba5514df685f885742a70ea8d86f1a4fa48115f7f80a634265c", 10238967),
    "test.csv.gz": ("f896fbf3764f88d94670b9959e5872c600c12152a18233823e820761b7a791b2", 1367572),
    "test_scaffolds.csv.gz": ("adffb2192c1bfe31ab0e13154d4af19a37dc18bdbf3cd7b4491e04405128adde", 1274114),
    "test_stats.npz": ("ded25073225a895d4ed17bf1d4223d27560e87ff4cb85786346ca1cc8efa03d3", 16781400),
    "test_scaffolds_stats.npz": ("7b7aba6c1474634a019bebf16f389d554cb9dd1021dfc8c1d1e54430a9f0e7f8", 15949706),
}

DATASETS: tuple[DatasetSpec, ...] = (
    DatasetSpec(
        name="moses",
        description=(
            "MOSES benchmark: train 1,584,663 / test 176,074 / scaffold test 176,225 SMILES (the paper "
            "prints 1,584,664 / 176,075 / 176,226: the files' line counts with their header), plus the "
            "authors' precomputed reference statistics of both test sets."
        ),
        license="MIT (molecularsets/moses)",
        citation=(
            "Polykovskiy D. et al., Molecular Sets (MOSES): A Benchmarking Platform for Molecular "
            "Generation Models. Front. Pharmacol. 11, 565644 (2020)."
        ),
        files=tuple(DataFile(name, sha, size) for name, (sha, size) in MOSES_FILES.items()),
        sources=(
            LocalDirSource("$CHEMASSAY_DATA/moses"),
            UrlSource(
                "https://media.githubusercontent.com/media/molecularsets/moses/master/moses/dataset/data/"
            ),
            WheelSource(
                "molsets", "0.3.1", {name: f"moses/dataset/data/{name}" for name in MOSES_FILES}
            ),
        ),
        suites=("generation", "robustness"),
        loader="chemassay.suites.generation.data:load_moses",
        parts=("train", "test", "test_scaffolds"),
    ),
)
