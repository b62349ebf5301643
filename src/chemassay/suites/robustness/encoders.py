"""The built-in encoders (SMILES → embeddings) of the robustness suite, and its embedding cache.

Both are model kinds of the one registry (declared in :mod:`.baselines`), usable anywhere a
spec is (``--model fingerprint``, ``evaluate(model="char-ngram:n=2-4")``):

- ``fingerprint[:radius=2,bits=2048,chirality=1]`` — Morgan count fingerprint. It is
  computed from the molecular graph, so it is invariant to every augmentation here: the
  upper bound (the role of the GNN in the paper).
- ``char-ngram[:n=1-3,dim=4096]`` — counts of hashed character n-grams of the SMILES text
  (scikit-learn's ``HashingVectorizer``). It sees only the string, so it is not invariant:
  a lower bound.

Any other encoder comes from the general kinds: ``hf:PATH`` (hidden states of a Hugging Face
checkpoint), ``openai:MODEL,base_url=...`` (an ``/v1/embeddings`` endpoint), ``python:...``
and ``predictions:FILE.npz``. Both built-ins return scipy sparse count matrices (ranked
exactly by :mod:`.retrieval`); ``hf:`` returns dense float32 arrays, one per layer with
``layers='all'``.

Every encoder runs through the one pipeline, :func:`chemassay.models.run` (protocol
``encoder``: identical SMILES are embedded once, failures kept with their reasons, requests
counted, the model named); :func:`load_encoder` loads a spec once for the several SMILES lists
of an evaluation. In front of it, embeddings of encoders that define ``cache_key()`` (the
built-ins and ``hf:``, whose key includes a digest of the checkpoint files) are cached through
:mod:`chemassay.runtime.cache` (namespace ``robustness/embeddings``), keyed by the encoder, the
sha256 of the SMILES and the layers, as one ``.npz`` per list (the run pipeline's response
cache keeps one JSON row per item: far slower and larger for thousands of vectors); a damaged
or altered entry is reported in one line and recomputed, never used.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import HashingVectorizer

from chemassay.chem.fingerprints import morgan_count_fingerprints
from chemassay.chem.molecules import InvalidSmiles, parse_smiles
from chemassay.contract import Run
from chemassay.contract.errors import UserInputError
from chemassay.models import run
from chemassay.models.spec import check_options, option_bool, option_int
from chemassay.runtime.cache import cached
from chemassay.runtime.files import sha256_text
from chemassay.runtime.progress import progress_task
from chemassay.suites.robustness.protocol import ENCODER

Embeddings = np.ndarray | sparse.csr_matrix
"""One layer's embeddings: dense ``(n, d)`` array or sparse count matrix."""

CACHE_NAMESPACE = "robustness/embeddings"
CACHE_FORMAT = 2


@dataclass
class FingerprintEncoder:
    """Morgan count fingerprints as a sparse ``(n, bits)`` matrix (graph-based, invariant)."""

    radius: int = 2
    bits: int = 2048
    chirality: bool = True
    name: str = "fingerprint"
    needs_valid_smiles: bool = True
    failures: dict[int, str] = field(default_factory=dict)

    def describe(self) -> dict:
        """Settings that determine the embeddings."""
        return {"encoder": "fingerprint", "radius": self.radius, "bits": self.bits, "chirality": self.chirality}

    def cache_key(self) -> str:
        """The embedding-cache key of these settings."""
        return f"fingerprint-r{self.radius}-b{self.bits}-c{int(self.chirality)}"

    def encode(self, smiles: Sequence[str], layers: str = "last") -> Embeddings | list[Embeddings]:
        """Count fingerprints; a SMILES RDKit cannot read gets an all-zero row and is
        recorded in ``failures`` (index → reason) for the caller to report."""
        _check_layers(layers)
        self.failures = {}
        rows = []
        with progress_task("fingerprints", len(smiles)) as advance:
            for start in range(0, len(smiles), 512):
                mols = []
                for offset, text in enumerate(smiles[start:start + 512]):
                    try:
                        mols.append(parse_smiles(text))
                    except InvalidSmiles as exc:
                        self.failures[start + offset] = exc.reason
                        mols.append(parse_smiles("[HH]"))
                counts = morgan_count_fingerprints(mols, radius=self.radius, n_bits=self.bits, chirality=self.chirality)
                rows.append(sparse.csr_matrix(counts.astype(np.float64)))
                advance(len(mols))
        matrix = sparse.vstack(rows, format="csr") if rows else sparse.csr_matrix((0, self.bits))
        for index in self.failures:
            matrix.data[matrix.indptr[index]:matrix.indptr[index + 1]] = 0.0
        matrix.eliminate_zeros()
        return [matrix] if layers == "all" else matrix


