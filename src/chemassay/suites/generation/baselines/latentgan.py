"""LatentGAN: a SMILES heteroencoder plus a Wasserstein GAN on its latent space (``moses/latentgan``).

**Heteroencoder** (MOSES paper, appendix C; the reference uses the Deep Drug Coder
heteroencoder of Bjerrum and Sattarov): the encoder reads a *randomized* SMILES of a
molecule with a bidirectional LSTM (paper: 2 layers × 512), the final hidden and cell
states of every layer and direction are batch-normalised, mapped by a linear layer with
ReLU to the code (512), batch-normalised again, and Gaussian noise (σ = 0.1) is added while
training; the decoder is an LSTM (paper: 4 layers × 512) whose initial hidden and cell
states are ReLU-linear maps of the code and which is trained, by teacher forcing, to write
the molecule's *canonical* SMILES. Adam 1e-3 for the first half of the run, then an
exponential decay reaching 1e-6 at the last epoch; batch 128.

**WGAN-GP** (reference code): a generator of five linear layers (noise of the code's size,
uniform in [-1, 1] → 128 → 256 → 512 → 1024 → code; batch normalisation with ε = 0.8, as
the reference writes it, on the middle three; LeakyReLU 0.2) and a critic (code → 512 →
256 → 1, LeakyReLU 0.2), trained on the codes of training molecules (encoder in eval mode,
no noise) with the Wasserstein loss and a gradient penalty of weight 10, the generator
updated every 5 critic steps; Adam 2e-4, β = (0.5, 0.999) (the paper's text says β₂ = 0.9);
batch 64.

**Sampling** draws noise, maps it through the generator (eval mode) to a code and decodes
the code greedily (``temperature=0``, as the reference's ``predict_batch(temp=0)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import pytorch_lightning as pl
import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


@dataclass
class HeteroencoderConfig:
    embedding: int = 32
    enc_hidden: int = 512
    enc_layers: int = 2
    latent: int = 512
    dec_hidden: int = 512
    dec_layers: int = 4
    noise_std: float = 0.1
    lr: float = 1e-3
    lr_end: float = 1e-6
    schedule_epochs: int = 100
    """Length of the run (set from it when training): the rate decays over its second half."""


@dataclass
class GANConfig:
    latent: int = 512
    gp: float = 10.0
    n_critic: int = 5
    lr: float = 2e-4
    beta1: float = 0.5
    beta2: float = 0.999


@dataclass
class LatentGANConfig(HeteroencoderConfig):
    """Both stages' hyper-parameters (the GAN's learning rate is ``gan_lr``)."""

    gp: float = 10.0
    n_critic: int = 5
    gan_lr: float = 2e-4
    beta1: float = 0.5
    beta2: float = 0.999

    def autoencoder(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(HeteroencoderConfig)}

    def gan(self) -> dict:
        return {"latent": self.latent, "gp": self.gp, "n_critic": self.n_critic, "lr": self.gan_lr,
                "beta1": self.beta1, "beta2": self.beta2}


class Heteroencoder(pl.LightningModule):
    """Randomized SMILES → code → canonical SMILES (see the module docs)."""

    def __init__(self, vocab_size: int, pad: int, config: dict) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.config = c = HeteroencoderConfig(**config)
        self.pad = pad
        self.embedding = nn.Embedding(vocab_size, c.embedding, padding_idx=pad)
        self.encoder = nn.LSTM(c.embedding, c.enc_hidden, c.enc_layers, batch_first=True, bidirectional=True)
        states = 2 * 2 * c.enc_layers * c.enc_hidden
        self.states_norm = nn.BatchNorm1d(states)
        self.code = nn.Linear(states, c.latent)
        self.code_norm = nn.BatchNorm1d(c.latent)
        self.to_states = nn.Linear(c.latent, 2 * c.dec_layers * c.dec_hidden)
        self.decoder = nn.LSTM(c.embedding, c.dec_hidden, c.dec_layers, batch_first=True)
        self.head = nn.Linear(c.dec_hidden, vocab_size)

    def encode(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Codes of a batch (with the training noise in train mode)."""
        packed = pack_padded_sequence(self.embedding(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, (hidden, cell) = self.encoder(packed)
        states = torch.cat([hidden.permute(1, 0, 2).reshape(len(lengths), -1),
                            cell.permute(1, 0, 2).reshape(len(lengths), -1)], dim=1)
        code = self.code_norm(F.relu(self.code(self.states_norm(states))))
        if self.training and self.config.noise_std > 0:
            code = code + torch.randn_like(code) * self.config.noise_std
        return code

    def initial_state(self, codes: torch.Tensor):
        c = self.config
        states = F.relu(self.to_states(codes)).view(len(codes), 2, c.dec_layers, c.dec_hidden)
        return states[:, 0].permute(1, 0, 2).contiguous(), states[:, 1].permute(1, 0, 2).contiguous()

    def _loss(self, batch) -> torch.Tensor:
        (source, source_lengths), (target, target_lengths) = batch
        codes = self.encode(source, source_lengths)
        inputs = self.embedding(target[:, :-1])
        packed = pack_padded_sequence(inputs, (target_lengths - 1).cpu(), batch_first=True, enforce_sorted=False)
        output, _ = self.decoder(packed, self.initial_state(codes))
        output, _ = pad_packed_sequence(output, batch_first=True, total_length=target.shape[1] - 1)
        logits = self.head(output)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target[:, 1:].reshape(-1), ignore_index=self.pad)

    def _lr(self) -> float:
        c = self.config
        start = c.schedule_epochs // 2
        if self.current_epoch < start or c.schedule_epochs - 1 <= start:
            return c.lr
        fraction = (self.current_epoch - start) / (c.schedule_epochs - 1 - start)
        return c.lr * math.exp(fraction * math.log(c.lr_end / c.lr))

    def training_step(self, batch, batch_idx):
        for group in self.optimizers().optimizer.param_groups:
            group["lr"] = self._lr()
        loss = self._loss(batch)
        self.log("loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self._loss(batch), prog_bar=True, batch_size=len(batch[0][1]))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.config.lr)

    def count_items(self, batch) -> int:
        return int(batch[0][0].shape[0])

    def decode_step(self, tokens: torch.Tensor, state):
        output, state = self.decoder(self.embedding(tokens).unsqueeze(1), state)
        return self.head(output[:, 0]), state


class LatentGenerator(nn.Module):
    """The WGAN generator: uniform noise → a code."""

    def __init__(self, latent: int) -> None:
        super().__init__()

        def block(a: int, b: int, normalize: bool = True) -> list[nn.Module]:
            layers: list[nn.Module] = [nn.Linear(a, b)]
            if normalize:
                layers.append(nn.BatchNorm1d(b, 0.8))  # 0.8 is the reference's epsilon
            layers.append(nn.LeakyReLU(0.2))
            return layers

        self.latent = latent
        self.model = nn.Sequential(*block(latent, 128, normalize=False), *block(128, 256), *block(256, 512),
                                   *block(512, 1024), nn.Linear(1024, latent))

    def forward(self, noise: torch.Tensor) -> torch.Tensor:
        return self.model(noise)


class LatentGAN(pl.LightningModule):
    """WGAN-GP on heteroencoder codes (see the module docs); batches are code tensors."""

    def __init__(self, config: dict) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.config = c = GANConfig(**config)
        self.automatic_optimization = False
        self.generator = LatentGenerator(c.latent)
        self.critic = nn.Sequential(nn.Linear(c.latent, 512), nn.LeakyReLU(0.2), nn.Linear(512, 256),
                                    nn.LeakyReLU(0.2), nn.Linear(256, 1))

    def noise(self, rows: int, generator: torch.Generator | None = None) -> torch.Tensor:
        return torch.rand(rows, self.config.latent, generator=generator) * 2 - 1

    def _penalty(self, real: torch.Tensor, fake: torch.Tensor) -> torch.Tensor:
        alpha = torch.rand(len(real), 1, device=real.device)
        mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        scores = self.critic(mixed)
        gradients = torch.autograd.grad(scores, mixed, torch.ones_like(scores), create_graph=True, retain_graph=True)[0]
        return ((gradients.norm(2, dim=1) - 1) ** 2).mean()

    def training_step(self, batch, batch_idx):
        c = self.config
        critic_optimizer, generator_optimizer = self.optimizers()
        real = batch
        fake = self.generator(self.noise(len(real)).to(real.device))
        critic_loss = (-self.critic(real).mean() + self.critic(fake.detach()).mean()
                       + c.gp * self._penalty(real, fake.detach()))
        critic_optimizer.zero_grad()
        self.manual_backward(critic_loss)
        critic_optimizer.step()
        self.log("critic", critic_loss, prog_bar=True)
        if batch_idx % c.n_critic == 0:
            generator_loss = -self.critic(self.generator(self.noise(len(real)).to(real.device))).mean()
            generator_optimizer.zero_grad()
            self.manual_backward(generator_loss)
            generator_optimizer.step()
            self.log("loss", generator_loss, prog_bar=True)
        return critic_loss

    def validation_step(self, batch, batch_idx):
        fake = self.generator(self.noise(len(batch)).to(batch.device))
        # The critic's estimate of the Wasserstein distance between held-out codes and generated ones.
        self.log("val_loss", self.critic(batch).mean() - self.critic(fake).mean(), prog_bar=True, batch_size=len(batch))

    def configure_optimizers(self):
        c = self.config
        betas = (c.beta1, c.beta2)
        return [torch.optim.Adam(self.critic.parameters(), lr=c.lr, betas=betas),
                torch.optim.Adam(self.generator.parameters(), lr=c.lr, betas=betas)]

    def count_items(self, batch) -> int:
        return int(batch.shape[0])


class LatentGANSampler(nn.Module):
    """Noise → generator → code → the heteroencoder's decoder (the sampling interface)."""

    def __init__(self, autoencoder: Heteroencoder, gan: LatentGAN) -> None:
        super().__init__()
        self.autoencoder = autoencoder
        self.gan = gan

    def sampling_start(self, rows: int, generator: torch.Generator, device: str):
        codes = self.gan.generator(self.gan.noise(rows, generator).to(device))
        return self.autoencoder.initial_state(codes)

    def sampling_step(self, tokens: torch.Tensor, state):
        return self.autoencoder.decode_step(tokens, state)
