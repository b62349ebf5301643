"""A graph neural network of molecules (PyTorch only), its training and its embeddings.

The AMORE paper's upper bound is a graph network: it reads the molecular graph, not the
string, so every SMILES rewrite of a molecule gives it the same input. This module is a
GIN-style message-passing network with edge features (Xu et al. 2019; Hu et al. 2020):

    h⁰ᵥ = W·atom(v);   mᵥ = Σ_{u∈N(v)} ReLU(hᵤ + E·bond(u, v));   hˡ⁺¹ᵥ = LN(hˡᵥ + MLP((1 + ε)·hˡᵥ + mᵥ))

with a mean-pooled readout per layer and a linear property head on the last one. Its
features are **invariant to the atom order and to the spelling of the SMILES by
construction**: atoms are described by element, degree, formal charge, total hydrogen count,
aromaticity (RDKit's perception after parsing, so a Kekulé string gives the same flags),
hybridisation, ring membership and CIP label (R/S); bonds by order (aromatic perceived),
conjugation, ring membership and CIP label (E/Z). Chiral tags (CW/CCW) are *not* used: they
are relative to the neighbour order in the string and would change under an atom reordering.
Sums and means over atoms are permutation invariant, so two spellings of one molecule give
the same embedding up to float rounding (checked by ``check_invariance`` and the tests).

A trained network is a folder with ``config.json`` (sizes, target, normalisation) and
``model.safetensors``-free ``gnn.pt`` (a torch state dict); :class:`GNNEncoder` embeds
SMILES (``layers="all"``: the mean-pooled atom states after every layer, 0 = the input
projection) and predicts the property (the ``property-predictor`` protocol).
"""

from __future__ import annotations

import json
import os
import pickle
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rdkit.Chem import rdCIPLabeler

from chemassay.chem.molecules import InvalidSmiles, parse_smiles
from chemassay.contract.errors import UserInputError, require
from chemassay.models.spec import check_options, option_int
from chemassay.models.training import CHECKPOINT, LOG, TrainSettings, fit, load_module_state
from chemassay.runtime.files import atomic_write_text, sha256_file

ELEMENTS = ("C", "N", "O", "S", "F", "Cl", "Br", "I", "P", "B", "Si", "Se", "Na", "K", "Li", "Mg", "Ca", "Fe",
            "Zn", "Cu", "Co", "Pt", "Sn", "Al", "As", "Hg")
HYBRIDISATIONS = ("SP", "SP2", "SP3", "SP3D", "SP3D2")
ATOM_FEATURES = len(ELEMENTS) + 1 + 7 + 5 + 6 + 1 + len(HYBRIDISATIONS) + 1 + 1 + 3
BOND_FEATURES = 4 + 1 + 1 + 3
CHECKPOINT_NAME = "gnn.pt"


def _one_hot(value, choices, other: bool = True) -> list[float]:
    row = [float(value == c) for c in choices]
    if other:
        row.append(float(value not in choices))
    return row


