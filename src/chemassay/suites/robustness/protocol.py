"""The robustness suite's protocols: an encoder (SMILES → embeddings, AMORE's probe) and a
property predictor (SMILES → values, the downstream tasks).

Everything a model kind needs to answer them: the Python methods, how an embeddings endpoint
answers an encoder, the predictions-file layouts and the conformance checks.

>>> import numpy as np
>>> ENCODER.join([np.array([1.0, 0.0]), np.array([0.0, 1.0])], {"layers": "last"}).shape
(2, 2)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

from chemassay.contract import Check, Protocol, TextOutcome
from chemassay.contract.errors import UserInputError
from chemassay.data.readers import SMILES_COLUMN_NAMES, read_table

MICRO_MOLECULES = ("CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "OC[C@H]1OC(O)[C@H](O)[C@@H](O)[C@@H]1O", "C1CCNCC1")
"""Five molecules (ethanol, phenol, paracetamol, glucose, piperidine): the inputs of the
conformance checks."""


def as_matrix(value: Any) -> np.ndarray:
    """A dense float64 matrix of an encoder's output (sparse matrices included)."""
    if hasattr(value, "toarray"):
        value = value.toarray()
    return np.asarray(value, dtype=np.float64)


def _as_layer(value: Any) -> Any:
    """An encoder's matrix as it came: a sparse matrix as CSR, a dense one as an array of its
    own dtype (float32 stays float32), so that rows put back together are the same matrix."""
    if sparse.issparse(value):
        return sparse.csr_matrix(value)
    array = np.asarray(value)
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == bool) or np.iscomplexobj(array):
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"encode() returned {array.dtype} values, not real numbers") from None
    return array


def _rows(layer: Any) -> list[Any]:
    """The rows of one layer: 1 x d CSR matrices of a sparse layer, 1-d arrays of a dense one."""
    if hasattr(layer, "getrow"):
        return [layer.getrow(i) for i in range(layer.shape[0])]
    return list(layer)


def _layers(options: Mapping[str, Any]) -> str:
    layers = options.get("layers", "last")
    if layers not in ("last", "all"):
        raise UserInputError(f"layers must be 'last' or 'all', got {layers!r}")
    return layers


