"""Fréchet ChemNet Distance: ChemNet activations and the Fréchet distance of two Gaussians.

ChemNet (Preuer et al. 2018) is the published FCD network; its weights come from the
``fcd_torch`` PyPI package (``ChemNet_v0.13_pretrained.pt``), which MOSES uses. The input
encoding is the one of ``fcd_torch``: a canonical SMILES plus a ``.`` end mark, split into
the 35 ChemNet symbols (a letter followed by ``r``, ``i`` or ``l`` is one two-letter
symbol; unknown symbols map to ``X``), one-hot encoded over 350 positions and divided by
35. The activations are the output of the second LSTM at its last position (512 values).
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from chemassay.contract.errors import require
from chemassay.runtime.progress import progress_task
from chemassay.runtime.threads import thread_map

CHEMNET_SYMBOLS = (
    "C", "N", "O", "H", "F", "Cl", "P", "B", "Br", "S", "I", "Si", "#", "(", ")", "+", "-",
    "1", "2", "3", "4", "5", "6", "7", "8", "=", "[", "]", "@", "c", "n", "o", "s", "X", ".",
)
_SYMBOL_INDEX = {symbol: i for i, symbol in enumerate(CHEMNET_SYMBOLS)}
_UNKNOWN = _SYMBOL_INDEX["X"]
_END = _SYMBOL_INDEX["."]
_SECOND_LETTERS = frozenset("ril")
INPUT_LENGTH = 350
ACTIVATION_SIZE = 512


def chemnet_tokens(smiles: str, length: int = INPUT_LENGTH) -> list[int]:
    """Symbol indices of ``smiles`` as ChemNet reads it, end mark included.

    Reading stops at the first ``.`` (the end mark, so a multi-fragment SMILES is cut at
    its first dot, as in ``fcd_torch``) or when ``length - 1`` symbols have been read.
    """
    text = smiles + "."
    tokens: list[int] = []
    position = 0
    while True:
        if text[position + 1] in _SECOND_LETTERS:
            symbol = text[position:position + 2]
            position += 2
        else:
            symbol = text[position]
            position += 1
        tokens.append(_SYMBOL_INDEX.get(symbol, _UNKNOWN))
        if text[position] == "." or len(tokens) == length - 1:
            tokens.append(_END)
            return tokens


@lru_cache(maxsize=4)
def chemnet_model(device: str = "cpu"):
    """The ChemNet network of ``fcd_torch`` in eval mode on ``device``."""
    fcd_torch = require("fcd_torch", "torch", "the FCD metric")
    model = fcd_torch.FCD(device=device, n_jobs=1).model
    return model.to(device).eval()


def _one_hot_batch(token_lists: list[list[int]], torch, device: str):
    batch = torch.zeros((len(token_lists), INPUT_LENGTH, len(CHEMNET_SYMBOLS)), dtype=torch.float32)
    rows = np.repeat(np.arange(len(token_lists)), [len(t) for t in token_lists])
    cols = np.concatenate([np.arange(len(t)) for t in token_lists])
    symbols = np.concatenate([np.asarray(t) for t in token_lists])
    # fcd_torch divides the float64 one-hot by 35 and then casts to float32.
    batch[rows, cols, symbols] = float(np.float32(1.0 / len(CHEMNET_SYMBOLS)))
    return batch.transpose(1, 2).to(device)


class _ZeroInputTrajectory:
    """States and outputs of ChemNet's first LSTM after reading k all-zero inputs.

    The convolutions have no bias, so every position past a SMILES' end mark convolves to
    exactly zero, and the first LSTM (which reads the sequence backwards) starts with a run
    of zero inputs whose length depends only on the SMILES length. Its states along that
    run are the same for every molecule: computed once here, they replace re-running the
    LSTM over the padding for each molecule.
    """

    def __init__(self, lstm, steps: int, torch) -> None:
        self.hidden = []
        self.cell = []
        outputs = []
        size = lstm.hidden_size
        h = torch.zeros((1, 1, size))
        c = torch.zeros((1, 1, size))
        zero = torch.zeros((1, 1, lstm.input_size))
        self.hidden.append(h)
        self.cell.append(c)
        for _ in range(steps):
            out, (h, c) = lstm(zero, (h, c))
            outputs.append(out[0, 0])
            self.hidden.append(h)
            self.cell.append(c)
        self.outputs = torch.stack(outputs)  # (steps, size): output after k+1 zero inputs


def _activations_skipping_padding(model, batch, token_lengths: list[int], trajectory, torch):
    """ChemNet activations of one batch, reading only the positions that hold a SMILES."""
    conv, lstm1, lstm2 = model[:6], model[8], model[11]
    full_steps = trajectory.outputs.shape[0]
    # Inputs past the end mark are zero; a conv output depends on inputs 4j-3 .. 4j+6.
    width = min(INPUT_LENGTH, -(-(max(token_lengths) + 3) // 4) * 4)
    steps = width // 4
    if steps >= full_steps:
        return model(batch)
    features = conv(batch[:, :, :width]).transpose(1, 2)  # (B, steps, 32)
    skipped = full_steps - steps
    size = len(token_lengths)
    h0 = trajectory.hidden[skipped].expand(1, size, -1).contiguous()
    c0 = trajectory.cell[skipped].expand(1, size, -1).contiguous()
    content, _ = lstm1(torch.flip(features, [1]), (h0, c0))
    tail = torch.flip(trajectory.outputs[:skipped], [0]).unsqueeze(0).expand(size, -1, -1)
    sequence = torch.cat([torch.flip(content, [1]), tail], dim=1)
    out, _ = lstm2(sequence)
    return out[:, -1]


SMALL_BATCH = 64
"""Batches up to this size run on one CPU thread: their matrices are too small for threads
to pay off, and on a busy machine waiting threads made them many times slower."""


@contextmanager
def _one_thread_if_small(torch, size: int):
    """Run a small CPU computation on one thread (restoring the setting after)."""
    threads = torch.get_num_threads()
    if size > SMALL_BATCH or threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@lru_cache(maxsize=4)
def _trajectory(device: str):
    torch = require("torch", "torch", "the FCD metric")
    model = chemnet_model(device)
    with torch.no_grad(), _one_thread_if_small(torch, 1):  # ~90 single-molecule steps
        steps = model[:6](torch.zeros((1, len(CHEMNET_SYMBOLS), INPUT_LENGTH), device=device)).shape[2]
        return _ZeroInputTrajectory(model[8].to("cpu"), steps, torch) if device == "cpu" else None


def chemnet_activations(
    smiles: list[str],
    *,
    device: str = "cpu",
    batch_size: int = 512,
    show_progress: bool | None = None,
    skip_padding: bool = True,
    n_threads: int | None = None,
) -> np.ndarray:
    """ChemNet activations ``(len(smiles), 512)`` (float32) of already canonical SMILES.

    On the CPU (``skip_padding``) batches are formed from SMILES of similar length and the
    first LSTM and the convolutions only read the positions that hold them (see
    :class:`_ZeroInputTrajectory`); the result equals the plain forward pass up to float32
    rounding (about 1e-6), which FCD does not see. CPU batches run on ``n_threads`` threads
    with one kernel thread each (:func:`chemassay.runtime.threads.thread_map`): no thread
    waits for another, so a core taken by another process slows one batch, not every step.
    """
    torch = require("torch", "torch", "the FCD metric")

    if not smiles:
        return np.zeros((0, ACTIVATION_SIZE), dtype=np.float32)
    model = chemnet_model(device)
    tokens = [chemnet_tokens(s) for s in smiles]
    trajectory = _trajectory(device) if skip_padding and device == "cpu" else None
    order = np.argsort([len(t) for t in tokens], kind="stable") if trajectory else np.arange(len(tokens))
    out = np.empty((len(smiles), ACTIVATION_SIZE), dtype=np.float32)
    disable = None if show_progress is None else not show_progress
    if device == "cpu":  # smaller batches keep both threads busy to the end on small sets
        batch_size = max(16, min(batch_size, -(-len(smiles) // 2)))
    starts = list(range(0, len(smiles), batch_size))
    with torch.no_grad(), progress_task("ChemNet", len(smiles), disable=disable) as advance:

        def run(start: int) -> None:
            rows = order[start:start + batch_size]
            chunk = [tokens[i] for i in rows]
            with torch.no_grad():
                batch = _one_hot_batch(chunk, torch, device)
                if trajectory is not None:
                    activations = _activations_skipping_padding(model, batch, [len(t) for t in chunk], trajectory, torch)
                else:
                    activations = model(batch)
                out[rows] = activations.to("cpu").float().numpy()
            advance(len(chunk))

        if device == "cpu":
            thread_map(run, starts, n_threads=n_threads)
        else:
            for start in starts:
                run(start)
    return out


def gaussian_statistics(activations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of activations as ``fcd_torch`` computes them (``np.cov``)."""
    return activations.mean(0), np.cov(activations.T)


