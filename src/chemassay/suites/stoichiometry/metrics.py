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

from chemassay.chem.formula import MAX_COUNT_DIGITS, FormulaError
from chemassay.chem.molecules import InvalidSmiles
from chemassay.report.cards import MetricCard
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


_SHARED_TABLES: dict[str, SpeciesTable] = {}


def shared_table(encoding: str) -> SpeciesTable:
    """The process-wide species cache of an encoding: a species text always parses to the same
    :class:`Species`, so every reader (memorising a training set, scoring a test set) shares one."""
    table = _SHARED_TABLES.get(encoding)
    if table is None:
        table = _SHARED_TABLES[encoding] = SpeciesTable(encoding)
    return table


class BagReader:
    """Reads bag lines (``{n}X`` notation or plain ``X.X.Y``) through the shared species cache."""

    def __init__(self, encoding: str = "smiles") -> None:
        self.encoding = encoding
        self.table = shared_table(encoding)

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
                if len(match.group(1)) > MAX_COUNT_DIGITS:
                    raise BagError(f"item #{position}: coefficient has {len(match.group(1)):,} digits "
                                   f"(at most {MAX_COUNT_DIGITS})")
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
    texts: tuple[str, str, str | None] | None = None
    """``(prediction, target, source)`` as written, for the result's rows (failure galleries)."""

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
        if self.texts is not None:
            prediction, target, source = self.texts
            row.update({"prediction": prediction, "target": target})
            if source is not None:
                row["source"] = source
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
        if match and len(match.group(1)) > MAX_COUNT_DIGITS:
            continue  # as unparseable as an invalid SMILES: the notebook would drop it
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


def item_values(score: SampleScore) -> dict[str, float | None]:
    """One sample's value of every metric (:data:`METRIC_KEYS`): the metrics are the means of
    these over samples; the balance classes are ``None`` where no balance was checked."""
    values: dict[str, float | None] = {
        "EM": score.em, "JAC": score.jac, "F1": score.f1, "mol_JAC": score.mol_jac, "mol_F1": score.mol_f1,
        "ACC": score.acc, "ALO": score.alo, "VAL": float(score.valid),
    }
    balance = score.balance
    checked = balance is not None
    values["BAL"] = float(balance == "BAL") if checked else None
    values["DEF"] = float(balance in ("DEF", "DE")) if checked else None
    values["EXC"] = float(balance in ("EXC", "DE")) if checked else None
    values["DE"] = float(balance == "DE") if checked else None
    return values


def item_scores(scores: list[SampleScore]) -> dict[str, list[float | None]]:
    """Per-sample values of every metric, aligned with ``scores`` (for bootstrap intervals);
    the balance keys only when some sample has a balance class."""
    rows = [item_values(s) for s in scores]
    keys = [k for k in METRIC_KEYS if k not in ("BAL", "DEF", "EXC", "DE") or any(s.balance for s in scores)]
    return {key: [row[key] for row in rows] for key in keys}


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


# --- metric cards: every key a stoichiometry result carries ------------------------------------

# The paper's Table 1 (USPTO-MIT): balanced, re-balanced and USPTO-BAL percentages per split.
PAPER_TABLE_1 = {
    "train": {"total": 409035, "balanced": 4.59, "rebalanced": 39.66, "usable": 44.26},
    "valid": {"total": 30000, "balanced": 4.31, "rebalanced": 39.56, "usable": 43.87},
    "test": {"total": 40000, "balanced": 4.52, "rebalanced": 39.93, "usable": 44.45},
}

_SUITE = "stoichiometry"
_MEAN = "bootstrap"
_SHARE = "wilson"
"""Proportions (every per-sample value 0 or 1): Wilson score intervals."""
_COUNT_NOTE = "a count over the whole input, not a mean over items"


def _score(key: str, description: str, paper_name: str, paper_table: str, short: str = "",
           interval: str = _MEAN) -> MetricCard:
    return MetricCard(key, _SUITE, description, "higher", (0.0, 1.0), paper_name, paper_table, interval, short=short)


def _count(key: str, description: str, direction: str = "none", paper_name: str | None = None,
           paper_table: str | None = None) -> MetricCard:
    return MetricCard(key, _SUITE, description, direction, (0.0, None), paper_name, paper_table, "none", _COUNT_NOTE)


def _percent(key: str, description: str, paper_name: str) -> MetricCard:
    return MetricCard(key, _SUITE, description, "none", (0.0, 100.0), paper_name, "Table 1", "none",
                      "a percentage of the whole input (every reaction is classified), not a sample")


