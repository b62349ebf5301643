"""The ``predictions`` model kind: a file of a model's outputs, looked up by input.

Scoring a predictions file directly (``chemassay <suite> evaluate FILE ...``) is the universal path; this kind lets the same file stand in for a
live model wherever a command takes ``--model`` (iterated evaluation, check_model, the
Python API). Layouts, by protocol:

* ``reaction-predictor``: a table (CSV/TSV/Parquet/JSONL) with a ``reactants`` column and a
  ``prediction`` column, one row per candidate in rank order (an optional ``rank`` column
  orders them), or JSONL rows ``{"reactants": ..., "predictions": [...]}``;
* ``bag-predictor``: a table or JSONL with ``source`` and ``prediction`` columns;
* ``generator``: a SMILES file (any layout :func:`chemassay.data.readers.read_smiles_file`
  reads); ``sample(n)`` returns its first ``n`` molecules (the seed cannot change a file);
* ``encoder``: an ``.npz`` with ``smiles`` (strings) and ``embeddings`` (``n × d``), or
  ``layer_0``, ``layer_1``... for several layers;
* ``mechanism-predictor``: JSONL rows ``{"reaction_id": ..., "response": ...}``;
* ``property-predictor``: a table with a SMILES column and one ``prediction`` column (or
  several ``prediction_*`` columns).

An input the file has no answer for gets an empty prediction and is recorded in
``failures`` (index → reason), so a suite counts it as missing rather than losing it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chemassay.errors import UserInputError
from chemassay.models.spec import ModelSpec
from chemassay.runtime.files import sha256_file


def _rows(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSONL file or a table, as dicts."""
    from chemassay.data.readers import iter_lines, read_table

    if path.suffix.lower() in {".jsonl", ".ndjson"} or path.name.lower().endswith((".jsonl.gz", ".ndjson.gz")):
        rows = []
        for number, line in iter_lines(path):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UserInputError(f"{path}: line {number} is not JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise UserInputError(f"{path}: line {number} is not a JSON object")
            rows.append(row)
        return rows
    frame = read_table(path)
    return frame.to_dict("records")


def _column(rows: list[dict[str, Any]], names: tuple[str, ...], path: Path, what: str) -> str:
    present = set(rows[0]) if rows else set()
    found = next((n for n in names if n in present), None)
    if found is None:
        raise UserInputError(f"{path}: no {what} column; expected one of {list(names)}, found {sorted(present)}")
    return found


class _FileModel:
    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise UserInputError(f"{path}: no such predictions file")
        self.path = path
        self.name = path.stem
        self.failures: dict[int, str] = {}
        self._checksum = sha256_file(path)

    def describe(self) -> dict[str, Any]:
        return {"file": str(self.path)}

    def checksum(self) -> str:
        return self._checksum

    def _miss(self, index: int, what: str) -> None:
        self.failures[index] = f"{self.path.name} has no prediction for {what}"


class ReactionPredictionsFile(_FileModel):
    """reaction-predictor from a file of ranked predictions keyed by reactants."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        rows = _rows(path)
        key = _column(rows, ("reactants", "input", "source"), path, "reactants")
        self.table: dict[str, list[tuple[float, int, str]]] = {}
        if rows and "predictions" in rows[0]:
            for order, row in enumerate(rows):
                values = row["predictions"]
                values = values if isinstance(values, list) else str(values).split("|")
                self.table.setdefault(str(row[key]), []).extend((rank, order, str(v)) for rank, v in enumerate(values))
        else:
            value = _column(rows, ("prediction", "product", "products"), path, "prediction")
            for order, row in enumerate(rows):
                rank = float(row["rank"]) if row.get("rank") not in (None, "") else float(order)
                self.table.setdefault(str(row[key]), []).append((rank, order, str(row[value])))

    def predict(self, reactants: Sequence[str], k: int = 10) -> list[list[str]]:
        self.failures = {}
        out = []
        for index, query in enumerate(reactants):
            found = self.table.get(query)
            if found is None:
                self._miss(index, f"reactants {query[:60]!r}")
                out.append([])
                continue
            out.append([smiles for _, _, smiles in sorted(found)][:k])
        return out


class BagPredictionsFile(_FileModel):
    """bag-predictor from a file of (source, prediction) pairs."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        rows = _rows(path)
        key = _column(rows, ("source", "src", "input"), path, "source")
        value = _column(rows, ("prediction", "target", "output"), path, "prediction")
        self.table = {str(row[key]): str(row[value]) for row in rows}

    def predict_bags(self, sources: Sequence[str]) -> list[str]:
        self.failures = {}
        out = []
        for index, source in enumerate(sources):
            if source not in self.table:
                self._miss(index, f"source {source[:60]!r}")
            out.append(self.table.get(source, ""))
        return out


class SmilesFileGenerator(_FileModel):
    """generator from a file of generated SMILES (the first ``n``; the seed is ignored)."""

    def __init__(self, path: Path) -> None:
        from chemassay.data.readers import read_smiles_file

        super().__init__(path)
        self.smiles = read_smiles_file(path).smiles

    def sample(self, n: int, seed: int = 0) -> list[str]:
        if n < 0:
            raise UserInputError(f"cannot sample {n} molecules; n must be 0 or more")
        if n > len(self.smiles):
            raise UserInputError(f"{self.path}: holds {len(self.smiles)} SMILES, {n} were asked for")
        return list(self.smiles[:n])


class EmbeddingsFile(_FileModel):
    """encoder from an ``.npz`` of SMILES and their embeddings (one or several layers)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                names = list(data.files)
                smiles = [str(s) for s in data["smiles"]] if "smiles" in names else None
                layer_names = sorted((n for n in names if n.startswith("layer_")), key=lambda n: int(n.split("_")[1]))
                layers = [np.asarray(data[n], dtype=np.float32) for n in layer_names] or (
                    [np.asarray(data["embeddings"], dtype=np.float32)] if "embeddings" in names else [])
        except (OSError, ValueError, KeyError) as exc:
            raise UserInputError(f"{path}: not a readable .npz of embeddings ({exc})") from None
        if smiles is None or not layers:
            raise UserInputError(f"{path}: expected arrays 'smiles' and 'embeddings' (or layer_0, layer_1, ...)")
        for layer in layers:
            if layer.ndim != 2 or layer.shape[0] != len(smiles):
                raise UserInputError(f"{path}: every embeddings array must be (n_smiles, d) with n_smiles={len(smiles)}")
        self.index = {s: i for i, s in enumerate(smiles)}
        self.layers = layers

    def encode(self, smiles: Sequence[str], layers: str = "last") -> np.ndarray | list[np.ndarray]:
        if layers not in ("last", "all"):
            raise UserInputError(f"layers must be 'last' or 'all', got {layers!r}")
        missing = [s for s in smiles if s not in self.index]
        if missing:
            raise UserInputError(f"{self.path}: no embedding for {len(missing)} of {len(smiles)} SMILES (e.g. {missing[0]!r})")
        rows = np.fromiter((self.index[s] for s in smiles), dtype=np.int64, count=len(smiles))
        chosen = [layer[rows] for layer in self.layers]
        return chosen if layers == "all" else chosen[-1]


class MechanismPredictionsFile(_FileModel):
    """mechanism-predictor from JSONL answers keyed by ``reaction_id``."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        rows = _rows(path)
        _column(rows, ("reaction_id",), path, "reaction_id")
        self.table = {str(r["reaction_id"]): r.get("response", r.get("mechanism", "")) for r in rows}

    def predict_mechanisms(self, reactions: Sequence[dict[str, Any]]) -> list[str | list[dict]]:
        self.failures = {}
        out: list[str | list[dict]] = []
        for index, reaction in enumerate(reactions):
            key = str(reaction.get("reaction_id"))
            if key not in self.table:
                self._miss(index, f"reaction {key}")
            value = self.table.get(key, "")
            out.append(value if isinstance(value, (str, list)) else json.dumps(value))
        return out


class PropertyPredictionsFile(_FileModel):
    """property-predictor from a table of SMILES and predicted values."""

    def __init__(self, path: Path) -> None:
        from chemassay.data.readers import SMILES_COLUMN_NAMES, read_table

        super().__init__(path)
        frame = read_table(path)
        key = next((c for c in frame.columns if c in SMILES_COLUMN_NAMES), None)
        values = [c for c in frame.columns if c == "prediction" or c.startswith("prediction_")]
        if key is None or not values:
            raise UserInputError(f"{path}: expected a SMILES column and a 'prediction' (or prediction_*) column")
        try:
            matrix = frame[values].astype(float).to_numpy()
        except ValueError:
            raise UserInputError(f"{path}: prediction columns must hold numbers") from None
        self.table = {str(s): matrix[i] for i, s in enumerate(frame[key])}
        self.width = len(values)

    def predict_properties(self, smiles: Sequence[str]) -> np.ndarray:
        self.failures = {}
        out = np.full((len(smiles), self.width), np.nan)
        for index, text in enumerate(smiles):
            if text in self.table:
                out[index] = self.table[text]
            else:
                self._miss(index, f"SMILES {text[:60]!r}")
        return out[:, 0] if self.width == 1 else out


_BY_PROTOCOL = {
    "reaction-predictor": ReactionPredictionsFile,
    "bag-predictor": BagPredictionsFile,
    "generator": SmilesFileGenerator,
    "encoder": EmbeddingsFile,
    "mechanism-predictor": MechanismPredictionsFile,
    "property-predictor": PropertyPredictionsFile,
}


def create_predictions(spec: ModelSpec, protocol: str, context: dict[str, Any]):
    """Factory of the ``predictions`` kind (see the module docstring)."""
    if spec.options:
        raise UserInputError(f"--model {spec.text}: predictions takes no options")
    return _BY_PROTOCOL[protocol](Path(spec.arg).expanduser())
