"""Encoders (SMILES → embeddings) for AMORE retrieval, and their embedding cache.

Encoder specs (``--encoder``):

- ``fingerprint`` — Morgan count fingerprint (radius 2, 2,048 bins, chirality on). It is
  computed from the molecular graph, so it is invariant to every augmentation here: the
  upper bound (the role of the GNN in the paper). Options: ``fingerprint:radius=3,bits=4096,chirality=0``.
- ``char-ngram`` — counts of hashed character 1- to 3-grams of the SMILES text (4,096
  bins, scikit-learn's ``HashingVectorizer``). It sees only the string, so it is not
  invariant: a lower bound. Options: ``char-ngram:n=2-4,dim=8192``.
- ``hf:PATH`` — a local Hugging Face checkpoint (:class:`chemassay.models.hf_encoder.HFEncoder`).

``fingerprint`` and ``char-ngram`` return scipy sparse count matrices (ranked exactly by
:mod:`.retrieval`); ``hf:`` returns dense float32 arrays, one per layer with ``layers='all'``.
Embeddings are cached under ``$CHEMASSAY_HOME/cache/robustness/embeddings/`` keyed by the
encoder (its settings and, for ``hf:``, a digest of the checkpoint files) and the sha256
of the SMILES column, so re-running a table only embeds what changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import sparse

from chemassay.chem.fingerprints import morgan_count_fingerprints
from chemassay.chem.molecules import InvalidSmiles, parse_smiles
from chemassay.data import chemassay_home
from chemassay.errors import UserInputError
from chemassay.runtime.files import atomic_writer, sha256_text
from chemassay.runtime.progress import progress_task

Embeddings = np.ndarray | sparse.csr_matrix
"""One layer's embeddings: dense ``(n, d)`` array or sparse count matrix."""


def _parse_options(text: str, spec: str) -> dict[str, str]:
    options: dict[str, str] = {}
    if not text:
        return options
    for part in text.split(","):
        if "=" not in part:
            raise UserInputError(f"--encoder {spec}: option {part!r} is not key=value")
        key, value = part.split("=", 1)
        options[key.strip()] = value.strip()
    return options


def _int_option(options: dict[str, str], key: str, default: int, spec: str) -> int:
    try:
        return int(options.pop(key, default))
    except ValueError:
        raise UserInputError(f"--encoder {spec}: {key} must be an integer") from None


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
        return {"encoder": "fingerprint", "radius": self.radius, "bits": self.bits, "chirality": self.chirality}

    def cache_key(self) -> str:
        return f"fingerprint-r{self.radius}-b{self.bits}-c{int(self.chirality)}"

    def encode(self, smiles: Sequence[str], layers: str = "last") -> Embeddings | list[Embeddings]:
        """Count fingerprints; a SMILES RDKit cannot read gets an all-zero row and is
        recorded in ``failures`` (index → reason) for the caller to report."""
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
        return {"encoder": "char-ngram", "ngram_range": [self.n_min, self.n_max], "dim": self.dim}

    def cache_key(self) -> str:
        return f"char-ngram-{self.n_min}-{self.n_max}-d{self.dim}"

    def vectorizer(self):
        """The scikit-learn ``HashingVectorizer`` behind the encoder (case kept, raw counts)."""
        from sklearn.feature_extraction.text import HashingVectorizer

        return HashingVectorizer(
            analyzer="char", ngram_range=(self.n_min, self.n_max), n_features=self.dim,
            alternate_sign=False, norm=None, lowercase=False, dtype=np.float64,
        )

    def encode(self, smiles: Sequence[str], layers: str = "last") -> Embeddings | list[Embeddings]:
        matrix = self.vectorizer().transform(list(smiles)).tocsr()
        return [matrix] if layers == "all" else matrix


class HFEncoderAdapter:
    """:class:`~chemassay.models.hf_encoder.HFEncoder` behind the suite's encoder interface."""

    needs_valid_smiles = False

    def __init__(self, path: str, **options) -> None:
        from chemassay.models.hf_encoder import HFEncoder

        self.model = HFEncoder(path, **options)
        self.name = self.model.name
        self.failures: dict[int, str] = {}

    def describe(self) -> dict:
        return self.model.describe()

    def cache_key(self) -> str:
        return "hf-" + self.model.cache_key()

    def encode(self, smiles: Sequence[str], layers: str = "last"):
        return self.model.encode(smiles, layers=layers)


def make_encoder(spec: str, *, device: str = "cpu", batch_size: int = 32, pooling: str = "mean",
                 part: str = "auto", max_length: int | None = None):
    """Build the encoder named by ``spec`` (see the module doc for the syntax)."""
    if spec.startswith("hf:"):
        path = spec[3:]
        if not path:
            raise UserInputError("--encoder hf:PATH needs the checkpoint folder after 'hf:'")
        return HFEncoderAdapter(path, device=device, batch_size=batch_size, pooling=pooling, part=part,
                                max_length=max_length)
    base, _, option_text = spec.partition(":")
    options = _parse_options(option_text, spec)
    if base == "fingerprint":
        encoder = FingerprintEncoder(
            radius=_int_option(options, "radius", 2, spec), bits=_int_option(options, "bits", 2048, spec),
            chirality=bool(_int_option(options, "chirality", 1, spec)),
        )
        if encoder.bits <= 0 or encoder.bits % 64:
            raise UserInputError(f"--encoder {spec}: bits must be a positive multiple of 64")
    elif base == "char-ngram":
        low, _, high = options.pop("n", "1-3").partition("-")
        try:
            n_min, n_max = int(low), int(high or low)
        except ValueError:
            raise UserInputError(f"--encoder {spec}: n must look like 1-3") from None
        encoder = CharNgramEncoder(n_min=n_min, n_max=n_max, dim=_int_option(options, "dim", 4096, spec))
        if not 1 <= n_min <= n_max or encoder.dim <= 0:
            raise UserInputError(f"--encoder {spec}: need 1 <= n_min <= n_max and dim > 0")
    else:
        raise UserInputError(f"unknown encoder {spec!r}; use fingerprint, char-ngram or hf:PATH")
    if options:
        raise UserInputError(f"--encoder {spec}: unknown option(s) {', '.join(sorted(options))}")
    return encoder