METRIC_CARDS: list[MetricCard] = [
    # evaluate: the paper's multilabel scores (Appendix E/F) and mass-balance diagnostics (Appendix B)
    _score("EM", "exact match: the predicted bag has every true species with its true coefficient and nothing else",
           "EM", "Table 4", interval=_SHARE),
    _score("JAC", "Jaccard (multilabel accuracy) of the coefficient-weighted bags: TP / (TP + FP + FN)", "JAC",
           "Table 4"),
    _score("F1", "F1 of the coefficient-weighted bags: 2TP / (2TP + FP + FN)", "F1", "Table 4"),
    _score("mol_JAC", "Jaccard over species, coefficients ignored (each species counted once)", "JAC (molecules)",
           "Table 10"),
    _score("mol_F1", "F1 over species, coefficients ignored (each species counted once)", "F1 (molecules)",
           "Table 10"),
    _score("ACC", "top-1 accuracy: the predicted bag equals the true bag (equals EM on {n}X bags; the measure of "
           "standard predictors on USPTO-T1/T2)", "ACC", "Table 2", interval=_SHARE),
    _score("ALO", "at least one true species is predicted", "ALO", "Table 2", interval=_SHARE),
    _score("VAL", "the prediction parses: every species a valid SMILES/formula, every coefficient a positive integer",
           "VAL", "Tables 6-9", interval=_SHARE),
    _score("BAL", "of valid predictions whose input parses: same atoms of every element and same charge as the input",
           "BAL", "Tables 6-9", interval=_SHARE),
    MetricCard("DEF", _SUITE, "of valid predictions whose input parses: atoms of the input are missing (DEF or D+E)",
               "lower", (0.0, 1.0), "DEF", "Tables 6-9", _SHARE),
    MetricCard("EXC", _SUITE, "of valid predictions whose input parses: atoms appear from nowhere, 'alchemy' "
               "(EXC or D+E)", "lower", (0.0, 1.0), "EXC", "Tables 6-9", _SHARE),
    MetricCard("DE", _SUITE, "of valid predictions whose input parses: atoms both missing and in excess",
               "lower", (0.0, 1.0), "D+E", "Tables 6-9", _SHARE),
    # balance: USPTO-BAL (paper Table 1)
    _count("reactions", "reaction lines read (every status, invalid included)", paper_name="total",
           paper_table="Table 1"),
    _count("balanced", "reactions balanced as written (elements with implicit H, and charge)", "none",
           "balanced", "Table 1"),
    _count("rebalanced", "reactions made balanced by the unique smallest set of library by-products", "none",
           "re-balanced", "Table 1"),
    _count("ambiguous", "unbalanced reactions with several smallest by-product explanations (left out)"),
    _count("unexplained", "unbalanced reactions no by-product combination explains (left out)"),
    _count("invalid", "reaction lines that cannot be read (listed in skipped with line and reason)", "lower"),
    _percent("balanced_pct", "balanced reactions, % of all reactions read", "balanced (%)"),
    _percent("rebalanced_pct", "re-balanced reactions, % of all reactions read", "re-balanced (%)"),
    _percent("usable_pct", "balanced plus re-balanced reactions (USPTO-BAL), % of all reactions read",
             "USPTO-BAL (%)"),
    # verify
    MetricCard("ok", _SUITE, "the folder passed every check (files, line counts, sha256, every line balanced)",
               "higher", (0.0, 1.0), interval="none", interval_note="a verdict on the whole folder"),
    _count("files_checked", "files of the manifest found and checked"),
    _count("pairs_checked", "source/target line pairs checked for balance"),
    _count("problems", "problems found (missing file, checksum, line count, unbalanced or unreadable line)", "lower"),
    # predict
    _count("lines", "input bags predicted (one output line each)"),
    _count("failed", "inputs with no usable prediction (failed request, unreadable input): an empty output line",
           "lower"),
    _count("unknown_reactions", "inputs whose reaction the baseline has not memorised (predicted unchanged)", "lower"),
    _count("undetermined", "inputs whose reaction vector the element matrix does not determine (predicted "
           "unchanged)", "lower"),
    _count("unreadable_inputs", "input lines that are not readable bags (empty output line)", "lower"),
    _count("memorised_reactions", "distinct training reactions the baseline memorised"),
    # build
    _count("datasets", "dataset folders written"),
    _count("line_pairs", "source/target line pairs written over every split and dataset"),
    _count("train_reactions", "balanced or re-balanced training reactions the datasets were drawn from"),
    _count("valid_reactions", "balanced or re-balanced validation reactions the datasets were drawn from"),
    _count("test_reactions", "balanced or re-balanced test reactions the datasets were drawn from"),
]
