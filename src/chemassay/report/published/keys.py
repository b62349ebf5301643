"""Where the papers' metric names meet chemassay's metric keys, and where a result's config
meets the papers' settings — the one place to align when a suite renames a key.

Two things live here:

* :func:`metric_key` maps a column of a published table (the paper's metric name plus the
  column's setting, e.g. ``Acc@1`` with ``augmentation=canon``) to the key a chemassay result
  carries (``canonical/o2a_acc@1``), or to ``None`` when chemassay computes no such metric
  (ROUGE-2, METEOR, the number of Buchwald-Hartwig reactions in a training set). A mapping
  may *consume* setting entries that became part of the key (the augmentation above), so
  they no longer distinguish published rows.
* :func:`result_setting` reads, from a user's result, the same setting names the published
  tables use (``variant``, ``split``, ``part``, ``dataset``...), so the report can put a
  result beside the published rows of the same setting.

Units: papers print percentages where chemassay stores fractions; :func:`to_chemassay_units`
converts (keys stored in percent are listed in :data:`PERCENT_KEYS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Mapped:
    """A chemassay metric key, and the setting names that were folded into it."""

    key: str
    consumes: tuple[str, ...] = ()


# --- stoichiometry (ChemAlgebra) -------------------------------------------------------------
CHEMALGEBRA_KEYS = {
    "ACC": "ACC", "ALO": "ALO", "VAL": "VAL", "BAL": "BAL", "DEF": "DEF", "EXC": "EXC", "D+E": "DE",
    "EM": "EM", "JAC": "JAC", "F1": "F1",
    "molecule-only JAC": "mol_JAC", "molecule-only F1": "mol_F1",
    # Table 1 (`stoichiometry balance`); USPTO-BAL's count has no metric key (it is per split only)
    "total": "reactions", "balanced": "balanced", "re-balanced": "rebalanced",
    "balanced %": "balanced_pct", "re-balanced %": "rebalanced_pct", "USPTO-BAL %": "usable_pct",
}

# --- reaction-ood (Bradshaw et al.) ----------------------------------------------------------
#: chemassay's key for top-k accuracy (``top-1`` in the paper).
REACTION_OOD_TOPK = "top{k}_accuracy"

# --- generation (MOSES) ----------------------------------------------------------------------
MOSES_KEYS = {
    "Valid": "valid", "Unique@1k": "unique@1000", "Unique@10k": "unique@10000",
    "Filters": "Filters", "Novelty": "Novelty", "IntDiv1": "IntDiv", "IntDiv2": "IntDiv2",
    "FCD/Test": "FCD/Test", "FCD/TestSF": "FCD/TestSF", "SNN/Test": "SNN/Test", "SNN/TestSF": "SNN/TestSF",
    "Frag/Test": "Frag/Test", "Frag/TestSF": "Frag/TestSF", "Scaf/Test": "Scaf/Test", "Scaf/TestSF": "Scaf/TestSF",
}

# --- robustness (AMORE) ----------------------------------------------------------------------
#: The paper's augmentation names → chemassay's.
AMORE_AUGMENTATIONS = {
    "canon": "canonical", "hydro": "explicit_h", "kekul": "kekulize", "cycle": "cycle_renumber",
    "cycles": "cycle_renumber", "orig": "original",
}
#: Retrieval keys (``{augmentation}`` and ``{direction}`` are filled in).
AMORE_RETRIEVAL = {"Acc@1": "{augmentation}/{direction}_acc@1", "Acc@5": "{augmentation}/{direction}_acc@5",
                   "MRR": "{augmentation}/{direction}_mrr"}
#: Downstream keys (``robustness downstream``): classification accuracy and regression RMSE.
AMORE_DOWNSTREAM = {"accuracy": "{augmentation}/accuracy", "rmse": "{augmentation}/rmse"}
AMORE_STRINGS = {"mean length": "{augmentation}/mean_length"}

# --- mechanism (oMeBench) --------------------------------------------------------------------
OMEBENCH_KEYS = {"V": "V", "L": "L", "S_tot": "S_total", "S_part": "S_partial"}
#: A difficulty level's (or domain's) value of a metric; ``overall`` is the plain key.
OMEBENCH_LEVEL_KEY = "{level}/{key}"

#: chemassay keys whose values are stored in percent (everything else that a paper prints
#: in percent is a fraction in chemassay).
PERCENT_KEYS = frozenset({"balanced_pct", "rebalanced_pct", "usable_pct"})


def _amore(metric: str, setting: dict[str, Any]) -> Mapped | None:
    augmentation = AMORE_AUGMENTATIONS.get(str(setting.get("augmentation", "")).lower())
    if metric in AMORE_RETRIEVAL and augmentation:
        key = AMORE_RETRIEVAL[metric].format(augmentation=augmentation, direction=setting.get("direction", "o2a"))
        return Mapped(key, ("augmentation", "direction"))
    if metric in AMORE_DOWNSTREAM and augmentation:
        return Mapped(AMORE_DOWNSTREAM[metric].format(augmentation=augmentation), ("augmentation",))
    if metric in AMORE_STRINGS and augmentation:
        return Mapped(AMORE_STRINGS[metric].format(augmentation=augmentation), ("augmentation",))
    return None


def _omebench(metric: str, setting: dict[str, Any]) -> Mapped | None:
    key = OMEBENCH_KEYS.get(metric)
    if key is None:
        return None
    level = setting.get("level", "overall")
    if level == "overall":
        return Mapped(key, ("level",))
    return Mapped(OMEBENCH_LEVEL_KEY.format(level=level, key=key), ("level",))


def _bradshaw(metric: str, setting: dict[str, Any]) -> Mapped | None:
    match = re.fullmatch(r"top-(\d+)", metric)
    return Mapped(REACTION_OOD_TOPK.format(k=int(match.group(1)))) if match else None


def metric_key(paper: str, metric: str, setting: dict[str, Any]) -> Mapped | None:
    """chemassay's key for a published column (``None``: chemassay has no such metric)."""
    if paper == "chemalgebra":
        key = CHEMALGEBRA_KEYS.get(metric)
        return Mapped(key) if key else None
    if paper == "bradshaw":
        return _bradshaw(metric, setting)
    if paper == "moses":
        key = MOSES_KEYS.get(metric)
        return Mapped(key) if key else None
    if paper == "amore":
        return _amore(metric, setting)
    if paper == "omebench":
        return _omebench(metric, setting)
    raise KeyError(f"no key mapping for paper {paper!r}")


