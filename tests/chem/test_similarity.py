import numpy as np
import pytest
from rdkit import DataStructs
from rdkit.Chem import rdFingerprintGenerator

from chemassay.chem import (
    intersection_counts,
    max_tanimoto,
    morgan_count_fingerprints,
    morgan_fingerprints,
    pack_bits,
    parse_smiles,
    popcount,
    tanimoto_blocks,
    tanimoto_matrix,
    tanimoto_one_to_many,
    unpack_bits,
)
from chemassay.chem.fingerprints import to_rdkit_bitvect
from chemassay.chem.similarity import BACKENDS, backend_available, resolve_backend
from chemassay.data import dataset_file
from chemassay.data.readers import read_table


@pytest.fixture(scope="module")
def real_smiles():
    frame = read_table(dataset_file("amore-isomers", "qm9_isomers_original.tsv"), sep="\t")
    chebi = read_table(dataset_file("amore-chebi20", "chebi20_original.tsv"), sep="\t")
    return frame["SMILES"].tolist()[:150] + chebi["SMILES"].tolist()[:250]


@pytest.fixture(scope="module")
def rdkit_fps(real_smiles):
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024)
    return [generator.GetFingerprint(parse_smiles(s)) for s in real_smiles]


def test_packed_bits_equal_rdkit_bits(real_smiles, rdkit_fps):
    packed = morgan_fingerprints(real_smiles, radius=2, n_bits=1024)
    assert packed.dtype == np.uint64 and packed.shape == (len(real_smiles), 16)
    for row, expected in zip(packed, rdkit_fps, strict=True):
        assert to_rdkit_bitvect(row) == expected
    assert popcount(packed).tolist() == [fp.GetNumOnBits() for fp in rdkit_fps]


def test_pack_unpack_round_trip():
    rng = np.random.default_rng(1)
    dense = (rng.random((7, 128)) < 0.2).astype(np.uint8)
    assert np.array_equal(unpack_bits(pack_bits(dense)), dense)
    with pytest.raises(ValueError):
        pack_bits(np.zeros((2, 100)))


@pytest.mark.parametrize("backend", [b for b in BACKENDS if backend_available(b)])
def test_tanimoto_matrix_equals_rdkit_bulk_exactly(backend, real_smiles, rdkit_fps):
    packed = morgan_fingerprints(real_smiles, radius=2, n_bits=1024)
    matrix = tanimoto_matrix(packed[:120], packed, backend=backend, block_rows=50)
    for i in range(120):
        expected = np.array(DataStructs.BulkTanimotoSimilarity(rdkit_fps[i], rdkit_fps))
        assert np.array_equal(matrix[i], expected)


def test_one_to_many_and_max(real_smiles, rdkit_fps):
    packed = morgan_fingerprints(real_smiles, radius=2, n_bits=1024)
    sims = tanimoto_one_to_many(packed[3], packed)
    assert np.array_equal(sims, np.array(DataStructs.BulkTanimotoSimilarity(rdkit_fps[3], rdkit_fps)))
    best, index = max_tanimoto(packed[:40], packed[40:], block_rows=16, return_index=True)
    full = tanimoto_matrix(packed[:40], packed[40:])
    assert np.array_equal(best, full.max(axis=1))
    assert np.array_equal(index, full.argmax(axis=1))


def test_blocks_cover_the_matrix(real_smiles):
    packed = morgan_fingerprints(real_smiles[:90], n_bits=512)
    seen = np.zeros(90, dtype=int)
    for rows, block in tanimoto_blocks(packed, packed, block_rows=32):
        seen[rows] += 1
        assert block.shape == (rows.stop - rows.start, 90)
    assert (seen == 1).all()


def test_empty_fingerprints_have_similarity_zero_like_rdkit():
    empty = np.zeros((2, 1), dtype=np.uint64)
    assert tanimoto_matrix(empty).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert DataStructs.TanimotoSimilarity(DataStructs.ExplicitBitVect(64), DataStructs.ExplicitBitVect(64)) == 0.0


def test_intersection_counts_exact_for_dense_vectors():
    # Counts above 256 would be rounded by a bf16 result; every backend must stay exact.
    dense = np.ones((20, 2048), dtype=np.uint8)
    dense[::2, ::3] = 0
    packed = pack_bits(dense)
    expected = dense.astype(np.int64) @ dense.astype(np.int64).T
    for backend in BACKENDS:
        if backend_available(backend):
            assert np.array_equal(intersection_counts(packed, packed, backend=backend), expected)


