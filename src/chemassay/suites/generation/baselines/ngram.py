"""Character n-gram language model with back-off, the MOSES ``NGram`` baseline.

The model (MOSES ``moses/baselines/ngram.py``, ``max_context_len=10``) reads each training
SMILES character by character between a begin and an end token and counts, for every
position and every context length ``k = 1..max_context_len``, which character follows the
``k`` preceding tokens (so ``n = max_context_len + 1`` at most). Sampling starts from the
begin token; at each step it takes the last ``context_len`` tokens and *backs off* by
dropping the oldest token until the context was seen in training, then draws the next
token from that context's counts plus ``l_smooth`` (0.01) on every character and the end
token. A sample stops at the end token or after ``max_len - 1`` tokens (MOSES: 100).

Equal to the reference on the same training data, draw for draw: the vocabulary is ordered
the same way (sorted characters, then ``<bos> <eos> <pad> <unk>``), the probabilities are
computed with the same floating-point operations, and sampling uses a legacy
``numpy.random.RandomState(seed)`` the way ``numpy.random.choice`` does, so ``seed``
reproduces the reference's ``np.random.seed(seed); model.generate(n)`` exactly
(``benchmarks/generation_baselines_reference.py`` checks this).

Storage differs from the reference (a dict of dense count vectors, about 1 GB for the full
MOSES train set): contexts are packed into 64-bit integers (a few bits per token, newest
token lowest) and counted with sorted arrays, so training on 1.58 M SMILES takes about 20 s
on a quiet 2-core machine and the model file is about 50 MB.
"""

from __future__ import annotations

import io
import json
import os
import time
import zipfile
from bisect import bisect_right
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import atomic_write_bytes
from chemassay.runtime.progress import progress

SPECIAL_TOKENS = ("<bos>", "<eos>", "<pad>", "<unk>")
DEFAULT_MAX_CONTEXT_LEN = 10
DEFAULT_SMOOTHING = 0.01
DEFAULT_MAX_LEN = 100
FORMAT = "chemassay.generation.ngram/1"
# Cached per-context cumulative distributions during sampling; cleared when full.
_CDF_CACHE_LIMIT = 300_000


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