def to_chemassay_units(value: float | None, column_unit: str, key: str | None) -> float | None:
    """A printed number in chemassay's unit for ``key`` (percent → fraction where needed)."""
    if value is None:
        return None
    if column_unit == "percent" and key not in PERCENT_KEYS:
        # round away the binary noise of the division (90.4 / 100 is 0.9040000000000001)
        return round(value / 100.0, 12)
    return value


# --- a user's result, in the papers' setting names -------------------------------------------
def _text(value: Any) -> str:
    return str(value).strip().lower() if value is not None else ""


def result_setting(result: Any) -> dict[str, Any]:
    """The setting of a result in the published tables' vocabulary (missing = unknown).

    ``result`` is a :class:`~chemassay.report.result.Result`. Only what the result states is
    returned; a setting the result does not state matches any published value.
    """
    suite = result.suite
    config = dict(result.config or {})
    dataset = _text(result.dataset.name if result.dataset else "")
    setting: dict[str, Any] = {}
    if suite == "stoichiometry":
        variant = config.get("variant") or (dataset.split("/", 1)[1] if "/" in dataset else None)
        if variant:
            setting["variant"] = _text(variant)
        if config.get("split"):
            setting["split"] = _text(config["split"])
    elif suite == "reaction-ood":
        split = _text(config.get("split"))
        if split:
            split = re.sub(r"^(schneider|pistachio|uspto)[_-]", "", split)
            setting["split"] = split.replace("_", "-") if split.startswith("reaction") else split
        if config.get("part"):
            setting["part"] = _text(config["part"])
        if "uspto-mit" in dataset or "uspto_mit" in dataset:
            setting["split"] = "uspto-mit"
    elif suite == "robustness":
        if "chebi" in dataset:
            setting["dataset"] = "chebi20"
        elif "isomer" in dataset:
            setting["dataset"] = "isomers"
        elif dataset:
            # downstream: the MoleculeNet task (bace, esol...) or our own dataset's name
            setting["task"] = dataset.replace("moleculenet-", "")
    elif suite == "mechanism":
        if "gold" in dataset:
            setting["dataset"] = "gold"
        elif "template" in dataset:
            setting["dataset"] = "template"
        elif "silver" in dataset:
            setting["dataset"] = "silver"
        prompt = config.get("prompt") or config.get("prompt_style")
        if prompt:
            setting["prompt"] = _text(prompt)
    return setting
