"""How ChemAlgebra's published tables meet the stoichiometry suite's metric keys."""

from __future__ import annotations

from typing import Any

from chemassay.report.published import PaperBinding
from chemassay.report.published.keys import Mapped

CHEMALGEBRA_KEYS = {
    "ACC": "ACC", "ALO": "ALO", "VAL": "VAL", "BAL": "BAL", "DEF": "DEF", "EXC": "EXC", "D+E": "DE",
    "EM": "EM", "JAC": "JAC", "F1": "F1",
    "molecule-only JAC": "mol_JAC", "molecule-only F1": "mol_F1",
    # Table 1 (`stoichiometry balance`); USPTO-BAL's count has no metric key (it is per split only)
    "total": "reactions", "balanced": "balanced", "re-balanced": "rebalanced",
    "balanced %": "balanced_pct", "re-balanced %": "rebalanced_pct", "USPTO-BAL %": "usable_pct",
}


def metric_key(metric: str, setting: dict[str, Any]) -> Mapped | None:
    """chemassay's key for a ChemAlgebra column (``None``: no such metric here)."""
    key = CHEMALGEBRA_KEYS.get(metric)
    return Mapped(key) if key else None


PERCENT_KEYS = frozenset({"balanced_pct", "rebalanced_pct", "usable_pct"})
"""Keys stored in percent (everything else the paper prints in percent is a fraction here)."""

PUBLISHED = PaperBinding(paper="chemalgebra", resource=("chemassay.suites.stoichiometry", "published.json"),
                         metric_key=metric_key, percent_keys=PERCENT_KEYS)