def cache_root() -> Path:
    """Folder of cached embeddings: ``$CHEMASSAY_HOME/cache/robustness/embeddings``."""
    return chemassay_home() / "cache" / "robustness" / "embeddings"


def _save_layers(path: Path, layers: list[Embeddings]) -> None:
    arrays: dict[str, np.ndarray] = {}
    for index, layer in enumerate(layers):
        if sparse.issparse(layer):
            csr = sparse.csr_matrix(layer)
            arrays[f"s{index}_data"] = csr.data
            arrays[f"s{index}_indices"] = csr.indices
            arrays[f"s{index}_indptr"] = csr.indptr
            arrays[f"s{index}_shape"] = np.asarray(csr.shape)
        else:
            arrays[f"d{index}"] = np.asarray(layer)
    with atomic_writer(path, "wb", encoding=None) as handle:
        np.savez(handle, **arrays)


def _load_layers(path: Path) -> list[Embeddings]:
    with np.load(path) as archive:
        names = set(archive.files)
        layers: list[Embeddings] = []
        index = 0
        while True:
            if f"d{index}" in names:
                layers.append(archive[f"d{index}"])
            elif f"s{index}_data" in names:
                layers.append(sparse.csr_matrix(
                    (archive[f"s{index}_data"], archive[f"s{index}_indices"], archive[f"s{index}_indptr"]),
                    shape=tuple(archive[f"s{index}_shape"]),
                ))
            else:
                return layers
            index += 1


@dataclass
class EncodedSet:
    """Embeddings of one SMILES list (one entry per layer), failures, and whether cached."""

    layers: list[Embeddings]
    failures: dict[int, str]
    from_cache: bool
    truncated: list[int] = field(default_factory=list)


def encode_cached(encoder, smiles: Sequence[str], layers: str = "last", *, use_cache: bool = True) -> EncodedSet:
    """Embed ``smiles`` with ``encoder``, reusing ``cache_root()/<encoder key>/<sha256>.npz``.

    The key is the encoder's :meth:`cache_key` and the sha256 of the SMILES (one per line),
    plus ``layers``; failures (rows that could not be embedded) are cached with them.
    """
    checksum = sha256_text("\n".join(smiles))
    target = cache_root() / encoder.cache_key() / f"{checksum}-{layers}.npz"
    failures_path = target.with_suffix(".json")
    if use_cache and target.is_file() and failures_path.is_file():
        meta = json.loads(failures_path.read_text(encoding="utf-8"))
        failures = {int(k): v for k, v in meta.get("failures", {}).items()}
        return EncodedSet(_load_layers(target), failures, True, meta.get("truncated", []))
    result = encoder.encode(list(smiles), layers=layers)
    layer_list = list(result) if isinstance(result, list) else [result]
    failures = dict(getattr(encoder, "failures", {}) or {})
    truncated = list(getattr(getattr(encoder, "model", None), "truncated", []) or [])
    if use_cache:
        _save_layers(target, layer_list)
        meta = {"encoder": encoder.describe(), "n": len(smiles), "failures": failures, "truncated": truncated}
        with atomic_writer(failures_path) as handle:
            handle.write(json.dumps(meta, indent=1, default=str))
    return EncodedSet(layer_list, failures, False, truncated)


def load_embeddings(path: str | Path) -> list[np.ndarray]:
    """Precomputed embeddings from ``.npy`` (``(n, d)`` or ``(layers, n, d)``) or ``.npz``
    (one array per layer, in file order); a clear error for anything else."""
    target = Path(path)
    if not target.is_file():
        raise UserInputError(f"{target}: no such embeddings file")
    try:
        if target.suffix == ".npz":
            with np.load(target) as archive:
                arrays = [archive[name] for name in archive.files]
        else:
            array = np.load(target, allow_pickle=False)
            arrays = [array] if array.ndim == 2 else list(array)
    except (ValueError, OSError) as exc:
        raise UserInputError(f"{target}: not a NumPy .npy/.npz embeddings file ({exc})") from None
    for array in arrays:
        if array.ndim != 2:
            raise UserInputError(f"{target}: expected (n, d) or (layers, n, d) arrays, got shape {array.shape}")
        if not np.issubdtype(array.dtype, np.number):
            raise UserInputError(f"{target}: embeddings must be numeric, got {array.dtype}")
        if not np.all(np.isfinite(array)):
            raise UserInputError(f"{target}: embeddings contain NaN or infinite values")
    return arrays


def encoder_digest(encoder) -> str:
    """Short digest of an encoder's settings, for file names."""
    return hashlib.sha256(json.dumps(encoder.describe(), sort_keys=True, default=str).encode()).hexdigest()[:12]