def test_bf16_backend_is_exact_past_the_bf16_integer_limit():
    # 2,048 set bits per row: full-row counts of 2,048 and 1,365 are far above 256, the
    # largest count a bfloat16 result holds exactly; the 256-bit slices keep them exact.
    if not backend_available("torch-bf16"):
        pytest.skip("torch not installed")
    dense = np.ones((17, 2048), dtype=np.uint8)
    dense[1::2, ::3] = 0
    packed = pack_bits(dense)
    expected = dense.astype(np.int64) @ dense.astype(np.int64).T
    assert expected.max() == 2048
    assert np.array_equal(intersection_counts(packed, packed, backend="torch-bf16"), expected)


def test_auto_backend_is_a_verified_one_and_can_be_forced(monkeypatch):
    chosen = resolve_backend("auto")
    assert chosen in BACKENDS and backend_available(chosen)
    if backend_available("torch-int8"):
        assert chosen in ("torch-int8", "torch-bf16")  # the timed choice between the two
    monkeypatch.setenv("CHEMASSAY_SIMILARITY_BACKEND", "numpy-popcount")
    assert resolve_backend("auto") == "numpy-popcount"


def test_unknown_backend_rejected():
    with pytest.raises(ValueError):
        resolve_backend("gpu-magic")


def test_count_fingerprints_match_rdkit(real_smiles):
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    counts = morgan_count_fingerprints(real_smiles[:20])
    for smiles, row in zip(real_smiles[:20], counts, strict=True):
        expected = generator.GetCountFingerprintAsNumPy(parse_smiles(smiles))
        assert np.array_equal(row, expected)


def test_max_tanimoto_exact_with_ties_empties_and_tiny_blocks():
    rng = np.random.default_rng(7)
    dense = (rng.random((300, 128)) < 0.08).astype(np.uint8)
    dense[10] = 0  # an empty fingerprint (similarity 0 to everything, as in RDKit)
    dense[50:60] = dense[5]  # duplicates: ties resolve to the lowest index
    packed = pack_bits(dense)
    queries, refs = packed[:120], packed[40:]
    full = tanimoto_matrix(queries, refs)
    for block_rows in (7, 64, 4096):
        best, index = max_tanimoto(queries, refs, block_rows=block_rows, return_index=True)
        assert np.array_equal(best, full.max(axis=1))
        assert np.array_equal(index, full.argmax(axis=1))
        assert np.array_equal(max_tanimoto(queries, refs, block_rows=block_rows), full.max(axis=1))


@pytest.mark.parametrize("chunk_rows", [1, 8, 256])
def test_pruned_nearest_neighbours_equal_the_full_matrix(chunk_rows):
    """The folded-count bound skips most chunks; values and argmax stay those of the full matrix."""
    from chemassay.chem.similarity import NearestNeighbourIndex

    rng = np.random.default_rng(11)
    centres = rng.random((12, 1024)) < 0.04
    noise = rng.random((600, 1024)) < 0.01
    dense = (centres[rng.integers(0, 12, 600)] ^ noise).astype(np.uint8)  # clustered, like molecules
    dense[3] = 0
    dense[100:110] = dense[7]  # duplicates: ties go to the lowest index
    packed = pack_bits(dense)
    queries, refs = packed[:150], packed[90:]
    full = tanimoto_matrix(queries, refs)
    index = NearestNeighbourIndex(refs, chunk_rows=chunk_rows)
    for threads in (1, 2):
        best, arg = index.query(queries, return_index=True, n_threads=threads, block_rows=37)
        assert np.array_equal(best, full.max(axis=1))
        assert np.array_equal(arg, full.argmax(axis=1))
        assert np.array_equal(index.query(queries, n_threads=threads), full.max(axis=1))
    slow = NearestNeighbourIndex(refs, backend="numpy-popcount")
    assert np.array_equal(slow.query(queries), full.max(axis=1))


def test_folded_counts_bound_the_common_bits():
    from chemassay.chem.similarity import _fold_counts

    rng = np.random.default_rng(3)
    a = (rng.random((40, 1024)) < 0.05).astype(np.uint8)
    b = (rng.random((50, 1024)) < 0.05).astype(np.uint8)
    exact = a.astype(np.int64) @ b.T.astype(np.int64)
    bound = _fold_counts(a).astype(np.int64) @ _fold_counts(b).T.astype(np.int64)
    assert (bound >= exact).all()
