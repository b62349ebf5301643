"""Hypothesis strategies for random and adversarial inputs shared by the fuzz tests (tests/fuzz and the suites)."""

from __future__ import annotations

import gzip
import os

from hypothesis import settings
from hypothesis import strategies as st

# A short run in `make test`; `make test-slow` sets CHEMASSAY_FUZZ_EXAMPLES=10000.
EXAMPLES = int(os.environ.get("CHEMASSAY_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 150)

SMILES_ALPHABET = "CNOSPFIBrcnospl()[]=#@+-\\/%0123456789.*:H$>~{}"
smiles_like = st.text(alphabet=SMILES_ALPHABET, max_size=80)
nested = st.builds(lambda depth, opener: opener * depth, st.integers(1, 3000), st.sampled_from(["(", "[", "{", "{{", "[("]))
huge = st.builds(lambda n, unit: unit * n, st.integers(10_000, 300_000), st.sampled_from(["C", "c1", "(C)", "[C@H]", "."]))
unicode_text = st.text(max_size=200)
adversarial_text = st.one_of(smiles_like, unicode_text, nested, huge)


@st.composite
def hostile_file_bytes(draw) -> bytes:
    """Bytes of a file a user might hand over by mistake: binary, latin-1, truncated gzip, NULs..."""
    kind = draw(st.sampled_from(["random", "latin1", "gzip-truncated", "gzip-ok", "nul", "text", "huge-line"]))
    if kind == "random":
        return draw(st.binary(max_size=400))
    if kind == "latin1":
        return draw(st.text(alphabet="CNOéüßçà,\t\n", max_size=200)).encode("latin-1")
    if kind in ("gzip-truncated", "gzip-ok"):
        body = draw(st.text(alphabet=SMILES_ALPHABET + ",\n", min_size=1, max_size=400)).encode()
        data = gzip.compress(body)
        return data[: max(1, draw(st.integers(1, len(data) - 1)))] if kind == "gzip-truncated" else data
    if kind == "nul":
        return draw(st.binary(max_size=50)) + b"\x00" + draw(st.binary(max_size=50))
    if kind == "huge-line":
        return b"C" * draw(st.integers(20_000, 200_000)) + b"\n"
    return draw(st.text(alphabet=SMILES_ALPHABET + ",\t\n #", max_size=400)).encode()
