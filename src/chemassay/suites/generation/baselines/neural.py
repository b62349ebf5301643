"""What the learned MOSES generators share: the character vocabulary, the training data,
seeded autoregressive sampling and the model folder.

The MOSES neural baselines (CharRNN, VAE, AAE, LatentGAN) read and write SMILES one
character at a time, as the reference implementation (``moses.utils.CharVocab``) does: the
vocabulary is the sorted set of characters of the training set followed by ``<bos>``,
``<eos>``, ``<pad>`` and ``<unk>`` (so ``Cl`` is ``C``, ``l``). A training example is
``<bos> s <eos>``.

**Sampling** (:func:`sample_smiles`) draws ``n`` molecules in batches of ``batch`` rows;
batch ``b`` of ``sample(n, seed)`` uses its own CPU ``torch.Generator`` seeded from
``(seed, b)`` for every random number it needs (latent codes, next characters by inverse
CDF), so the same ``n``, ``seed`` and ``batch`` give the same molecules, draw for draw, on
the same device and library versions. A molecule ends at ``<eos>`` or after ``max_len``
characters; ``<bos>``, ``<pad>`` and ``<unk>`` are never sampled (the reference can emit
them mid-string, which only makes an invalid sample). ``temperature=0`` is greedy decoding
(LatentGAN's reference sampler decodes greedily).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from chemassay.contract.errors import UserInputError
from chemassay.runtime.progress import progress_task

SPECIAL = ("<bos>", "<eos>", "<pad>", "<unk>")


class CharVocab:
    """Characters of the training SMILES, then ``<bos> <eos> <pad> <unk>`` (MOSES order)."""

    def __init__(self, chars: Sequence[str]) -> None:
        chars = sorted(set(chars))
        if any(len(c) != 1 for c in chars):
            raise UserInputError("a character vocabulary holds single characters only")
        self.chars = chars
        self.tokens = [*chars, *SPECIAL]
        self.index = {token: i for i, token in enumerate(self.tokens)}
        self.bos, self.eos, self.pad, self.unk = (self.index[s] for s in SPECIAL)

    @classmethod
    def from_smiles(cls, smiles: Sequence[str]) -> CharVocab:
        """The vocabulary of a training set."""
        seen: set[str] = set()
        for text in smiles:
            seen.update(text)
        if not seen:
            raise UserInputError("the training set has no characters to build a vocabulary from")
        return cls(sorted(seen))

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, text: str) -> list[int]:
        """``<bos>`` + the characters (``<unk>`` for an unknown one) + ``<eos>``."""
        unk = self.unk
        return [self.bos, *(self.index.get(c, unk) for c in text), self.eos]

    def decode(self, ids: Sequence[int]) -> str:
        """The characters before the first ``<eos>`` (special tokens dropped)."""
        out = []
        n_chars = len(self.chars)
        for i in ids:
            if i == self.eos:
                break
            if 0 <= i < n_chars:
                out.append(self.chars[i])
        return "".join(out)

    def unknown(self, text: str) -> set[str]:
        """Characters of ``text`` outside the vocabulary."""
        return {c for c in text if c not in self.index or len(c) != 1}

    def as_json(self) -> list[str]:
        return list(self.chars)


class SmilesDataset:
    """Map-style dataset of encoded SMILES (encoded when an item is read)."""

    def __init__(self, smiles: Sequence[str], vocab: CharVocab) -> None:
        self.smiles = list(smiles)
        self.vocab = vocab

    def __len__(self) -> int:
        return len(self.smiles)

    def __getitem__(self, index: int) -> list[int]:
        return self.vocab.encode(self.smiles[index])

    def lengths(self) -> list[int]:
        return [len(s) + 2 for s in self.smiles]


def pad_collate(pad: int):
    """A collate function: token lists → ``(tokens [B, T] padded with pad, lengths [B])``."""

    def collate(items: list[list[int]]):
        import torch

        lengths = torch.tensor([len(i) for i in items], dtype=torch.long)
        tokens = torch.full((len(items), int(lengths.max())), pad, dtype=torch.long)
        for row, ids in enumerate(items):
            tokens[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        return tokens, lengths

    return collate


def batch_seed(seed: int, batch: int) -> int:
    """The generator seed of sampling batch ``batch`` of ``sample(n, seed)``."""
    digest = hashlib.sha256(f"chemassay-sample/{int(seed)}/{int(batch)}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def draw_next(logits, generator, temperature: float, banned: Sequence[int]):
    """Next tokens from ``logits`` [B, V]: inverse CDF of the softmax with uniforms from
    ``generator`` (CPU), or the argmax when ``temperature`` is 0."""
    import torch

    logits = logits.float().clone()
    if banned:
        logits[:, list(banned)] = float("-inf")
    if temperature == 0:
        return logits.argmax(-1)
    probs = torch.softmax(logits / temperature, dim=-1).double().cpu()
    cdf = probs.cumsum(-1)
    u = torch.rand(probs.shape[0], 1, generator=generator, dtype=torch.float64) * cdf[:, -1:]
    picked = torch.searchsorted(cdf, u, right=True).squeeze(1)
    return picked.clamp_(max=probs.shape[1] - 1).to(logits.device)


def decode_rows(vocab: CharVocab, rows) -> list[str]:
    """Strings of sampled token rows (each stops at its first ``<eos>``)."""
    return [vocab.decode(row) for row in rows.tolist()]


def sample_smiles(model: Any, vocab: CharVocab, n: int, seed: int, *, batch: int = 512, max_len: int = 100,
                  temperature: float = 1.0, device: str = "cpu", show_progress: bool | None = None) -> list[str]:
    """``n`` strings from an autoregressive model (see the module docs for the seeding).

    ``model`` implements ``sampling_start(rows, generator, device) -> state`` and
    ``sampling_step(tokens [rows], state) -> (logits [rows, V], state)``.
    """
    import torch

    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise UserInputError(f"cannot sample {n!r} molecules; n must be a whole number, 0 or more")
    if temperature < 0:
        raise UserInputError(f"temperature must be 0 or more, got {temperature}")
    out: list[str] = []
    banned = (vocab.bos, vocab.pad, vocab.unk)
    model.eval()
    with torch.no_grad(), progress_task("sampling", n, disable=None if show_progress is None else not show_progress) \
            as advance:
        for number, start in enumerate(range(0, n, batch)):
            rows = min(batch, n - start)
            generator = torch.Generator().manual_seed(batch_seed(seed, number))
            state = model.sampling_start(rows, generator, device)
            tokens = torch.full((rows,), vocab.bos, dtype=torch.long, device=device)
            done = torch.zeros(rows, dtype=torch.bool, device=device)
            steps = []
            for _ in range(max_len):
                logits, state = model.sampling_step(tokens, state)
                tokens = draw_next(logits, generator, temperature, banned)
                tokens = torch.where(done, torch.full_like(tokens, vocab.eos), tokens)
                steps.append(tokens)
                done |= tokens == vocab.eos
                if bool(done.all()):
                    break
            out.extend(decode_rows(vocab, torch.stack(steps, 1).cpu()))
            advance(rows)
    return out


def held_out_split(smiles: Sequence[str], val: int) -> tuple[list[str], list[str]]:
    """Training and validation molecules: the last ``val`` are held out (never trained on)."""
    smiles = list(smiles)
    if val < 0:
        raise UserInputError(f"val must be 0 or more, got {val}")
    if val and val >= len(smiles):
        raise UserInputError(f"cannot hold out {val} validation molecules from {len(smiles)}")
    return (smiles[:-val], smiles[-val:]) if val else (smiles, [])


def tensor_fingerprint(values: np.ndarray) -> str:
    """sha256 of an array's bytes (shape and dtype included)."""
    digest = hashlib.sha256()
    digest.update(f"{values.dtype}/{values.shape}".encode())
    digest.update(np.ascontiguousarray(values).tobytes())
    return digest.hexdigest()


def set_step_lr(optimizers, base: float, step: int, gamma: float, epoch: int) -> None:
    """Set the learning rate ``base · gamma^(epoch // step)`` (a step schedule that depends on
    the epoch alone, so a resumed run has the uncut run's rates; for manual optimization)."""
    value = base * gamma ** (int(epoch) // max(int(step), 1))
    for optimizer in optimizers:
        inner = getattr(optimizer, "optimizer", optimizer)
        for group in inner.param_groups:
            group["lr"] = value
