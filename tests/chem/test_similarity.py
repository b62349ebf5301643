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


# ------------------------------------------------------------------------------ streamed references


def _brute_best(queries: np.ndarray, chunks: list[np.ndarray]) -> np.ndarray:
    """Each query's highest Tanimoto over every chunk, from the full matrices (numpy-popcount)."""
    best = np.zeros(len(queries))
    for chunk in chunks:
        best = np.maximum(best, tanimoto_matrix(queries, chunk, backend="numpy-popcount").max(axis=1))
    return best


def _clustered(rng, n: int, bits: int, centres: int = 15, density: float = 0.03) -> np.ndarray:
    centre = rng.random((centres, bits)) < density
    noise = rng.random((n, bits)) < 0.008
    return (centre[rng.integers(0, centres, n)] ^ noise).astype(np.uint8)


def test_required_common_is_the_least_count_that_beats_the_best():
    from chemassay.chem.similarity import IMPOSSIBLE, required_common

    rng = np.random.default_rng(5)
    a = rng.integers(0, 70, 3000)
    best = np.concatenate([rng.random(2000), [0.0, 1.0, 0.7, 0.5, 2 / 3, 1 / 3] * 100, np.zeros(400)])
    best[2000:2600] = (rng.integers(1, 40, 600) / rng.integers(40, 80, 600))  # exact fractions: ties
    for b in (0, 1, 7, 36, 50, 69):
        for floor in (0.0, 0.4):
            need = required_common(best, a, b, floor=floor)
            for i in range(len(a)):
                c = np.arange(0, min(a[i], b) + 1)
                union = a[i] + b - c
                value = np.where(union > 0, c / np.maximum(union, 1), 0.0)
                ok = c[(value > best[i]) & (value >= floor)]
                assert need[i] == (ok[0] if len(ok) else IMPOSSIBLE), (a[i], b, best[i], floor)


def test_bit_groups_partition_every_bit_with_frequent_bits_apart():
    from chemassay.chem.similarity import bit_groups

    rng = np.random.default_rng(2)
    frequencies = rng.random(2048) ** 8
    frequencies[:5] = 0.95
    group_of = bit_groups(frequencies, 256, 16)
    sizes = np.bincount(group_of, minlength=256)
    assert group_of.shape == (2048,) and sizes.max() <= 16 and (sizes > 0).all()
    assert len(set(group_of[:5].tolist())) == 5  # the five common bits are in five groups
    mass = np.bincount(group_of, weights=frequencies, minlength=256)
    assert mass.max() < 2 * frequencies.sum() / 256 + 0.95  # balanced up to one common bit
    assert bit_groups(np.zeros(64), 256).max() < 64  # fewer bits than groups


@pytest.mark.parametrize("backend", [b for b in BACKENDS if backend_available(b)])
def test_streaming_nearest_equals_brute_force_on_every_backend(backend):
    """Chunks of all sizes, duplicates (ties), empty fingerprints, 2,048 and 1,024 bits."""
    from chemassay.chem.similarity import StreamingNearest

    rng = np.random.default_rng(17)
    for bits in (2048, 1024):
        dense = _clustered(rng, 1500, bits)
        dense[0] = 0  # an empty query: 0.0 against everything, as in RDKit
        dense[700] = 0  # an empty reference
        dense[800:820] = dense[5]  # exact duplicates of a query: 1.0
        dense[900:905] = dense[905]  # ties among references
        packed = pack_bits(dense)
        queries, refs = packed[:400], packed[400:]
        chunks = [refs[:1], refs[1:300], refs[300:301], refs[301:1000], refs[1000:]]
        nearest = StreamingNearest(queries, backend=backend, block_rows=96)
        seen = []
        for chunk in chunks:
            got = nearest.update(chunk)
            seen.append(chunk)
            assert np.array_equal(got, _brute_best(queries, seen)), (backend, bits, len(seen))
        assert got[0] == 0.0 and got[5] == 1.0


def test_streaming_nearest_on_real_fingerprints_equals_rdkit(real_smiles, rdkit_fps):
    from chemassay.chem.similarity import StreamingNearest, onednn_screen_available

    packed = morgan_fingerprints(real_smiles, radius=2, n_bits=1024)
    queries, refs = packed[:120], packed[120:]
    nearest = StreamingNearest(queries)
    if backend_available("torch-int8") and onednn_screen_available():
        assert nearest.engine() == "onednn"
    for start in range(0, len(refs), 70):
        got = nearest.update(refs[start:start + 70])
    expected = [max(DataStructs.BulkTanimotoSimilarity(rdkit_fps[i], rdkit_fps[120:])) for i in range(120)]
    assert np.array_equal(got, np.array(expected))


def test_streaming_nearest_on_moses_fingerprints():
    """Real MOSES test molecules against streamed MOSES training chunks, at 2,048 bits."""
    from chemassay.chem.similarity import StreamingNearest
    from chemassay.data import locate

    test_path, train_path = locate("moses", "test.csv.gz"), locate("moses", "train.csv.gz")
    if test_path is None or train_path is None:
        pytest.skip("MOSES is not in the data cache")
    import pandas as pd

    queries = morgan_fingerprints(pd.read_csv(test_path, nrows=600)["SMILES"].tolist(), n_bits=2048)
    train = morgan_fingerprints(pd.read_csv(train_path, nrows=3000)["SMILES"].tolist(), n_bits=2048)
    chunks = [train[:1000], train[1000:2000], train[2000:]]
    nearest = StreamingNearest(queries)
    for chunk in chunks:
        got = nearest.update(chunk)
    assert np.array_equal(got, _brute_best(queries, chunks))
    assert np.array_equal(got, max_tanimoto(queries, train))  # and the index the other metrics use
    assert 0.3 < np.median(got) < 0.8


def test_streaming_nearest_pickles_and_serialises_threads():
    import pickle
    import threading

    from chemassay.chem.similarity import StreamingNearest

    rng = np.random.default_rng(4)
    packed = pack_bits(_clustered(rng, 900, 512))
    queries, refs = packed[:200], packed[200:]
    nearest = StreamingNearest(queries)
    nearest.update(refs[:300])
    copy = pickle.loads(pickle.dumps(nearest))
    assert np.array_equal(copy.best, nearest.best)
    assert np.array_equal(copy.update(refs[300:]), _brute_best(queries, [refs]))
    threaded = StreamingNearest(queries)
    workers = [threading.Thread(target=threaded.update, args=(refs[i::4],)) for i in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert np.array_equal(threaded.best, _brute_best(queries, [refs]))
    with pytest.raises(ValueError, match="bits"):
        threaded.update(pack_bits(np.ones((2, 1024), dtype=np.uint8)))
    assert np.array_equal(StreamingNearest(queries).update(refs[:0]), np.zeros(len(queries)))


def test_streaming_nearest_on_wide_fingerprints_keeps_group_counts_in_int8():
    """65,536 bits: more than 256 x 120, so the projection takes more groups (at most 120 bits each)."""
    from chemassay.chem.similarity import StreamingNearest

    rng = np.random.default_rng(8)
    dense = (rng.random((90, 65536)) < 0.02).astype(np.uint8)
    dense[60:65] = dense[3]
    packed = pack_bits(dense)
    nearest = StreamingNearest(packed[:40])
    got = nearest.update(packed[40:])
    projection = nearest._prepare()[0]
    assert projection.dims >= 65536 // 120 and projection.max_count <= 120
    assert np.array_equal(got, _brute_best(packed[:40], [packed[40:]]))
    assert got[3] == 1.0
