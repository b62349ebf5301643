"""ChemAlgebra metrics: multilabel scores over bags and mass-balance diagnostics.

Per sample (one predicted bag against one target bag, paper Appendix E), with ``p_s`` and
``t_s`` the predicted and true coefficients of species ``s``:

* ``TP = sum_s min(p_s, t_s)``, ``FP = sum_s max(p_s - t_s, 0)``, ``FN = sum_s max(t_s - p_s, 0)``
  (``3 H2O + 2 HCl + CO2`` against ``2 H2O + 2 HCl + CH4``: TP 4, FP 2, FN 1);
* ``EM = 1`` when ``FP = FN = 0``; ``JAC = TP / (TP + FP + FN)``; ``F1 = 2TP / (2TP + FP + FN)``;
* molecule-only variants (Appendix F) count each species once, coefficients ignored
  (the example: TP 2, FP 1, FN 1): ``mol_JAC``, ``mol_F1``;
* ``ACC``: top-1 accuracy, the predicted bag equals the target bag (as the paper scores
  USPTO-T1/T2 with plain SMILES, where every molecule counts 1; on ``{n}X`` bags it equals
  ``EM``); ``ALO``: at least one target species predicted;
* ``VAL``: the prediction parses (every species valid SMILES/formula, every coefficient a
  positive integer).

Every metric is averaged over samples. A prediction that does not parse scores 0 on every
score and is reported with its reason. Species are canonicalized before comparison
(canonical SMILES, or Hill formulas). Mass-balance diagnostics (Appendix B) compare the
predicted bag with the input bag (``--src``): ``BAL`` same atoms of every element and same
charge, ``DEF`` some atoms of the input are missing, ``EXC`` some atoms appear from nowhere
("alchemy"), ``DE`` both; these are fractions of the valid predictions whose input parses,
as in the authors' notebook.

``compat="reference"`` reproduces the authors' ``compute_accuracy`` notebook instead: entries
are matched greedily as a list (``{2}A.{2}A`` is two entries, not ``{4}A``), species that do
not parse are dropped from the prediction rather than failing it, an entry without ``{n}``
has no coefficient and adds nothing to the coefficient counts, and ``EM`` is
``FP = FN = 0`` of those counts (so plain-SMILES predictions are always ``EM = 1`` there).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from chemassay.chem.formula import FormulaError
from chemassay.chem.molecules import InvalidSmiles
from chemassay.suites.stoichiometry.species import Species, SpeciesTable

METRIC_KEYS = ("EM", "JAC", "F1", "mol_JAC", "mol_F1", "ACC", "ALO", "VAL", "BAL", "DEF", "EXC", "DE")
_COEFFICIENT = re.compile(r"^\{(\d+)\}")
_WHITESPACE = re.compile(r"\s+")


class BagError(ValueError):
    """A bag line that cannot be read; the message says where and why."""


@dataclass
class ParsedBag:
    """A bag read from a text line: canonical species -> coefficient, and their species."""

    coefficients: dict[str, int]
    species: dict[str, Species]

    def element_totals(self) -> tuple[dict[str, int], int]:
        """Element counts and net charge of the whole bag."""
        totals: Counter = Counter()
        charge = 0
        for key, coefficient in self.coefficients.items():
            item = self.species[key]
            for element, count in item.counts:
                totals[element] += coefficient * count
            charge += coefficient * item.charge
        return dict(totals), charge


def bag_side_text(line: str, role: str) -> str:
    """The part of a line that holds a bag: whitespace removed (tokenized files); for a
    reaction SMILES, the products of a target/prediction, or reactants plus reagents of a
    source (``A.B>C>D`` gives ``A.B.C`` as source and ``D`` as target)."""
    text = _WHITESPACE.sub("", line)
    if ">" in text:
        fields = text.split(">")
        if role == "src":
            return ".".join(f for f in fields[:-1] if f) if len(fields) == 3 else fields[0]
        return fields[-1]
    return text


class BagReader:
    """Reads bag lines (``{n}X`` notation or plain ``X.X.Y``) with a per-species cache."""

    def __init__(self, encoding: str = "smiles") -> None:
        self.encoding = encoding
        self.table = SpeciesTable(encoding)

    def key(self, species: Species) -> str:
        return species.smiles if self.encoding == "smiles" else species.formula

    def parse(self, line: str, role: str = "tgt") -> ParsedBag:
        """Parse one line; raises :class:`BagError` naming the bad item."""
        text = bag_side_text(line, role)
        if not text:
            raise BagError("empty bag")
        coefficients: dict[str, int] = {}
        species: dict[str, Species] = {}
        for position, chunk in enumerate(text.split("."), start=1):
            if not chunk:
                raise BagError(f"empty item #{position}")
            match = _COEFFICIENT.match(chunk)
            if match:
                coefficient = int(match.group(1))
                body = chunk[match.end():]
            elif "{" in chunk or "}" in chunk:
                raise BagError(f"item #{position} {chunk!r}: coefficient must be written {{n}} before the species")
            else:
                coefficient, body = 1, chunk
            if coefficient < 1:
                raise BagError(f"item #{position} {chunk!r}: coefficient 0")
            if not body:
                raise BagError(f"item #{position} {chunk!r}: no species after the coefficient")
            try:
                item = self.table.get(body)
            except (InvalidSmiles, FormulaError) as exc:
                raise BagError(f"item #{position}: {exc}") from None
            name = self.key(item)
            coefficients[name] = coefficients.get(name, 0) + coefficient
            species[name] = item
        return ParsedBag(coefficients, species)


@dataclass
class SampleScore:
    """Scores of one sample (see module doc); ``balance`` is BAL/DEF/EXC/DE or None."""

    line: int
    valid: bool
    reason: str = ""
    tp: int = 0
    fp: int = 0
    fn: int = 0
    mol_tp: int = 0
    mol_fp: int = 0
    mol_fn: int = 0
    em: float = 0.0
    acc: float = 0.0
    alo: float = 0.0
    balance: str | None = None

    @property
    def jac(self) -> float:
        return _ratio(self.tp, self.tp + self.fp + self.fn)

    @property
    def f1(self) -> float:
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    @property
    def mol_jac(self) -> float:
        return _ratio(self.mol_tp, self.mol_tp + self.mol_fp + self.mol_fn)

    @property
    def mol_f1(self) -> float:
        return _ratio(2 * self.mol_tp, 2 * self.mol_tp + self.mol_fp + self.mol_fn)

    def row(self) -> dict:
        """JSON row for the result file."""
        row = {
            "line": self.line, "valid": self.valid, "EM": self.em, "JAC": round(self.jac, 6),
            "F1": round(self.f1, 6), "mol_JAC": round(self.mol_jac, 6), "mol_F1": round(self.mol_f1, 6),
            "ACC": self.acc, "ALO": self.alo, "TP": self.tp, "FP": self.fp, "FN": self.fn,
            "mol_TP": self.mol_tp, "mol_FP": self.mol_fp, "mol_FN": self.mol_fn, "balance": self.balance,
        }
        if self.reason:
            row["reason"] = self.reason
        return row


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def multilabel_counts(predicted: dict[str, int], target: dict[str, int]) -> tuple[int, int, int, int, int, int]:
    """``(TP, FP, FN, mol_TP, mol_FP, mol_FN)`` of two bags (see module doc)."""
    tp = fp = fn = 0
    for species in predicted.keys() | target.keys():
        p, t = predicted.get(species, 0), target.get(species, 0)
        tp += min(p, t)
        fp += max(p - t, 0)
        fn += max(t - p, 0)
    mol_tp = len(predicted.keys() & target.keys())
    return tp, fp, fn, mol_tp, len(predicted.keys() - target.keys()), len(target.keys() - predicted.keys())


def balance_class(source: ParsedBag, predicted: ParsedBag) -> str:
    """``BAL``, ``DEF`` (atoms missing), ``EXC`` (atoms from nowhere), ``DE`` (both), or
    ``CHG`` (same atoms, different net charge) for a prediction against its input."""
    left, left_charge = source.element_totals()
    right, right_charge = predicted.element_totals()
    missing = any(left.get(e, 0) > right.get(e, 0) for e in left)
    extra = any(right.get(e, 0) > left.get(e, 0) for e in right)
    if missing and extra:
        return "DE"
    if missing:
        return "DEF"
    if extra:
        return "EXC"
    return "BAL" if left_charge == right_charge else "CHG"


def score_sample(line: int, predicted: ParsedBag | None, target: ParsedBag, source: ParsedBag | None,
                 reason: str = "") -> SampleScore:
    """Score one sample; ``predicted=None`` is an invalid prediction (scores 0)."""
    if predicted is None:
        return SampleScore(line, False, reason)
    tp, fp, fn, mol_tp, mol_fp, mol_fn = multilabel_counts(predicted.coefficients, target.coefficients)
    exact = float(fp == 0 and fn == 0)
    score = SampleScore(line, True, "", tp, fp, fn, mol_tp, mol_fp, mol_fn, exact,
                        float(predicted.coefficients == target.coefficients), float(mol_tp > 0))
    if source is not None:
        score.balance = balance_class(source, predicted)
    return score


# --- the authors' notebook, for --compat reference ------------------------------------------


def reference_entries(line: str, reader: BagReader) -> list[tuple[int | None, str]]:
    """Entries of a line as the authors' notebook reads them: ``(coefficient or None, species)``,
    unparseable SMILES dropped, formulas compared as written."""
    entries = []
    for chunk in bag_side_text(line, "tgt").split("."):
        match = _COEFFICIENT.match(chunk)
        coefficient = int(match.group(1)) if match else None
        body = chunk[match.end():] if match else chunk
        if reader.encoding == "smiles":
            try:
                body = reader.table.get(body).smiles
            except InvalidSmiles:
                continue
        entries.append((coefficient, body))
    return entries


def reference_counts(predicted: list[tuple[int | None, str]], target: list[tuple[int | None, str]]) -> dict[str, int]:
    """Greedy list matching of the notebook: molecule-only and coefficient-aware counts."""
    used = [False] * len(predicted)
    counts = dict.fromkeys(("tp", "fp", "fn", "mol_tp", "mol_fp", "mol_fn"), 0)
    for k_true, mol_true in target:
        for position, (k_pred, mol_pred) in enumerate(predicted):
            if not used[position] and mol_pred == mol_true:
                used[position] = True
                counts["mol_tp"] += 1
                if k_true and k_pred:
                    counts["tp"] += min(k_true, k_pred)
                    counts["fn"] += max(k_true - k_pred, 0)
                    counts["fp"] += max(k_pred - k_true, 0)
                break
        else:
            counts["mol_fn"] += 1
            counts["fn"] += k_true or 0
    for position, (k_pred, _) in enumerate(predicted):
        if not used[position]:
            counts["mol_fp"] += 1
            counts["fp"] += k_pred or 0
    return counts


def score_sample_reference(line: int, pred_line: str, tgt_line: str, reader: BagReader,
                           predicted: ParsedBag | None, target: ParsedBag | None, source: ParsedBag | None,
                           reason: str) -> SampleScore:
    """Score one sample as the notebook does (module doc); ACC/VAL/balance as by default."""
    counts = reference_counts(reference_entries(pred_line, reader), reference_entries(tgt_line, reader))
    score = SampleScore(line, predicted is not None, reason, counts["tp"], counts["fp"], counts["fn"],
                        counts["mol_tp"], counts["mol_fp"], counts["mol_fn"],
                        float(counts["fp"] == 0 and counts["fn"] == 0))
    if predicted is not None and target is not None:
        score.acc = float(predicted.coefficients == target.coefficients)
        if source is not None:
            score.balance = balance_class(source, predicted)
    score.alo = float(counts["mol_tp"] > 0)
    return score


def aggregate(scores: list[SampleScore]) -> dict[str, float]:
    """Average the per-sample scores into the metric dict (keys :data:`METRIC_KEYS`)."""
    n = len(scores)
    if not n:
        return dict.fromkeys(METRIC_KEYS, None)
    metrics = {
        "EM": sum(s.em for s in scores) / n,
        "JAC": sum(s.jac for s in scores) / n,
        "F1": sum(s.f1 for s in scores) / n,
        "mol_JAC": sum(s.mol_jac for s in scores) / n,
        "mol_F1": sum(s.mol_f1 for s in scores) / n,
        "ACC": sum(s.acc for s in scores) / n,
        "ALO": sum(s.alo for s in scores) / n,
        "VAL": sum(s.valid for s in scores) / n,
    }
    checked = [s.balance for s in scores if s.balance is not None]
    for key in ("BAL", "DEF", "EXC", "DE"):
        if key == "DEF":
            hits = sum(b in ("DEF", "DE") for b in checked)
        elif key == "EXC":
            hits = sum(b in ("EXC", "DE") for b in checked)
        else:
            hits = sum(b == key for b in checked)
        metrics[key] = hits / len(checked) if checked else None
    return metrics
