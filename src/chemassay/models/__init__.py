"""Model protocols (what each suite needs a model to provide) and adapters."""

from chemassay.models.protocols import (
    BagPredictor,
    Encoder,
    MechanismPredictor,
    MoleculeGenerator,
    ReactionPredictor,
)

__all__ = ["BagPredictor", "Encoder", "MechanismPredictor", "MoleculeGenerator", "ReactionPredictor"]
