"""How Bradshaw et al.'s published tables meet the reaction-ood suite's metric keys."""

from __future__ import annotations

import re
from typing import Any

from chemassay.report.published import PaperBinding
from chemassay.report.published.keys import Mapped

#: chemassay's key for top-k accuracy (``top-1`` in the paper).
REACTION_OOD_TOPK = "top{k}_accuracy"


def metric_key(metric: str, setting: dict[str, Any]) -> Mapped | None:
    """chemassay's key for a Bradshaw et al. column (``top-1`` → ``top1_accuracy``)."""
    match = re.fullmatch(r"top-(\d+)", metric)
    return Mapped(REACTION_OOD_TOPK.format(k=int(match.group(1)))) if match else None


MISSING = (
    ({"split": "document", "part": "test"}, "Bradshaw et al. print no accuracy on the document split's seen "
                                            "patents; Table S2.2 reports the new patents (test_ood) only."),
    ({"split": "time"}, "Bradshaw et al.'s time splits (Table S2.3) are measured on a Buchwald-Hartwig test set "
                        "by training cutoff, not on the test years of a Schneider-50k time split."),
    ({"split": "reaction-type", "part": "test"}, "Table S2.4 reports the held-out reaction classes (test_ood) "
                                                 "only, not the test part of the classes kept in training."),
)
"""Settings of the suite's results the paper has no row for, and why (docs/reaction-ood.md)."""

PUBLISHED = PaperBinding(paper="bradshaw", resource=("chemassay.suites.reaction_ood", "published.json"),
                         metric_key=metric_key, missing=MISSING)