class EncoderProtocol(Protocol):
    """SMILES → embeddings ``(n, d)``; with ``layers='all'`` a list of matrices, one per layer."""

    name = "encoder"
    method = "encode"
    signature = "encode(smiles: list[str], layers: str = 'last') -> ndarray (n, d) | list[ndarray]; a name attribute is optional"
    summary = "SMILES -> embeddings (n, d), per layer"
    answered_by = ("python", "predictions", "embeddings")
    needs_name = True
    missing = None
    predictions_layout = ("an .npz with 'smiles' (strings) and 'embeddings' (n x d), or layer_0, layer_1... "
                          "for several layers")

    def option_names(self) -> tuple[str, ...]:
        return ("layers",)

    def call(self, model: Any, items: Sequence[Any], options: Mapping[str, Any]) -> Any:
        return model.encode(list(items), layers=_layers(options))

    def split(self, returned: Any, count: int, options: Mapping[str, Any]) -> list[Any]:
        """One output per SMILES: its row (a 1 x d CSR matrix of a sparse encoder, else a 1-d
        array of the encoder's dtype), or with ``layers='all'`` its row of every layer."""
        if _layers(options) == "all":
            if not isinstance(returned, (list, tuple)) or not returned:
                raise ValueError(f"encode(layers='all') must return a non-empty list of matrices, got "
                                 f"{type(returned).__name__}")
            matrices = [_as_layer(layer) for layer in returned]
            if any(m.ndim != 2 or m.shape[0] != count for m in matrices):
                raise ValueError(f"encode(layers='all'): every layer must be ({count}, d)")
            return [list(row) for row in zip(*(_rows(m) for m in matrices), strict=True)]
        matrix = _as_layer(returned)
        if matrix.ndim != 2 or matrix.shape[0] != count:
            raise ValueError(f"encode() returned shape {matrix.shape} for {count} SMILES; expected ({count}, d)")
        return _rows(matrix)

    def join(self, outputs: list[Any], options: Mapping[str, Any]) -> Any:
        every = _layers(options) == "all"
        present = next((o for o in outputs if o is not None), None)
        if present is None:
            return [np.zeros((len(outputs), 0))] if every else np.zeros((len(outputs), 0))
        shapes = [np.asarray(layer).shape for layer in present] if every else [np.asarray(present).shape]
        blank = [np.full(shape, np.nan) for shape in shapes]
        rows = [(o if every else [o]) if o is not None else blank for o in outputs]
        matrices = [np.vstack([np.asarray(row[layer], dtype=np.float32) for row in rows]) for layer in range(len(shapes))]
        return matrices if every else matrices[0]

    def encode_output(self, output: Any) -> Any:
        if isinstance(output, list):
            return [as_matrix(layer).reshape(-1).tolist() for layer in output]
        return as_matrix(output).reshape(-1).tolist()

    def decode_output(self, stored: Any) -> Any:
        if stored and isinstance(stored[0], list):
            return [np.asarray(layer, dtype=np.float32) for layer in stored]
        return np.asarray(stored, dtype=np.float32)

    def answer_embeddings(self, embed: Callable[[list[str]], list[Any]], items: Sequence[str],
                          options: Mapping[str, Any]) -> TextOutcome:
        """An embeddings endpoint (one layer) as an encoder: a text whose request failed, or
        whose vector has another length than the others, fails with its reason."""
        every = _layers(options) == "all"
        vectors = embed(list(items))
        failures = {i: f"request failed: {v}" for i, v in enumerate(vectors) if isinstance(v, Exception)}
        lengths = Counter(len(v) for v in vectors if not isinstance(v, Exception))
        dim = lengths.most_common(1)[0][0] if lengths else 0
        outputs: list[Any] = []
        for index, vector in enumerate(vectors):
            if not isinstance(vector, Exception) and len(vector) != dim:
                failures[index] = f"request failed: embedding of length {len(vector)}, the others have {dim}"
            if index in failures:
                row = np.full(dim, np.nan, dtype=np.float32)
            else:
                row = np.asarray(vector, dtype=np.float32)
            outputs.append([row] if every else row)
        return TextOutcome(outputs, failures)

    def read_predictions(self, path: Path):
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
        index = {s: i for i, s in enumerate(smiles)}

        def answer(items: Sequence[str], options: Mapping[str, Any]) -> TextOutcome:
            every = _layers(options) == "all"
            missing = [s for s in items if s not in index]
            if missing:
                raise UserInputError(f"{path}: no embedding for {len(missing)} of {len(items)} SMILES "
                                     f"(e.g. {missing[0]!r})")
            rows = [[layer[index[s]] for layer in layers] for s in items]
            return TextOutcome([row if every else row[-1] for row in rows])

        return answer

    def checks(self) -> list[Check]:
        molecules = list(MICRO_MOLECULES)
        outputs: dict[str, Any] = {}

        def shape(model: Any) -> str | None:
            matrix = as_matrix(model.encode(molecules, layers="last"))
            outputs["first"] = matrix
            if matrix.ndim != 2 or matrix.shape[0] != len(molecules) or matrix.shape[1] < 1:
                return f"expected ({len(molecules)}, d), got {matrix.shape}"
            if not np.isfinite(matrix).all():
                return "embeddings contain NaN or infinite values"
            return None

        def deterministic(model: Any) -> str | None:
            if "first" not in outputs:
                return "no first output to compare with"
            again = as_matrix(model.encode(molecules, layers="last"))
            same = np.allclose(again, outputs["first"], rtol=1e-5, atol=1e-6)
            return None if same else "the same SMILES gave different embeddings"

        def order(model: Any) -> str | None:
            if "first" not in outputs:
                return "no first output to compare with"
            reversed_rows = as_matrix(model.encode(molecules[::-1], layers="last"))[::-1]
            same = np.allclose(reversed_rows, outputs["first"], rtol=1e-4, atol=1e-5)
            return None if same else "a row's embedding depends on the other rows of the batch"

        def layers(model: Any) -> str | None:
            every = model.encode(molecules[:2], layers="all")
            if not isinstance(every, list) or not every:
                return f"layers='all' must give a non-empty list, got {type(every).__name__}"
            last = as_matrix(every[-1])
            if last.shape[0] != 2:
                return f"layers='all': each layer must have one row per SMILES, got {last.shape}"
            return None

        return [("returns an (n, d) finite matrix", shape), ("deterministic for the same inputs", deterministic),
                ("independent of batch order", order), ("layers='all' returns a list of layers", layers)]