@dataclass
class CharNgramEncoder:
    """Hashed character n-gram counts of the SMILES text (string-based, not invariant)."""

    n_min: int = 1
    n_max: int = 3
    dim: int = 4096
    name: str = "char-ngram"
    needs_valid_smiles: bool = False
    failures: dict[int, str] = field(default_factory=dict)

    def describe(self) -> dict:
        """Settings that determine the embeddings."""
        return {"encoder": "char-ngram", "ngram_range": [self.n_min, self.n_max], "dim": self.dim}

    def cache_key(self) -> str:
        """The embedding-cache key of these settings."""
        return f"char-ngram-{self.n_min}-{self.n_max}-d{self.dim}"

    def vectorizer(self):
        """The scikit-learn ``HashingVectorizer`` behind the encoder (case kept, raw counts)."""
        return HashingVectorizer(
            analyzer="char", ngram_range=(self.n_min, self.n_max), n_features=self.dim,
            alternate_sign=False, norm=None, lowercase=False, dtype=np.float64,
        )

    def encode(self, smiles: Sequence[str], layers: str = "last") -> Embeddings | list[Embeddings]:
        """Hashed n-gram counts, one row per string."""
        _check_layers(layers)
        self.failures = {}
        matrix = self.vectorizer().transform(list(smiles)).tocsr()
        return [matrix] if layers == "all" else matrix


def _check_layers(layers: str) -> None:
    if layers not in ("last", "all"):
        raise UserInputError(f"layers must be 'last' or 'all', got {layers!r}")


# -- model-kind factories (registered in baselines.MODEL_KINDS) ------------------------
def create_fingerprint(spec, protocol: str, context: dict[str, Any]) -> FingerprintEncoder:
    """Factory of the ``fingerprint`` kind: options ``radius``, ``bits`` (a multiple of 64), ``chirality``."""
    check_options(spec, {"radius", "bits", "chirality"})
    encoder = FingerprintEncoder(
        radius=option_int(spec, "radius", 2, minimum=0), bits=option_int(spec, "bits", 2048, minimum=64),
        chirality=option_bool(spec, "chirality", True),
    )
    if encoder.bits % 64:
        raise UserInputError(f"--model {spec.text}: bits must be a positive multiple of 64")
    return encoder


def create_char_ngram(spec, protocol: str, context: dict[str, Any]) -> CharNgramEncoder:
    """Factory of the ``char-ngram`` kind: options ``n`` (``1-3`` or ``2``) and ``dim``."""
    from chemassay.models.spec import check_options, option_int

    check_options(spec, {"n", "dim"})
    low, _, high = spec.options.get("n", "1-3").partition("-")
    try:
        n_min, n_max = int(low), int(high or low)
    except ValueError:
        raise UserInputError(f"--model {spec.text}: n must look like 1-3 (or a single number)") from None
    if not 1 <= n_min <= n_max:
        raise UserInputError(f"--model {spec.text}: need 1 <= n_min <= n_max, got n={n_min}-{n_max}")
    return CharNgramEncoder(n_min=n_min, n_max=n_max, dim=option_int(spec, "dim", 4096, minimum=1))


