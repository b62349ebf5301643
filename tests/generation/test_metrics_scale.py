"""The million-molecule path, tested on small inputs: streamed reading, chunks, resume,
a local Dask cluster, the IntDiv estimate and the GPU code path (on CPU tensors)."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import read_smiles_file
from chemassay.suites.generation import stream
from chemassay.suites.generation.metrics import evaluate_samples
from chemassay.suites.generation.reference import load_stats

pytest.importorskip("fcd_torch", reason="FCD needs the torch extra")

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"
TEST_STATS = DATA / "moses_test_300.stats.npz"
SCAFFOLD_STATS = DATA / "moses_test_scaffolds_300.stats.npz"
FCD_TOL = 1e-5
"""ChemNet batches hold other molecules when the chunks differ, so activations move by float32
rounding (~1e-7 in FCD here); every other metric is identical to 1e-12."""


@pytest.fixture(scope="module")
def gen():
    return read_smiles_file(DATA / "moses_gen_310.txt").smiles[:120]


def _evaluate(smiles, **options):
    return evaluate_samples(smiles, test=load_stats(TEST_STATS), scaffold_test=load_stats(SCAFFOLD_STATS),
                            train=DATA / "moses_train_2000.txt", unique_k=(50,), **options)


@pytest.fixture(scope="module")
def whole(gen):
    return _evaluate(gen)


@pytest.mark.parametrize("text", [
    "# comment\nSMILES\nCCO name\n\nc1ccccc1\t42\nC1CC\n" + "CCN\n" * 5,
    "id,SMILES,score\n1,CCO,3\n2,,4\n\n3,c1ccccc1,5\n4,\"C(=O)O\",6\n",
    "SMILES\tname\nCCO\ta\nCCN\tb\n",
    "CCO\r\nCCN\rCCC\x0bCCCl\n",
])
@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
def test_streamed_reading_equals_the_one_reader(tmp_path, text, suffix):
    path = tmp_path / ("input" + suffix)
    if suffix.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, newline="")
    expected = read_smiles_file(path)
    chunks = list(stream.iter_smiles_file(path, chunk_rows=2))
    assert [s for c in chunks for s in c.smiles] == expected.smiles
    assert [n for c in chunks for n in c.lines] == expected.lines
    assert all(len(c.smiles) <= 2 for c in chunks)


def test_chunked_values_equal_the_single_chunk(gen, whole):
    chunked = _evaluate(gen, chunk_rows=17)  # duplicates across chunks, invalid strings in several
    assert chunked.chunks == math.ceil(len(gen) / 17)
    for key, value in whole.metrics.items():
        tolerance = FCD_TOL if key.startswith("FCD") else 1e-12
        assert chunked.metrics[key] == pytest.approx(value, abs=tolerance), key
    assert [(i.index, i.smiles) for i in chunked.invalid] == [(i.index, i.smiles) for i in whole.invalid]
    assert chunked.item_scores == whole.item_scores
    assert sorted(chunked.properties["QED"]) == sorted(whole.properties["QED"])


def test_an_interrupted_run_resumes_from_its_chunk_files(gen, whole, tmp_path, monkeypatch):
    work = tmp_path / "work"
    calls = {"n": 0}
    real = stream._process_chunk

    def dies_on_the_fourth_chunk(k, *args, **kwargs):
        calls["n"] += 1
        if k == 3:
            raise KeyboardInterrupt
        return real(k, *args, **kwargs)

    monkeypatch.setattr(stream, "_process_chunk", dies_on_the_fourth_chunk)
    with pytest.raises(KeyboardInterrupt):
        _evaluate(gen, chunk_rows=20, work_dir=work)
    finished = sorted(p.name for p in work.glob("chunk-*.json"))
    assert finished[:2] == ["chunk-000000.json", "chunk-000001.json"]  # chunk 2 too, unless still running
    assert "chunk-000003.json" not in finished
    monkeypatch.setattr(stream, "_process_chunk", real)
    resumed = _evaluate(gen, chunk_rows=20, work_dir=work)
    assert resumed.resumed_chunks == len(finished) and resumed.chunks == 6
    for key, value in whole.metrics.items():
        assert resumed.metrics[key] == pytest.approx(value, abs=FCD_TOL if key.startswith("FCD") else 1e-12), key
    # A damaged chunk file is reported and computed again, never used.
    (work / "chunk-000001.npz").write_bytes(b"not an npz")
    again = _evaluate(gen, chunk_rows=20, work_dir=work)
    assert again.resumed_chunks == 5
    assert again.metrics["SNN/Test"] == pytest.approx(whole.metrics["SNN/Test"], abs=1e-12)


def test_a_work_folder_of_another_run_is_refused(gen, tmp_path):
    work = tmp_path / "work"
    _evaluate(gen[:30], chunk_rows=20, work_dir=work)
    with pytest.raises(UserInputError, match="another --work-dir"):
        _evaluate(gen[:40], chunk_rows=20, work_dir=work)
    manifest = json.loads((work / "manifest.json").read_text())
    assert manifest["chunk_rows"] == 20


def test_local_dask_cluster_gives_the_same_values(gen, whole):
    pytest.importorskip("distributed")
    on_cluster = _evaluate(gen, scheduler="dask-local", chunk_rows=60)
    for key, value in whole.metrics.items():
        assert on_cluster.metrics[key] == pytest.approx(value, abs=FCD_TOL if key.startswith("FCD") else 1e-12), key


def test_intdiv_estimate_above_the_limit_is_marked_and_close(gen, whole):
    estimated = _evaluate(gen, intdiv_exact_max=10)
    info = estimated.estimates["IntDiv"]
    assert info["rows"] > 0 and "estimate" in info["method"]
    assert any("IntDiv and IntDiv2 are estimates" in w for w in estimated.warnings)
    for key in ("IntDiv", "IntDiv2"):
        low, high = info[key]["low"], info[key]["high"]
        assert low <= estimated.metrics[key] <= high
        assert abs(estimated.metrics[key] - whole.metrics[key]) < 0.01
    assert not whole.estimates
    # The same seed gives the same estimate.
    assert _evaluate(gen, intdiv_exact_max=10).metrics["IntDiv"] == estimated.metrics["IntDiv"]


def test_gpu_code_path_on_cpu_tensors_matches():
    """``device`` code (float32 products on a torch device, float64 sums) run with device='cpu' tensors."""
    torch = pytest.importorskip("torch")
    from chemassay.chem.fingerprints import pack_bits, popcount, unpack_bits
    from chemassay.chem.similarity import tanimoto_matrix
    from chemassay.suites.generation.pairs import (
        _device_power_sums,
        device_max_tanimoto,
        internal_diversities,
    )

    rng = np.random.default_rng(5)
    dense = (rng.random((300, 1024)) < 0.04).astype(np.uint8)
    dense[4] = 0
    packed = pack_bits(dense)
    queries, refs = packed[:80], packed[80:]
    expected = tanimoto_matrix(queries, refs).max(axis=1)
    rows = torch.from_numpy(unpack_bits(refs)).float()
    got = device_max_tanimoto(queries, rows, rows.sum(1), refs, block_rows=16, block_cols=64)
    assert np.array_equal(got, expected)
    weights = rng.integers(1, 4, len(packed)).astype(np.float64)
    sums = _device_power_sums(packed, weights, (1, 2), "cpu", block=64)
    intdiv = 1.0 - float(np.sum(weights * sums[1])) / weights.sum() ** 2
    assert intdiv == pytest.approx(internal_diversities(packed, weights)[0], abs=1e-13)
    assert popcount(packed[4:5])[0] == 0


def test_threads_do_not_change_values(gen, whole):
    single = _evaluate(gen, n_threads=1, chunk_rows=50)
    for key, value in whole.metrics.items():
        assert single.metrics[key] == pytest.approx(value, abs=FCD_TOL if key.startswith("FCD") else 1e-12), key
