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


PUBLISHED = PaperBinding(paper="bradshaw", resource=("chemassay.suites.reaction_ood", "published.json"),
                         metric_key=metric_key)
