"""Functions run in worker processes by the parallel tests.

They live in an importable module (the tests folder is on ``sys.path``) because workers
started by a fork server import the function by name; a function defined in a test module
cannot be found there (``tests`` may even name another installed package).
"""

import os


def self_similarity_sum(seed: int) -> float:
    import numpy as np

    from chemassay.chem import tanimoto_matrix

    rng = np.random.default_rng(seed)
    packed = rng.integers(0, 2**63, size=(64, 16), dtype=np.uint64)
    return float(np.trace(tanimoto_matrix(packed, backend="auto")))


def crash_on_negative(value: int) -> int:
    if value < 0:
        os._exit(139)  # what a segmentation fault inside RDKit does to a worker
    return value * 2


def slow_on_seven(value: int) -> int:
    import time

    if value == 7:
        time.sleep(60)
    return value