def frechet_distance(mu1: np.ndarray, sigma1: np.ndarray, mu2: np.ndarray, sigma2: np.ndarray) -> float:
    """Fréchet distance ``|mu1-mu2|^2 + Tr(S1) + Tr(S2) - 2 Tr((S1 S2)^(1/2))`` of two Gaussians.

    The eigenvalues of ``S1 S2`` (both covariances are positive semi-definite) are those of
    the symmetric ``R S2 R`` with ``R = S1^(1/2)``, so the trace of the square root is the
    sum of the square roots of a symmetric eigenproblem's eigenvalues (round-off negatives
    clipped to zero). This equals the ``sqrtm``-based formula of the FCD reference code to
    rounding, and is faster and stable for singular covariances (fewer molecules than 512).
    """
    mu1 = np.atleast_1d(np.asarray(mu1, dtype=np.float64))
    mu2 = np.atleast_1d(np.asarray(mu2, dtype=np.float64))
    sigma1 = np.atleast_2d(np.asarray(sigma1, dtype=np.float64))
    sigma2 = np.atleast_2d(np.asarray(sigma2, dtype=np.float64))
    if mu1.shape != mu2.shape or sigma1.shape != sigma2.shape:
        raise ValueError("Fréchet distance of Gaussians of different dimensions")
    values, vectors = np.linalg.eigh((sigma1 + sigma1.T) / 2)
    root1 = (vectors * np.sqrt(np.clip(values, 0.0, None))) @ vectors.T
    inner = root1 @ sigma2 @ root1
    inner_values = np.linalg.eigvalsh((inner + inner.T) / 2)
    trace_sqrt = float(np.sqrt(np.clip(inner_values, 0.0, None)).sum())
    diff = mu1 - mu2
    return float(diff.dot(diff) + np.trace(sigma1) + np.trace(sigma2) - 2.0 * trace_sqrt)