class CharNGram:
    """A trained character n-gram model (see the module docs).

    Counts are stored per context as a CSR table: ``context_codes`` (sorted ``uint64``),
    ``offsets`` into ``next_ids`` (vocabulary ids) and ``counts``.
    """

    def __init__(
        self,
        chars: Sequence[str],
        max_context_len: int,
        context_codes: np.ndarray,
        offsets: np.ndarray,
        next_ids: np.ndarray,
        counts: np.ndarray,
        info: dict | None = None,
    ) -> None:
        self.chars = list(chars)
        self.max_context_len = int(max_context_len)
        self.context_codes = np.asarray(context_codes, dtype=np.uint64)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.next_ids = np.asarray(next_ids, dtype=np.int32)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.info = dict(info or {})
        self.bits = symbol_bits(len(self.chars))
        self._row_of: dict[int, int] | None = None

    # Vocabulary -----------------------------------------------------------------------
    @property
    def vocab(self) -> list[str]:
        """Tokens in id order: sorted characters then ``<bos> <eos> <pad> <unk>``."""
        return self.chars + list(SPECIAL_TOKENS)

    @property
    def bos(self) -> int:
        return len(self.chars)

    @property
    def eos(self) -> int:
        return len(self.chars) + 1

    @property
    def n_contexts(self) -> int:
        return len(self.context_codes)

    def default_probs(self) -> np.ndarray:
        """The smoothing mask of the reference: 1 for characters and ``<eos>``, else 0."""
        return np.hstack([np.ones(len(self.chars)), np.array([0.0, 1.0, 0.0, 0.0])])

    # Training -------------------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        smiles: Sequence[str],
        *,
        max_context_len: int = DEFAULT_MAX_CONTEXT_LEN,
        chunk_size: int = 100_000,
        show_progress: bool | None = None,
    ) -> CharNGram:
        """Count every (context, next token) pair of ``smiles`` for contexts 1..``max_context_len``."""
        started = time.perf_counter()
        if max_context_len < 1:
            raise UserInputError(f"the context length must be at least 1, got {max_context_len}")
        if not smiles:
            raise UserInputError("cannot train an n-gram model on an empty training set")
        chars = sorted(set().union(*map(set, smiles)))
        bits = symbol_bits(len(chars))
        if (max_context_len + 1) * bits > 64:
            raise UserInputError(
                f"context length {max_context_len} is too long for a {len(chars)}-character "
                f"alphabet (at most {64 // bits - 1})"
            )
        points = np.array([ord(c) for c in chars], dtype=np.uint32)
        keys_parts: list[np.ndarray] = []
        count_parts: list[np.ndarray] = []
        chunks = range(0, len(smiles), chunk_size)
        for start in progress(chunks, description="counting n-grams", disable=None if show_progress is None else not show_progress):
            keys, counts = _window_counts(smiles[start:start + chunk_size], points, bits, max_context_len)
            keys_parts.append(keys)
            count_parts.append(counts)
        windows, window_counts = _sum_by_key(np.concatenate(keys_parts), np.concatenate(count_parts))
        del keys_parts, count_parts
        symbol_mask = np.uint64((1 << bits) - 1)
        window_codes = windows >> np.uint64(bits)
        next_codes = windows & symbol_mask
        level_keys = []
        level_counts = []
        for k in range(1, max_context_len + 1):
            # Contexts of length k: the k newest tokens of a window whose k-th token exists.
            oldest = (window_codes >> np.uint64(bits * (k - 1))) & symbol_mask
            present = oldest != 0
            context = window_codes[present] & np.uint64((1 << (bits * k)) - 1)
            level_keys.append((context << np.uint64(bits)) | next_codes[present])
            level_counts.append(window_counts[present])
        keys, counts = _sum_by_key(np.concatenate(level_keys), np.concatenate(level_counts))
        contexts = keys >> np.uint64(bits)
        next_code = (keys & symbol_mask).astype(np.int64)
        # Next codes are character ids, and len(chars) for <eos>: map back to vocabulary ids.
        nexts = np.where(next_code < len(chars), next_code, len(chars) + 1)
        # Keys are sorted, hence grouped by context: rows start where the context changes.
        starts = np.flatnonzero(np.r_[True, contexts[1:] != contexts[:-1]])
        offsets = np.r_[starts, len(keys)].astype(np.int64)
        info = {
            "n_train": len(smiles),
            "n_tokens": int(sum(len(s) for s in smiles) + 2 * len(smiles)),
            "train_seconds": round(time.perf_counter() - started, 3),
        }
        return cls(chars, max_context_len, contexts[starts], offsets, nexts, counts, info)

    # Persistence ----------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write the model to ``path`` (an ``.npz`` archive) atomically."""
        meta = {
            "format": FORMAT,
            "chars": self.chars,
            "max_context_len": self.max_context_len,
            "info": self.info,
        }
        buffer = io.BytesIO()
        np.savez(
            buffer,
            meta=np.array(json.dumps(meta)),
            context_codes=self.context_codes,
            offsets=self.offsets,
            next_ids=self.next_ids.astype(np.uint16),
            counts=self.counts.astype(np.uint32 if self.counts.max(initial=0) < 2**32 else np.int64),
        )
        atomic_write_bytes(path, buffer.getvalue())
        return Path(path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> CharNGram:
        """Read a model written by :meth:`save`; a clear error if it is not one."""
        target = Path(path)
        if not target.is_file():
            raise UserInputError(
                f"{target}: no such n-gram model file; train one with 'chemassay generation train --model ngram:{target}'"
            )
        try:
            with np.load(target, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                if meta.get("format") != FORMAT:
                    raise ValueError(f"format {meta.get('format')!r}")
                return cls(
                    meta["chars"], meta["max_context_len"], data["context_codes"], data["offsets"],
                    data["next_ids"], data["counts"], meta.get("info"),
                )
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            # A truncated or damaged archive, or another file: one line, never a traceback.
            raise UserInputError(f"{target}: not a chemassay n-gram model, or a damaged one ({type(exc).__name__}: {exc})") from None

    # Sampling -------------------------------------------------------------------------
    def _rows(self) -> dict[int, int]:
        if self._row_of is None:
            self._row_of = {code: row for row, code in enumerate(self.context_codes.tolist())}
        return self._row_of

    def next_token_probs(
        self, row: int, l_smooth: float = DEFAULT_SMOOTHING, *, smoothing: np.ndarray | None = None
    ) -> np.ndarray:
        """Smoothed next-token distribution of context ``row`` over the vocabulary.

        ``smoothing`` is ``default_probs() * l_smooth`` when the caller has it at hand.
        """
        dense = np.zeros(len(self.vocab))
        lo, hi = self.offsets[row], self.offsets[row + 1]
        dense[self.next_ids[lo:hi]] = self.counts[lo:hi]
        smoothed = dense + (self.default_probs() * l_smooth if smoothing is None else smoothing)
        return smoothed / smoothed.sum()

    def sample(
        self,
        n: int,
        seed: int = 0,
        *,
        l_smooth: float = DEFAULT_SMOOTHING,
        context_len: int | None = None,
        max_len: int = DEFAULT_MAX_LEN,
        show_progress: bool | None = None,
    ) -> list[str]:
        """Draw ``n`` strings (not necessarily valid SMILES) from one ``RandomState(seed)``."""
        if context_len is None or context_len <= 0 or context_len > self.max_context_len:
            context_len = self.max_context_len
        rng = np.random.RandomState(seed)
        draw = rng.random_sample
        rows = self._rows()
        bits = self.bits
        window_mask = (1 << (bits * context_len)) - 1
        masks = [(1 << (bits * k)) - 1 for k in range(context_len + 1)]
        vocab = self.vocab
        eos = self.eos
        smoothing = self.default_probs() * l_smooth
        cdfs: dict[int, list[float]] = {}
        out: list[str] = []
        for _ in progress(range(n), description="sampling n-gram", disable=None if show_progress is None else not show_progress):
            window = self.bos + 1
            length = 1
            tokens: list[int] = []
            while length < max_len:
                row = None
                for k in range(min(length, context_len), 0, -1):
                    row = rows.get(window & masks[k])
                    if row is not None:
                        break
                cdf = cdfs.get(row)
                if cdf is None:
                    if len(cdfs) >= _CDF_CACHE_LIMIT:
                        cdfs.clear()
                    # numpy's RandomState.choice(p=...) draws exactly this way; bisect_right on
                    # the same floats is searchsorted(side="right"), without numpy overhead.
                    dense_cdf = self.next_token_probs(row, smoothing=smoothing).cumsum()
                    dense_cdf /= dense_cdf[-1]
                    cdf = dense_cdf.tolist()
                    cdfs[row] = cdf
                token = bisect_right(cdf, draw())
                length += 1
                if token == eos:
                    break
                tokens.append(token)
                window = ((window << bits) | (token + 1)) & window_mask
            out.append("".join(vocab[t] for t in tokens))
        return out


def symbol_bits(n_chars: int) -> int:
    """Bits per token in a packed context: token values run 1..n_chars+1 (chars and <bos>)."""
    return (n_chars + 1).bit_length()


def _sum_by_key(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    counts = counts[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.zeros(0, np.int64)
    return keys[starts], np.add.reduceat(counts, starts) if len(keys) else counts


def _window_counts(
    smiles: Sequence[str], points: np.ndarray, bits: int, max_context_len: int
) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (window, next token) keys of a chunk with their counts.

    The window of position ``j`` packs the ``max_context_len`` tokens before ``j`` (token
    value = vocabulary id + 1, newest lowest, 0 before the molecule start); the key appends
    the next token in the lowest ``bits`` (its character id, or ``n_chars`` for ``<eos>``).
    """
    n_chars = len(points)
    lengths = np.fromiter((len(s) for s in smiles), dtype=np.int64, count=len(smiles))
    text_points = _code_points("".join(smiles))
    char_ids = np.searchsorted(points, text_points)
    if len(text_points) and (char_ids.max() >= n_chars or np.any(points[np.minimum(char_ids, n_chars - 1)] != text_points)):
        raise UserInputError("a SMILES contains a character outside the model's alphabet")
    # Layout per molecule: <bos> chars <eos>, as token values (id + 1).
    total = int(lengths.sum()) + 2 * len(smiles)
    mol_starts = np.r_[0, np.cumsum(lengths + 2)[:-1]].astype(np.int64)
    values = np.empty(total, dtype=np.uint64)
    is_char = np.ones(total, dtype=bool)
    is_char[mol_starts] = False
    is_char[mol_starts + lengths + 1] = False
    values[is_char] = char_ids.astype(np.uint64) + np.uint64(1)
    values[mol_starts] = np.uint64(n_chars + 1)
    values[mol_starts + lengths + 1] = np.uint64(n_chars + 2)
    position = np.arange(total, dtype=np.int64) - np.repeat(mol_starts, lengths + 2)
    window = np.zeros(total, dtype=np.uint64)
    for k in range(1, max_context_len + 1):
        shifted = np.zeros(total, dtype=np.uint64)
        shifted[k:] = values[:-k]
        shifted[position < k] = 0
        window |= shifted << np.uint64(bits * (k - 1))
    targets = position >= 1
    # The next token is coded as its character id, or n_chars for <eos>.
    next_codes = values[targets] - np.uint64(1)
    next_codes[next_codes == np.uint64(n_chars + 1)] = np.uint64(n_chars)
    keys = (window[targets] << np.uint64(bits)) | next_codes
    uniq, counts = np.unique(keys, return_counts=True)
    return uniq, counts.astype(np.int64)
