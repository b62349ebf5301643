"""The ``predictions`` model kind: a file of a model's outputs, looked up by input.

Scoring a predictions file directly (``chemassay <suite> evaluate FILE ...``) is the universal
path; this kind lets the same file stand in for a live model wherever a command takes
``--model`` (iterated evaluation, check_model, the Python API). The file's layout is the
protocol's (:attr:`~chemassay.contract.Protocol.predictions_layout`, read by its
:meth:`~chemassay.contract.Protocol.read_predictions`); ``chemassay models list`` and
docs/adding-a-model.md list them. An input the file has no answer for gets the protocol's
missing output and is recorded in ``failures`` (index → reason), so a suite counts it as
missing rather than losing it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError
from chemassay.models.adapters import protocol_model
from chemassay.models.protocols import get_protocol
from chemassay.models.spec import ModelSpec
from chemassay.runtime.files import sha256_file


def create_predictions(spec: ModelSpec, protocol: str, context: dict[str, Any]):
    """Factory of the ``predictions`` kind (see the module docstring)."""
    if spec.options:
        raise UserInputError(f"--model {spec.text}: predictions takes no options")
    path = Path(spec.arg).expanduser()
    if not path.is_file():
        raise UserInputError(f"{path}: no such predictions file")
    found = get_protocol(protocol)
    answer = found.read_predictions(path)
    return protocol_model(found, answer, name=path.stem, describe={"file": str(path)}, checksum=sha256_file(path),
                          path=path)
