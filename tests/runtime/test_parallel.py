import math
import os

import pytest

from chemassay.chem import canonical_smiles
from chemassay.runtime import Failure, atomic_write_text, atomic_writer, parallel_map, sha256_file


def test_serial_map_keeps_order_and_captures_failures():
    results = parallel_map(canonical_smiles, ["OCC", "C1CC", "c1ccccc1"], n_jobs=1)
    assert results[0] == "CCO" and results[2] == "c1ccccc1"
    assert isinstance(results[1], Failure)
    assert results[1].index == 1 and results[1].error_type == "InvalidSmiles"
    assert "syntax" in results[1].message


def test_process_pool_matches_serial():
    items = ["OCC", "C1CC", "CCN", "c1ccncc1", "C(C)(C)(C)(C)C"] * 20
    serial = parallel_map(canonical_smiles, items, n_jobs=1)
    parallel = parallel_map(canonical_smiles, items, n_jobs=2, chunk_size=7)
    assert [str(r) for r in serial] == [str(r) for r in parallel]
    assert sum(isinstance(r, Failure) for r in parallel) == 40
    assert [r.index for r in parallel if isinstance(r, Failure)] == [i for i, s in enumerate(items) if s in ("C1CC", "C(C)(C)(C)(C)C")]


def test_dask_backend_in_process():
    pytest.importorskip("distributed")
    results = parallel_map(math.sqrt, [4.0, -1.0, 9.0], scheduler="dask-local", chunk_size=1)
    assert results[0] == 2.0 and results[2] == 3.0
    assert isinstance(results[1], Failure) and results[1].error_type == "ValueError"


def test_atomic_write_leaves_old_file_on_error(tmp_path):
    target = tmp_path / "out.txt"
    atomic_write_text(target, "first")
    with pytest.raises(RuntimeError):
        with atomic_writer(target) as handle:
            handle.write("half")
            raise RuntimeError("crash")
    assert target.read_text() == "first"
    assert os.listdir(tmp_path) == ["out.txt"]
    assert sha256_file(target) == "a7937b64b8caa58f03721bb6bacf5c78cb235febe0e70b1b84cd99541461a08e"


def test_atomic_write_gives_the_usual_file_mode(tmp_path):
    umask = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "shared.txt", "x")
        assert (tmp_path / "shared.txt").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(umask)


def _self_similarity_sum(seed: int) -> float:
    import numpy as np

    from chemassay.chem import tanimoto_matrix

    rng = np.random.default_rng(seed)
    packed = rng.integers(0, 2**63, size=(64, 16), dtype=np.uint64)
    return float(np.trace(tanimoto_matrix(packed, backend="auto")))


def test_workers_can_use_torch_after_the_parent_did():
    torch = pytest.importorskip("torch")
    torch.set_num_threads(2)
    assert _self_similarity_sum(0) == 64.0  # the parent's torch thread pool is now running
    results = parallel_map(_self_similarity_sum, [1, 2, 3, 4], n_jobs=2, chunk_size=1)
    assert results == [64.0, 64.0, 64.0, 64.0]