def graph_features(smiles: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Atom features ``(atoms, F)``, directed edges ``(2, 2·bonds)`` and bond features
    ``(2·bonds, B)`` of a SMILES (hydrogens implicit); :class:`InvalidSmiles` if unreadable."""
    mol = parse_smiles(smiles)
    rdCIPLabeler.AssignCIPLabels(mol)
    atoms = []
    for atom in mol.GetAtoms():
        cip = atom.GetProp("_CIPCode") if atom.HasProp("_CIPCode") else ""
        atoms.append(
            _one_hot(atom.GetSymbol(), ELEMENTS)
            + _one_hot(min(atom.GetDegree(), 6), range(7), other=False)
            + _one_hot(atom.GetFormalCharge(), (-2, -1, 0, 1, 2), other=False)
            + _one_hot(min(atom.GetTotalNumHs(), 4), range(5))
            + [float(atom.GetIsAromatic())]
            + _one_hot(str(atom.GetHybridization()), HYBRIDISATIONS)
            + [float(atom.IsInRing())]
            + _one_hot(cip, ("R", "S"))
        )
    sources, targets, bonds = [], [], []
    for bond in mol.GetBonds():
        kind = str(bond.GetBondType())
        cip = bond.GetProp("_CIPCode") if bond.HasProp("_CIPCode") else ""
        row = (_one_hot(kind, ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC"), other=False)
               + [float(bond.GetIsConjugated()), float(bond.IsInRing())] + _one_hot(cip, ("E", "Z")))
        begin, end = bond.GetBeginAtomIdx(), bond.GetEndAtomIdx()
        sources += [begin, end]
        targets += [end, begin]
        bonds += [row, row]
    x = np.asarray(atoms, dtype=np.float32).reshape(-1, ATOM_FEATURES)
    edges = np.asarray([sources, targets], dtype=np.int64).reshape(2, -1)
    edge_features = np.asarray(bonds, dtype=np.float32).reshape(-1, BOND_FEATURES)
    return x, edges, edge_features


def collate_graphs(items: list[tuple]):
    """One disjoint batch graph from ``(x, edges, edge_features[, target])`` items:
    a dict of tensors with ``batch`` (graph index of each atom) and ``n_graphs``."""
    import torch

    xs, edges, features, batch, targets = [], [], [], [], []
    offset = 0
    for index, item in enumerate(items):
        x, edge, feature = item[:3]
        xs.append(torch.as_tensor(x))
        edges.append(torch.as_tensor(edge) + offset)
        features.append(torch.as_tensor(feature))
        batch.append(torch.full((len(x),), index, dtype=torch.long))
        if len(item) > 3:
            targets.append(float(item[3]))
        offset += len(x)
    out = {"x": torch.cat(xs), "edges": torch.cat(edges, dim=1), "edge_features": torch.cat(features),
           "batch": torch.cat(batch), "n_graphs": len(items)}
    if targets:
        out["y"] = torch.tensor(targets, dtype=torch.float32)
    return out


@dataclass
class GNNConfig:
    """Size and training settings of the graph network."""

    hidden: int = 128
    layers: int = 4
    dropout: float = 0.1
    learning_rate: float = 1e-3
    batch_size: int = 32
    steps_per_epoch: int = 32
    epochs: int = 60
    seed: int = 0
    target: str = "logS"
    target_mean: float = 0.0
    target_std: float = 1.0


def build_network(config: GNNConfig):
    """The untrained ``torch.nn.Module`` (see the module docstring)."""
    torch = require("torch", "torch", "the graph neural network")
    nn = torch.nn

    class GIN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.atom_in = nn.Linear(ATOM_FEATURES, config.hidden)
            self.bond_in = nn.ModuleList([nn.Linear(BOND_FEATURES, config.hidden) for _ in range(config.layers)])
            self.mlps = nn.ModuleList([
                nn.Sequential(nn.Linear(config.hidden, 2 * config.hidden), nn.ReLU(), nn.Linear(2 * config.hidden, config.hidden))
                for _ in range(config.layers)
            ])
            self.eps = nn.Parameter(torch.zeros(config.layers))
            self.norms = nn.ModuleList([nn.LayerNorm(config.hidden) for _ in range(config.layers)])
            self.dropout = nn.Dropout(config.dropout)
            self.head = nn.Linear(config.hidden, 1)

        def layer_states(self, graph) -> list:
            """Mean-pooled atom states after the input projection and after every layer."""
            h = self.atom_in(graph["x"])
            pooled = [self._pool(h, graph)]
            source, target = graph["edges"]
            for layer in range(len(self.mlps)):
                message = torch.relu(h[source] + self.bond_in[layer](graph["edge_features"]))
                aggregated = torch.zeros_like(h).index_add_(0, target, message)
                update = self.mlps[layer]((1 + self.eps[layer]) * h + aggregated)
                h = self.norms[layer](h + self.dropout(update))
                pooled.append(self._pool(h, graph))
            return pooled

        @staticmethod
        def _pool(h, graph):
            sums = torch.zeros((graph["n_graphs"], h.shape[1]), dtype=h.dtype, device=h.device)
            sums.index_add_(0, graph["batch"], h)
            counts = torch.bincount(graph["batch"], minlength=graph["n_graphs"]).clamp(min=1).to(h.dtype)
            return sums / counts[:, None]

        def forward(self, graph):
            return self.head(self.layer_states(graph)[-1]).squeeze(-1)

    return GIN()


def _lightning_module(config: GNNConfig):
    pl = require("pytorch_lightning", "train", "training the graph neural network")
    import torch

    class GNNModule(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.network = build_network(config)

        def _loss(self, batch):
            target = (batch["y"] - config.target_mean) / config.target_std
            return torch.nn.functional.mse_loss(self.network(batch), target)

        def training_step(self, batch, batch_idx):
            loss = self._loss(batch)
            self.log("loss", loss.detach(), prog_bar=True, on_step=True, on_epoch=True, batch_size=batch["n_graphs"])
            return loss

        def validation_step(self, batch, batch_idx):
            self.log("val_loss", self._loss(batch).detach(), on_epoch=True, batch_size=batch["n_graphs"])

        def configure_optimizers(self):
            return torch.optim.AdamW(self.parameters(), lr=config.learning_rate, weight_decay=1e-4)

        def count_items(self, batch) -> int:
            return int(batch["n_graphs"])

    return GNNModule()


def train_gnn(train_smiles: Sequence[str], train_targets: Sequence[float], valid_smiles: Sequence[str],
              valid_targets: Sequence[float], out: str | os.PathLike, config: GNNConfig, *, device: str = "cpu",
              threads: int | None = None, max_minutes: float | None = None, patience: int | None = 10,
              data_name: str = "") -> dict:
    """Train the network on a regression target into ``out`` (resumable through
    :func:`chemassay.models.training.fit`; early stopping on the validation loss, and the
    weights of the last epoch are kept). Unreadable SMILES are left out and counted.
    Returns the manifest (``out/train_manifest.json``); ``finished`` False means call again."""
    torch = require("torch", "torch", "the graph neural network")

    started, cpu_started = time.perf_counter(), time.process_time()

    def featurize(smiles, targets):
        items, bad = [], 0
        for text, value in zip(smiles, targets, strict=True):
            try:
                items.append((*graph_features(text), float(value)))
            except InvalidSmiles:
                bad += 1
        return items, bad

    train_items, train_bad = featurize(train_smiles, train_targets)
    valid_items, valid_bad = featurize(valid_smiles, valid_targets)
    if not train_items:
        raise UserInputError("no readable training molecules for the graph network")
    values = np.asarray([item[3] for item in train_items])
    config.target_mean, config.target_std = float(values.mean()), float(values.std() or 1.0)
    torch.manual_seed(config.seed)
    module = _lightning_module(config)
    target = Path(out)
    state = target / "training"
    settings = TrainSettings(seed=config.seed, max_epochs=config.epochs, steps_per_epoch=config.steps_per_epoch,
                             batch_size=config.batch_size, max_minutes=max_minutes, patience=patience, device=device,
                             threads=threads, extra={"gnn": asdict(config), "data": data_name})
    outcome = fit(module, train_items, collate_graphs, state, settings, val_dataset=valid_items or None)
    log = [json.loads(line) for line in (state / LOG).read_text(encoding="utf-8").splitlines() if line.strip()]
    manifest: dict[str, Any] = {
        "data": data_name, "n_train": len(train_items), "n_valid": len(valid_items),
        "unreadable": {"train": train_bad, "valid": valid_bad}, "config": asdict(config),
        "finished": outcome.finished, "epochs_done": outcome.epochs_done, "stopped_by": outcome.stopped_by,
        "best_val_loss": outcome.best_val_loss, "train_seconds": round(sum(r.get("elapsed_s", 0.0) for r in log), 1),
        "elapsed_s": round(time.perf_counter() - started, 1),
        "cpu_seconds_this_call": round(time.process_time() - cpu_started, 1),
    }
    if outcome.finished:
        load_module_state(module, state / CHECKPOINT)
        network = module.network.cpu().eval()
        target.mkdir(parents=True, exist_ok=True)
        torch.save(network.state_dict(), target / CHECKPOINT_NAME)
        atomic_write_text(target / "config.json", json.dumps({"model_type": "chemassay-gnn", **asdict(config)}, indent=1) + "\n")
        manifest["parameters"] = int(sum(p.numel() for p in network.parameters()))
        manifest["files"] = {name: sha256_file(target / name) for name in ("config.json", CHECKPOINT_NAME)}
    atomic_write_text(target / "train_manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest


class GNNEncoder:
    """A trained graph network folder as an encoder and a property predictor."""

    def __init__(self, folder: str | os.PathLike, *, batch_size: int = 256, device: str = "cpu") -> None:
        self.path = Path(folder)
        config_file = self.path / "config.json"
        if not (self.path.is_dir() and config_file.is_file() and (self.path / CHECKPOINT_NAME).is_file()):
            raise UserInputError(f"{self.path}: not a chemassay graph-network folder (expected config.json and "
                                 f"{CHECKPOINT_NAME}; train one with `chemassay robustness train-gnn`)")
        try:
            raw = json.loads(config_file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise UserInputError(f"{config_file}: not a JSON file") from None
        if raw.pop("model_type", None) != "chemassay-gnn":
            raise UserInputError(f"{config_file}: not a chemassay graph-network config (model_type != chemassay-gnn)")
        try:
            self.config = GNNConfig(**raw)
        except TypeError as exc:
            raise UserInputError(f"{config_file}: unexpected settings ({exc})") from None
        self.batch_size = max(1, int(batch_size))
        self.device_name = device
        self.name = f"gnn:{self.path.name}"
        self.failures: dict[int, str] = {}
        self.truncated: list[int] = []
        self._network = None

    def describe(self) -> dict[str, Any]:
        """Settings that determine the outputs."""
        return {"encoder": "gnn", "path": str(self.path), "hidden": self.config.hidden, "layers": self.config.layers,
                "target": self.config.target}

    def checksum(self) -> str:
        """sha256 of the weights."""
        return sha256_file(self.path / CHECKPOINT_NAME)

    def cache_key(self) -> str:
        """Embedding-cache key: the weights."""
        return f"gnn-{self.checksum()[:24]}-v1"

    def _load(self):
        if self._network is not None:
            return
        torch = require("torch", "torch", "the graph neural network")

        network = build_network(self.config)
        try:
            network.load_state_dict(torch.load(self.path / CHECKPOINT_NAME, map_location="cpu", weights_only=True))
        except (RuntimeError, OSError, EOFError, ValueError, KeyError, TypeError, pickle.UnpicklingError) as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise UserInputError(f"{self.path / CHECKPOINT_NAME}: not weights of this graph network ({first[:160]})") from None
        self.device = "cuda" if self.device_name == "auto" and torch.cuda.is_available() else (
            "cpu" if self.device_name == "auto" else self.device_name)
        self._torch = torch
        self._network = network.to(self.device).eval()

    def _run(self, smiles: Sequence[str]) -> tuple[list[np.ndarray], np.ndarray]:
        self._load()
        torch = self._torch
        self.failures = {}
        graphs = []
        for index, text in enumerate(smiles):
            try:
                graphs.append(graph_features(text))
            except InvalidSmiles as exc:
                self.failures[index] = exc.reason
                graphs.append(graph_features("C"))
        states: list[list[np.ndarray]] = []
        outputs = []
        with torch.no_grad():
            for start in range(0, len(graphs), self.batch_size):
                batch = collate_graphs(graphs[start:start + self.batch_size])
                batch = {k: v.to(self.device) if hasattr(v, "to") else v for k, v in batch.items()}
                layers = self._network.layer_states(batch)
                outputs.append(self._network.head(layers[-1]).squeeze(-1).cpu().numpy())
                if not states:
                    states = [[] for _ in layers]
                for slot, layer in zip(states, layers, strict=True):
                    slot.append(layer.float().cpu().numpy())
        matrices = [np.concatenate(slot).astype(np.float32) for slot in states] if states else []
        values = np.concatenate(outputs) if outputs else np.zeros(0)
        return matrices, values * self.config.target_std + self.config.target_mean

    def encode(self, smiles: Sequence[str], layers: str = "last") -> np.ndarray | list[np.ndarray]:
        """Mean-pooled atom states of the last layer, or of every layer (unreadable SMILES: ``failures``)."""
        if layers not in ("last", "all"):
            raise UserInputError(f"layers must be 'last' or 'all', got {layers!r}")
        matrices, _ = self._run(list(smiles))
        if not matrices:
            return np.zeros((0, self.config.hidden), dtype=np.float32) if layers == "last" else []
        return matrices[-1] if layers == "last" else matrices

    def predict_properties(self, smiles: Sequence[str]) -> np.ndarray:
        """The trained property (e.g. logS) per SMILES; NaN where unreadable (counted by the caller)."""
        _, values = self._run(list(smiles))
        values = values.astype(np.float64)
        for index in self.failures:
            values[index] = np.nan
        return values


def check_invariance(encoder: GNNEncoder, originals: Sequence[str], rewrites: Sequence[str]) -> float:
    """The largest absolute difference, over every layer, between the embeddings of
    ``originals`` and of their ``rewrites`` (row i = the same molecule)."""
    first, second = encoder.encode(originals, layers="all"), encoder.encode(rewrites, layers="all")
    return float(max(np.abs(a - b).max() for a, b in zip(first, second, strict=True))) if first else 0.0


def create_gnn(spec, protocol: str, context: dict[str, Any]) -> GNNEncoder:
    """Factory of the ``gnn`` kind (encoder and property predictor): ``gnn:DIR``."""
    check_options(spec, {"batch_size", "device"})
    if not spec.arg:
        raise UserInputError("--model gnn:DIR needs the folder of a trained graph network "
                             "(chemassay robustness train-gnn --out DIR)")
    return GNNEncoder(spec.arg, batch_size=option_int(spec, "batch_size", 256, minimum=1),
                      device=spec.options.get("device") or context.get("device") or "cpu")
