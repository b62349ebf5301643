"""CharRNN: the MOSES character-level LSTM language model (``moses/char_rnn``).

Architecture (MOSES paper, appendix C, and the reference code): an embedding whose size is
the vocabulary size, a stack of LSTM layers (paper: 3 × 768, dropout 0.2 between layers)
and a linear layer to the next-character logits. Trained by maximum likelihood (next
character cross-entropy; padding is ignored, where the reference also counts the padded
positions) with Adam, learning rate 1e-3 halved every 10 epochs, batch 64, 80 epochs (a
MOSES epoch is one pass over the 1.58 M training molecules). Sampling starts from
``<bos>`` and feeds each drawn character back.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytorch_lightning as pl
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from chemassay.suites.generation.baselines.neural import set_step_lr


@dataclass
class CharRNNConfig:
    hidden: int = 768
    layers: int = 3
    dropout: float = 0.2
    lr: float = 1e-3
    lr_step: int = 10
    """Halve the learning rate every ``lr_step`` epochs (``lr_gamma``)."""
    lr_gamma: float = 0.5


class CharRNN(pl.LightningModule):
    """The CharRNN model (see the module docs)."""

    def __init__(self, vocab_size: int, pad: int, config: dict) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.config = CharRNNConfig(**config)
        self.pad = pad
        c = self.config
        self.embedding = nn.Embedding(vocab_size, vocab_size, padding_idx=pad)
        self.lstm = nn.LSTM(vocab_size, c.hidden, c.layers, dropout=c.dropout if c.layers > 1 else 0.0,
                            batch_first=True)
        self.head = nn.Linear(c.hidden, vocab_size)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = pack_padded_sequence(self.embedding(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        output, _ = self.lstm(packed)
        output, _ = pad_packed_sequence(output, batch_first=True, total_length=tokens.shape[1])
        return self.head(output)

    def _loss(self, batch) -> torch.Tensor:
        tokens, lengths = batch
        logits = self(tokens[:, :-1], lengths - 1)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1), ignore_index=self.pad)

    def training_step(self, batch, batch_idx):
        c = self.config
        set_step_lr([self.optimizers()], c.lr, c.lr_step, c.lr_gamma, self.current_epoch)
        loss = self._loss(batch)
        self.log("loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self._loss(batch), prog_bar=True, batch_size=len(batch[1]))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.config.lr)

    def count_items(self, batch) -> int:
        return int(batch[0].shape[0])

    # sampling ------------------------------------------------------------------------
    def sampling_start(self, rows: int, generator: torch.Generator, device: str):
        return None

    def sampling_step(self, tokens: torch.Tensor, state):
        output, state = self.lstm(self.embedding(tokens).unsqueeze(1), state)
        return self.head(output[:, 0]), state
