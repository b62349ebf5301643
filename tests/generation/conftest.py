"""Fixtures of the generation tests: bundled MOSES samples and small reference sets."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


@pytest.fixture(autouse=True, scope="module")
def _own_chemassay_home(tmp_path_factory):
    """Every test module gets its own empty ``$CHEMASSAY_HOME`` (caches are built there, never
    in the user's), still finding the fetched MOSES files through ``$CHEMASSAY_DATA``."""
    from chemassay.data import locate

    found = locate("moses", "test_stats.npz")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CHEMASSAY_HOME", str(tmp_path_factory.mktemp("chemassay-home")))
        if found is not None:
            patch.setenv("CHEMASSAY_DATA", str(found.parent.parent))
        yield


@pytest.fixture
def moses_home(tmp_path, monkeypatch):
    """An empty ``$CHEMASSAY_HOME`` (every cache starts empty) that still finds the fetched
    MOSES files (through ``$CHEMASSAY_DATA``, a registered local source); skips without them."""
    from chemassay.data import locate

    found = locate("moses", "test_stats.npz")
    if found is None:
        pytest.skip("MOSES not fetched (chemassay data fetch moses)")
    home = tmp_path / "chemassay-home"
    monkeypatch.setenv("CHEMASSAY_DATA", str(found.parent.parent))
    monkeypatch.setenv("CHEMASSAY_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def small_reference() -> list[str]:
    """40 molecules of the MOSES test set (a reference set that is quick to describe)."""
    from chemassay.data.readers import read_smiles_file

    return read_smiles_file(DATA / "moses_test_300.txt").smiles[:40]


@pytest.fixture(scope="session")
def train_2000() -> Path:
    return DATA / "moses_train_2000.txt"
