"""AAE: the MOSES adversarial autoencoder for SMILES (``moses/aae``).

As in the reference code: one character embedding (reference default size 32; the paper
says 128) shared by a bidirectional LSTM encoder (1 × 512) — its final cell states go
through a linear layer to a 128-dimensional code — and an LSTM decoder (2 × 512) whose
initial cell state is a linear map of the code (hidden state zero). A discriminator
(128 → 640 → 256 → 1, ELU) tells codes of training molecules from draws of the N(0, I)
prior. Training alternates per batch: an autoencoder step (reconstruction cross-entropy
plus the adversarial loss that makes the codes look like prior draws, encoder and decoder
updated), then a discriminator step (codes labelled 0, prior draws 1, discriminator
updated); gradients are clamped to ±5; Adam at 1e-3 for both, halved every 20 epochs;
batch 512. Sampling draws a code from the prior and decodes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytorch_lightning as pl
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from chemassay.suites.generation.baselines.neural import set_step_lr


@dataclass
class AAEConfig:
    embedding: int = 32
    enc_hidden: int = 512
    enc_layers: int = 1
    enc_bidirectional: bool = True
    dec_hidden: int = 512
    dec_layers: int = 2
    latent: int = 128
    disc_layers: list[int] = field(default_factory=lambda: [640, 256])
    lr: float = 1e-3
    lr_step: int = 20
    lr_gamma: float = 0.5
    disc_steps: int = 1
    """Discriminator steps per autoencoder step."""


class AAE(pl.LightningModule):
    """The AAE model (see the module docs)."""

    def __init__(self, vocab_size: int, pad: int, config: dict) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.config = c = AAEConfig(**config)
        self.pad = pad
        self.automatic_optimization = False
        self.embedding = nn.Embedding(vocab_size, c.embedding, padding_idx=pad)
        self.encoder = nn.LSTM(c.embedding, c.enc_hidden, c.enc_layers, batch_first=True,
                               bidirectional=c.enc_bidirectional)
        self.to_latent = nn.Linear((2 if c.enc_bidirectional else 1) * c.enc_layers * c.enc_hidden, c.latent)
        self.latent_to_cell = nn.Linear(c.latent, c.dec_hidden)
        self.decoder = nn.LSTM(c.embedding, c.dec_hidden, c.dec_layers, batch_first=True)
        self.head = nn.Linear(c.dec_hidden, vocab_size)
        sizes = [c.latent, *c.disc_layers]
        layers: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(sizes, [*sizes[1:], 1], strict=True)):
            layers.append(nn.Linear(a, b))
            if i < len(sizes) - 1:
                layers.append(nn.ELU())
        self.discriminator = nn.Sequential(*layers)

    def encode(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = pack_padded_sequence(self.embedding(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (_, cell) = self.encoder(packed)
        return self.to_latent(cell.permute(1, 2, 0).reshape(tokens.shape[0], -1))

    def _initial_state(self, codes: torch.Tensor):
        cell = self.latent_to_cell(codes).unsqueeze(0).repeat(self.config.dec_layers, 1, 1)
        return torch.zeros_like(cell), cell

    def _reconstruction(self, tokens: torch.Tensor, lengths: torch.Tensor, codes: torch.Tensor) -> torch.Tensor:
        inputs = self.embedding(tokens[:, :-1])
        packed = pack_padded_sequence(inputs, (lengths - 1).cpu(), batch_first=True, enforce_sorted=False)
        output, _ = self.decoder(packed, self._initial_state(codes))
        output, _ = pad_packed_sequence(output, batch_first=True, total_length=tokens.shape[1] - 1)
        logits = self.head(output)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1), ignore_index=self.pad)

    def training_step(self, batch, batch_idx):
        tokens, lengths = batch
        ae_optimizer, disc_optimizer = self.optimizers()
        set_step_lr((ae_optimizer, disc_optimizer), self.config.lr, self.config.lr_step, self.config.lr_gamma,
                    self.current_epoch)
        codes = self.encode(tokens, lengths)
        if batch_idx % (self.config.disc_steps + 1) == 0:
            recon = self._reconstruction(tokens, lengths, codes)
            fooled = F.binary_cross_entropy_with_logits(self.discriminator(codes), torch.ones(len(codes), 1,
                                                                                              device=codes.device))
            loss, optimizer = recon + fooled, ae_optimizer
            self.log("loss", recon, prog_bar=True)
            self.log("adv", fooled, prog_bar=True)
        else:
            prior = torch.randn_like(codes)
            fake = F.binary_cross_entropy_with_logits(self.discriminator(codes.detach()),
                                                      torch.zeros(len(codes), 1, device=codes.device))
            real = F.binary_cross_entropy_with_logits(self.discriminator(prior),
                                                      torch.ones(len(codes), 1, device=codes.device))
            loss, optimizer = 0.5 * fake + 0.5 * real, disc_optimizer
            self.log("disc", loss, prog_bar=True)
        ae_optimizer.zero_grad()
        disc_optimizer.zero_grad()
        self.manual_backward(loss)
        for parameter in self.parameters():
            if parameter.grad is not None:
                parameter.grad.clamp_(-5, 5)
        optimizer.step()
        return loss

    def validation_step(self, batch, batch_idx):
        tokens, lengths = batch
        recon = self._reconstruction(tokens, lengths, self.encode(tokens, lengths))
        self.log("val_loss", recon, prog_bar=True, batch_size=len(lengths))

    def configure_optimizers(self):
        c = self.config
        autoencoder = [p for name, p in self.named_parameters() if not name.startswith("discriminator.")]
        ae = torch.optim.Adam(autoencoder, lr=c.lr)
        disc = torch.optim.Adam(self.discriminator.parameters(), lr=c.lr)
        return [ae, disc]

    def count_items(self, batch) -> int:
        return int(batch[0].shape[0])

    # sampling ------------------------------------------------------------------------
    def sampling_start(self, rows: int, generator: torch.Generator, device: str):
        codes = torch.randn(rows, self.config.latent, generator=generator).to(device)
        return self._initial_state(codes)

    def sampling_step(self, tokens: torch.Tensor, state):
        output, state = self.decoder(self.embedding(tokens).unsqueeze(1), state)
        return self.head(output[:, 0]), state
