"""How the MOSES paper's published tables meet the generation suite's metric keys."""

from __future__ import annotations

from typing import Any

from chemassay.report.published import PaperBinding
from chemassay.report.published.keys import Mapped
from chemassay.suites.generation.baselines.reference_samples import reference_records

MOSES_KEYS = {
    "Valid": "valid", "Unique@1k": "unique@1000", "Unique@10k": "unique@10000",
    "Filters": "Filters", "Novelty": "Novelty", "IntDiv1": "IntDiv", "IntDiv2": "IntDiv2",
    "FCD/Test": "FCD/Test", "FCD/TestSF": "FCD/TestSF", "SNN/Test": "SNN/Test", "SNN/TestSF": "SNN/TestSF",
    "Frag/Test": "Frag/Test", "Frag/TestSF": "Frag/TestSF", "Scaf/Test": "Scaf/Test", "Scaf/TestSF": "Scaf/TestSF",
}


def metric_key(metric: str, setting: dict[str, Any]) -> Mapped | None:
    """chemassay's key for a MOSES column (``None``: no such metric here)."""
    key = MOSES_KEYS.get(metric)
    return Mapped(key) if key else None


def reference_runs() -> list:
    """The MOSES baselines chemassay trained and ships (``published = False`` records)."""
    return reference_records()


PUBLISHED = PaperBinding(paper="moses", resource=("chemassay.suites.generation", "published.json"),
                         metric_key=metric_key, reference_runs=reference_runs)
