"""VAE: the MOSES SMILES variational autoencoder (``moses/vae``).

As the reference code builds it: character embeddings initialised to one-hot vectors
(size = vocabulary), a GRU encoder (reference default 1 × 256, unidirectional, whose last
hidden state gives the mean and log-variance of a 128-dimensional Gaussian code), and a
GRU decoder (3 × 512) whose initial state is a linear map of the code and whose input at
every step is the previous character's embedding concatenated with the code. The loss is
the reconstruction cross-entropy plus ``kl_weight`` × the KL divergence to N(0, I), with
the weight rising linearly from ``kl_w_start`` to ``kl_w_end`` over the run (reference
defaults 0 → 0.05; the paper's text says 0 → 1), Adam at 3·10⁻⁴, gradients clipped at 50.
Sampling draws a code from N(0, I) and decodes it character by character.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytorch_lightning as pl
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


@dataclass
class VAEConfig:
    enc_hidden: int = 256
    enc_layers: int = 1
    enc_bidirectional: bool = False
    enc_dropout: float = 0.5
    dec_hidden: int = 512
    dec_layers: int = 3
    dec_dropout: float = 0.0
    latent: int = 128
    lr: float = 3e-4
    kl_start: int = 0
    kl_w_start: float = 0.0
    kl_w_end: float = 0.05
    kl_epochs: int = 100
    """Epochs over which the KL weight rises (the run's length; set from it when training)."""


class VAE(pl.LightningModule):
    """The VAE model (see the module docs)."""

    def __init__(self, vocab_size: int, pad: int, config: dict) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.config = c = VAEConfig(**config)
        self.pad = pad
        self.embedding = nn.Embedding(vocab_size, vocab_size, padding_idx=pad)
        with torch.no_grad():
            self.embedding.weight.copy_(torch.eye(vocab_size))
        self.encoder = nn.GRU(vocab_size, c.enc_hidden, c.enc_layers, batch_first=True,
                              dropout=c.enc_dropout if c.enc_layers > 1 else 0.0, bidirectional=c.enc_bidirectional)
        last = c.enc_hidden * (2 if c.enc_bidirectional else 1)
        self.q_mu = nn.Linear(last, c.latent)
        self.q_logvar = nn.Linear(last, c.latent)
        self.decoder = nn.GRU(vocab_size + c.latent, c.dec_hidden, c.dec_layers, batch_first=True,
                              dropout=c.dec_dropout if c.dec_layers > 1 else 0.0)
        self.decoder_lat = nn.Linear(c.latent, c.dec_hidden)
        self.decoder_fc = nn.Linear(c.dec_hidden, vocab_size)

    def encode(self, tokens: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        packed = pack_padded_sequence(self.embedding(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, hidden = self.encoder(packed)
        hidden = hidden[-(1 + int(self.config.enc_bidirectional)):]
        hidden = torch.cat(hidden.split(1), dim=-1).squeeze(0)
        return self.q_mu(hidden), self.q_logvar(hidden)

    def kl_weight(self) -> float:
        c = self.config
        span = max(c.kl_epochs - c.kl_start, 1)
        k = max(int(self.current_epoch) - c.kl_start, 0)
        return c.kl_w_start + k * (c.kl_w_end - c.kl_w_start) / span

    def _losses(self, batch) -> tuple[torch.Tensor, torch.Tensor]:
        tokens, lengths = batch
        mu, logvar = self.encode(tokens, lengths)
        z = mu + (logvar / 2).exp() * torch.randn_like(mu)
        kl = 0.5 * (logvar.exp() + mu**2 - 1 - logvar).sum(1).mean()
        embedded = self.embedding(tokens)
        inputs = torch.cat([embedded, z.unsqueeze(1).expand(-1, tokens.shape[1], -1)], dim=-1)
        packed = pack_padded_sequence(inputs, lengths.cpu(), batch_first=True, enforce_sorted=False)
        h0 = self.decoder_lat(z).unsqueeze(0).repeat(self.config.dec_layers, 1, 1)
        output, _ = self.decoder(packed, h0)
        output, _ = pad_packed_sequence(output, batch_first=True, total_length=tokens.shape[1])
        logits = self.decoder_fc(output)
        recon = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1),
                                ignore_index=self.pad)
        return kl, recon

    def training_step(self, batch, batch_idx):
        kl, recon = self._losses(batch)
        loss = self.kl_weight() * kl + recon
        self.log("loss", loss, prog_bar=True)
        self.log("recon", recon, prog_bar=True)
        self.log("kl", kl, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        kl, recon = self._losses(batch)
        self.log("val_loss", self.kl_weight() * kl + recon, prog_bar=True, batch_size=len(batch[1]))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.config.lr)

    def count_items(self, batch) -> int:
        return int(batch[0].shape[0])

    # sampling ------------------------------------------------------------------------
    def sampling_start(self, rows: int, generator: torch.Generator, device: str):
        z = torch.randn(rows, self.config.latent, generator=generator).to(device)
        h = self.decoder_lat(z).unsqueeze(0).repeat(self.config.dec_layers, 1, 1)
        return z, h

    def sampling_step(self, tokens: torch.Tensor, state):
        z, h = state
        inputs = torch.cat([self.embedding(tokens), z], dim=-1).unsqueeze(1)
        output, h = self.decoder(inputs, h)
        return self.decoder_fc(output[:, 0]), (z, h)