class PropertyPredictorProtocol(Protocol):
    """SMILES → predicted property values ``(n,)`` or ``(n, targets)`` (class probabilities
    ``(n, classes)`` for a classification task)."""

    name = "property-predictor"
    method = "predict_properties"
    signature = "predict_properties(smiles: list[str]) -> ndarray (n,) | (n, targets)"
    summary = "SMILES -> property values (downstream robustness)"
    missing = None
    predictions_layout = "a table with a SMILES column and one 'prediction' column (or several 'prediction_*' columns)"

    def split(self, returned: Any, count: int, options: Mapping[str, Any]) -> list[Any]:
        """One output per SMILES: its value, its row of values, or (several classification
        targets, one ``(n, classes)`` array each) its list of per-target rows."""
        if (isinstance(returned, (list, tuple)) and returned and all(np.ndim(o) == 2 for o in returned)
                and all(np.shape(o)[0] == count for o in returned)):
            per_target = [np.asarray(o, dtype=np.float64) for o in returned]
            return [[values[i] for values in per_target] for i in range(count)]
        try:
            values = np.asarray(returned, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("predict_properties() returned predictions that are not numbers") from None
        if values.ndim not in (1, 2) or values.shape[0] != count:
            raise ValueError(f"predict_properties() returned shape {values.shape} for {count} SMILES")
        return list(values)

    def join(self, outputs: list[Any], options: Mapping[str, Any]) -> Any:
        present = next((o for o in outputs if o is not None), None)
        blank = np.full(np.shape(present), np.nan) if present is not None else np.nan
        return np.asarray([blank if o is None else o for o in outputs], dtype=np.float64)

    def encode_output(self, output: Any) -> Any:
        return np.asarray(output).tolist()

    def decode_output(self, stored: Any) -> Any:
        return np.asarray(stored, dtype=np.float64)

    def read_predictions(self, path: Path):
        frame = read_table(path)
        key = next((c for c in frame.columns if c in SMILES_COLUMN_NAMES), None)
        values = [c for c in frame.columns if c == "prediction" or c.startswith("prediction_")]
        if key is None or not values:
            raise UserInputError(f"{path}: expected a SMILES column and a 'prediction' (or prediction_*) column")
        try:
            matrix = frame[values].astype(float).to_numpy()
        except ValueError:
            raise UserInputError(f"{path}: prediction columns must hold numbers") from None
        table = {str(s): (matrix[i, 0] if len(values) == 1 else matrix[i]) for i, s in enumerate(frame[key])}
        return self.lookup_answers(lambda smiles, options: table[smiles], path)

    def describe_item(self, item: Any) -> str:
        return f"SMILES {str(item)[:60]!r}"

    def checks(self) -> list[Check]:
        def shape(model: Any) -> str | None:
            values = np.asarray(model.predict_properties(list(MICRO_MOLECULES)), dtype=np.float64)
            if values.ndim not in (1, 2) or values.shape[0] != len(MICRO_MOLECULES):
                return f"expected ({len(MICRO_MOLECULES)},) or ({len(MICRO_MOLECULES)}, t), got {values.shape}"
            return None

        return [("returns one value (row) per SMILES", shape)]


ENCODER = EncoderProtocol()
PROPERTY_PREDICTOR = PropertyPredictorProtocol()

PROTOCOLS = (ENCODER, PROPERTY_PREDICTOR)
"""The protocols this suite defines."""
