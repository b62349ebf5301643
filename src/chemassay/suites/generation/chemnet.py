"""Fréchet ChemNet Distance: ChemNet activations and the Fréchet distance of two Gaussians.

ChemNet (Preuer et al. 2018) is the published FCD network; its weights come from the
``fcd_torch`` PyPI package (``ChemNet_v0.13_pretrained.pt``), which MOSES uses. The input
encoding is the one of ``fcd_torch``: a canonical SMILES plus a ``.`` end mark, split into
the 35 ChemNet symbols (a letter followed by ``r``, ``i`` or ``l`` is one two-letter
symbol; unknown symbols map to ``X``), one-hot encoded over 350 positions and divided by
35. The activations are the output of the second LSTM at its last position (512 values).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from chemassay.errors import require

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


def chemnet_activations(
    smiles: list[str], *, device: str = "cpu", batch_size: int = 512, show_progress: bool | None = None
) -> np.ndarray:
    """ChemNet activations ``(len(smiles), 512)`` (float32) of already canonical SMILES."""
    torch = require("torch", "torch", "the FCD metric")
    from chemassay.runtime.progress import progress_task

    if not smiles:
        return np.zeros((0, ACTIVATION_SIZE), dtype=np.float32)
    model = chemnet_model(device)
    tokens = [chemnet_tokens(s) for s in smiles]
    out = np.empty((len(smiles), ACTIVATION_SIZE), dtype=np.float32)
    with torch.no_grad(), progress_task("ChemNet", len(smiles), disable=None if show_progress is None else not show_progress) as advance:
        for start in range(0, len(smiles), batch_size):
            chunk = tokens[start:start + batch_size]
            activations = model(_one_hot_batch(chunk, torch, device))
            out[start:start + len(chunk)] = activations.to("cpu").numpy()
            advance(len(chunk))
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