# -- embedding cache ------------------------------------------------------------------
def _pack(layers: list[Embeddings], failures: dict[int, str], truncated: list[int]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {"meta": np.asarray(json.dumps({"failures": failures, "truncated": truncated}))}
    for index, layer in enumerate(layers):
        if sparse.issparse(layer):
            csr = sparse.csr_matrix(layer)
            arrays[f"s{index}_data"] = csr.data
            arrays[f"s{index}_indices"] = csr.indices
            arrays[f"s{index}_indptr"] = csr.indptr
            arrays[f"s{index}_shape"] = np.asarray(csr.shape)
        else:
            arrays[f"d{index}"] = np.asarray(layer)
    return arrays


def _unpack(path: Path, n_rows: int) -> tuple[list[Embeddings], dict[int, str], list[int]]:
    with np.load(path, allow_pickle=False) as archive:
        names = set(archive.files)
        meta = json.loads(str(archive["meta"]))
        layers: list[Embeddings] = []
        index = 0
        while True:
            if f"d{index}" in names:
                layers.append(archive[f"d{index}"])
            elif f"s{index}_data" in names:
                layers.append(sparse.csr_matrix(
                    (archive[f"s{index}_data"], archive[f"s{index}_indices"], archive[f"s{index}_indptr"]),
                    shape=tuple(int(v) for v in archive[f"s{index}_shape"]),
                ))
            else:
                break
            index += 1
    if not layers or any(layer.shape[0] != n_rows for layer in layers):
        raise ValueError(f"expected {n_rows} rows in every layer")
    return layers, {int(k): v for k, v in meta["failures"].items()}, [int(i) for i in meta["truncated"]]


@dataclass
class EncodedSet:
    """Embeddings of one SMILES list (one entry per layer), failures, and whether cached;
    ``run`` is the run that embedded it (``None`` when the cache answered)."""

    layers: list[Embeddings]
    failures: dict[int, str]
    from_cache: bool
    truncated: list[int] = field(default_factory=list)
    run: Run | None = None


def load_encoder(model: Any, layers: str = "last", context: dict[str, Any] | None = None) -> Run:
    """Load and name an encoder (a spec or an object) for the SMILES lists of an evaluation: a
    run of no items, whose ``model_object`` embeds each list and whose ``model`` names it."""
    return run(model, ENCODER, [], {"layers": layers}, context=context)


def stack_rows(outputs: Sequence[Any], layers: str) -> list[Embeddings]:
    """The per-SMILES outputs of an encoder run as one matrix per layer: sparse rows stacked
    as CSR, dense rows in their own dtype, so the matrix is the one the encoder returned."""
    if not outputs or any(output is None for output in outputs):
        joined = ENCODER.join(list(outputs), {"layers": layers})  # failed rows: NaN (left out)
        return list(joined) if layers == "all" else [joined]
    rows = [output if layers == "all" else [output] for output in outputs]
    stacked = []
    for layer in range(len(rows[0])):
        column = [row[layer] for row in rows]
        if all(sparse.issparse(value) for value in column):
            stacked.append(sparse.vstack(column, format="csr"))
        else:
            stacked.append(np.vstack([value.toarray() if sparse.issparse(value) else value for value in column]))
    return stacked


def _encode(encoder, smiles: list[str], layers: str) -> EncodedSet:
    """Embed ``smiles`` through the run pipeline (identical strings once)."""
    done = run(encoder, ENCODER, smiles, {"layers": layers})
    model = done.model_object
    truncated = [int(i) for i in (getattr(model, "truncated", None)
                                  or getattr(getattr(model, "model", None), "truncated", None) or [])]
    if truncated:
        # the encoder saw each string once, in first-seen order: its positions name strings
        asked = list(dict.fromkeys(smiles))
        cut = {asked[i] for i in truncated if i < len(asked)}
        truncated = [i for i, text in enumerate(smiles) if text in cut]
    return EncodedSet(stack_rows(done.outputs, layers), dict(done.failures), False, truncated, done)


def encode_cached(encoder, smiles: Sequence[str], layers: str = "last", *, use_cache: bool = True) -> EncodedSet:
    """Embed ``smiles`` with ``encoder`` (any encoder-protocol object), through the cache.

    Encoders with a ``cache_key()`` are cached (see the module doc); failures (rows that
    could not be embedded) and truncated rows are cached with the embeddings. Others (HTTP
    endpoints, Python objects, prediction files) are run every time. What is not cached runs
    through :func:`chemassay.models.run` (the set's ``run``).
    """
    texts = [str(s) for s in smiles]
    key_fn = getattr(encoder, "cache_key", None)
    if not use_cache or not callable(key_fn):
        return _encode(encoder, texts, layers)
    key = {"format": CACHE_FORMAT, "encoder": key_fn(), "smiles_sha256": sha256_text("\n".join(texts)),
           "n": len(texts), "layers": layers}
    built: list[bool] = []

    def build() -> EncodedSet:
        built.append(True)
        return _encode(encoder, texts, layers)

    def save(value: EncodedSet, path: Path) -> None:
        with open(path, "wb") as handle:
            np.savez(handle, **_pack(value.layers, value.failures, value.truncated))

    def load(path: Path) -> EncodedSet:
        layer_list, failures, truncated = _unpack(path, len(texts))
        return EncodedSet(layer_list, failures, True, truncated)

    value = cached(CACHE_NAMESPACE, key, build, save=save, load=load, suffix=".npz")
    if built:
        value.from_cache = False
    return value


def load_embeddings(path: str | Path) -> list[np.ndarray]:
    """Precomputed embeddings from ``.npy`` (``(n, d)`` or ``(layers, n, d)``) or ``.npz``
    (one array per layer, in file order); a one-line error for anything else.

    Rows with NaN or infinite values are kept here; :func:`nonfinite_rows` finds them (the
    retrieval leaves them out and reports them).
    """
    target = Path(path)
    if not target.exists():
        raise UserInputError(f"{target}: no such embeddings file")
    if target.is_dir():
        raise UserInputError(f"{target}: is a directory, expected a .npy or .npz embeddings file")
    try:
        if target.suffix == ".npz":
            with np.load(target, allow_pickle=False) as archive:
                arrays = [archive[name] for name in archive.files]
        else:
            array = np.load(target, allow_pickle=False)
            if not isinstance(array, np.ndarray):
                raise ValueError("not a single array")
            arrays = [array] if array.ndim == 2 else list(array) if array.ndim == 3 else [array]
    except (ValueError, OSError, EOFError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserInputError(f"{target}: not a NumPy .npy/.npz embeddings file ({first})") from None
    return check_embeddings(arrays, str(target))


def check_embeddings(arrays: Sequence[Any], what: str) -> list[np.ndarray]:
    """Numeric ``(n, d)`` arrays (one per layer) with the same number of rows, or a user error."""
    checked = []
    if not len(arrays):
        raise UserInputError(f"{what}: no embeddings arrays")
    for array in arrays:
        if sparse.issparse(array):
            checked.append(sparse.csr_matrix(array))
            continue
        array = np.asarray(array)
        if array.ndim != 2:
            raise UserInputError(f"{what}: expected (n, d) or (layers, n, d) arrays, got shape {array.shape}")
        if not (np.issubdtype(array.dtype, np.number) or array.dtype == bool) or np.iscomplexobj(array):
            raise UserInputError(f"{what}: embeddings must be real numbers, got {array.dtype}")
        checked.append(array)
    if len({a.shape[0] for a in checked}) != 1:
        raise UserInputError(f"{what}: layers have different numbers of rows {[a.shape[0] for a in checked]}")
    return checked


def nonfinite_rows(layers: Sequence[Embeddings]) -> np.ndarray:
    """Indices of rows with a NaN or infinite value in any layer."""
    bad = np.zeros(layers[0].shape[0], dtype=bool)
    for layer in layers:
        if sparse.issparse(layer):
            csr = sparse.csr_matrix(layer)
            wrong = ~np.isfinite(csr.data)
            if wrong.any():
                rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
                bad[rows[wrong]] = True
        else:
            values = np.asarray(layer, dtype=np.float64)
            bad |= ~np.isfinite(values).all(axis=1)
    return np.flatnonzero(bad)
