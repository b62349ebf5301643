"""How AMORE's published tables meet the robustness suite's metric keys."""

from __future__ import annotations

from typing import Any

from chemassay.report.published import PaperBinding
from chemassay.report.published.keys import Mapped

#: The paper's augmentation names → chemassay's. The paper's "cycle" renumbers only the rings
#: whose two labels are adjacent among the ring labels (its code, checked against its files in
#: docs/robustness.md): that is ``cycle_renumber_amore``, not ``cycle_renumber`` (every ring).
AMORE_AUGMENTATIONS = {
    "canon": "canonical", "hydro": "explicit_h", "kekul": "kekulize", "cycle": "cycle_renumber_amore",
    "cycles": "cycle_renumber_amore", "orig": "original",
}
#: Retrieval keys (``{augmentation}`` and ``{direction}`` are filled in).
AMORE_RETRIEVAL = {"Acc@1": "{augmentation}/{direction}_acc@1", "Acc@5": "{augmentation}/{direction}_acc@5",
                   "MRR": "{augmentation}/{direction}_mrr"}
#: Downstream keys (``robustness downstream``): classification accuracy and regression RMSE.
AMORE_DOWNSTREAM = {"accuracy": "{augmentation}/accuracy", "rmse": "{augmentation}/rmse"}
AMORE_STRINGS = {"mean length": "{augmentation}/mean_length"}


def metric_key(metric: str, setting: dict[str, Any]) -> Mapped | None:
    """chemassay's key for an AMORE column (the augmentation and direction become part of the key)."""
    augmentation = AMORE_AUGMENTATIONS.get(str(setting.get("augmentation", "")).lower())
    if metric in AMORE_RETRIEVAL and augmentation:
        key = AMORE_RETRIEVAL[metric].format(augmentation=augmentation, direction=setting.get("direction", "o2a"))
        return Mapped(key, ("augmentation", "direction"))
    if metric in AMORE_DOWNSTREAM and augmentation:
        return Mapped(AMORE_DOWNSTREAM[metric].format(augmentation=augmentation), ("augmentation",))
    if metric in AMORE_STRINGS and augmentation:
        return Mapped(AMORE_STRINGS[metric].format(augmentation=augmentation), ("augmentation",))
    return None


MISSING = (
    ({"dataset": "isomers"}, "AMORE's Table 2 (the QM9 isomers) has no numbers in the paper text chemassay works "
                             "from; the text says only that no model passes 1 % Acc@1 with explicit hydrogens "
                             "(docs/robustness.md)."),
    ({"task": "solubility"}, "AMORE's downstream tables are MoleculeNet sets chemassay does not ship; the "
                             "solubility task is other data, so no published row stands beside it."),
)
"""Settings of the suite's results the paper has no row for, and why."""

PUBLISHED = PaperBinding(paper="amore", resource=("chemassay.suites.robustness", "published.json"),
                         metric_key=metric_key, missing=MISSING)
