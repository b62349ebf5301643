"""The papers' published results, shipped as data (one JSON file per paper, in the package of
the suite that reproduces it: ``chemassay/suites/<suite>/published.json``).

Every table of model results in the papers is transcribed as printed (``cells`` keep the
printed text: ``0.076 ± 0.0322``, ``<1e-2``, ``94.6 (+4.2)``), with the paper's table id, the
data it was measured on (USPTO-MIT, Pistachio, ...), a citation, and notes where the paper
contradicts itself (``(!)``: shipped as printed). Each suite binds its paper in its
``published`` module (a :class:`PaperBinding`: the JSON resource and how each column maps to the
suite's metric key and unit); this module reads every registered suite's binding, so a new
suite brings its paper without touching this file.

A table may name the chemassay dataset it was measured on (``"chemassay_dataset": "moses"``)
when the paper's data is the very data chemassay ships; a table without one was measured on
other data (Pistachio, the authors' own USPTO variants...), and the report shows its rows apart
as "different data", never ranked against a user's result.

* :func:`reference_results` — one :class:`PublishedRecord` per model row and setting, with
  metrics under chemassay's keys (values in chemassay's units), ready to stand beside a
  user's result; every record says ``published = True``.
* :func:`reference_tables` — the tables as printed, for the report's "published results"
  section.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from chemassay.report.published.keys import Mapped, to_chemassay_units
from chemassay.suites import PerSuites, Suite, all_suites, find_suite, suite_names

FORMAT = 1


@dataclass(frozen=True)
class PaperBinding:
    """How one suite's results meet its paper's published tables (``Suite.published``)."""

    paper: str
    """The paper's key in its JSON file (``bradshaw``)."""
    resource: tuple[str, str]
    """``(package, file name)`` of the shipped JSON transcription."""
    metric_key: Callable[[str, dict[str, Any]], Mapped | None]
    """A printed column (metric name, its setting) → chemassay's key, or ``None``."""
    percent_keys: frozenset[str] = frozenset()
    """Keys chemassay stores in percent (the paper's percentages stay as printed)."""
    reference_runs: Callable[[], list[Any]] | None = None
    """Reference runs chemassay trained and ships beside the paper's rows (``published=False``)."""
    missing: tuple[tuple[dict[str, str], str], ...] = ()
    """``(setting, reason)``: a setting of the suite's results (every entry must match) for
    which the paper has no row, and why in one line (the scorecard prints it under the table)."""


@dataclass(frozen=True)
class Paper:
    """A paper whose results are shipped."""

    key: str
    suite: str
    short: str
    title: str
    authors: str
    year: int
    citation: str


@dataclass(frozen=True)
class PublishedValue:
    """One printed number: its value in chemassay's unit, the spread and how it was printed."""

    printed: str
    value: float | None
    """In chemassay's unit (a fraction where the paper printed a percentage); ``None`` when
    the paper printed only a bound (``<1e-2``) or nothing."""
    std: float | None = None
    """The ``± std`` the paper printed (same unit as ``value``)."""
    bound: str | None = None
    """``<`` when the paper printed an upper bound; the bound itself is ``bound_value``."""
    bound_value: float | None = None
    paren: float | None = None
    """A number printed in parentheses (its meaning is the table's ``parenthesis``)."""
    note: str | None = None
    label: str = ""
    """The column as the paper labels it."""
    paper_metric: str = ""
    key: str | None = None
    """chemassay's metric key (``None``: chemassay has no such metric)."""
    unit: str = "value"
    """The unit the paper printed the column in (``percent`` or ``value``)."""
    decimals: int | None = None
    """Decimal places the paper printed the value (or bound) with (``None``: printed with an exponent)."""
    std_decimals: int | None = None
    """Decimal places of the printed ``± std``."""
    scaled: bool = False
    """Whether ``value`` is the printed number divided by 100 (a percentage stored as a fraction)."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the printed text carries the precision: the display hints
        ``decimals``, ``std_decimals`` and ``scaled`` are left out)."""
        hints = {"decimals", "std_decimals", "scaled"}
        return {k: v for k, v in self.__dict__.items() if v is not None and v != "" and k not in hints}


@dataclass(frozen=True)
class PublishedRecord:
    """One model's published values in one setting of one table."""

    paper: Paper
    table: str
    caption: str
    dataset: str
    """The data the paper measured on (named next to ours in every report)."""
    model: str
    label: str
    setting: dict[str, Any]
    metrics: dict[str, PublishedValue]
    """Values under chemassay's keys."""
    unmapped: tuple[PublishedValue, ...] = ()
    """Columns with no chemassay metric (ROUGE-2, counts...)."""
    notes: tuple[str, ...] = ()
    headline: bool = False
    spread: str | None = None
    parenthesis: str | None = None
    published: bool = True
    data: str | None = None
    """The chemassay dataset the values were measured on, when the paper used the very data
    chemassay ships (``moses``, ``amore-chebi20``...); ``None``: other data (shown apart)."""

    @property
    def suite(self) -> str:
        """The chemassay suite that reproduces the paper."""
        return self.paper.suite

    @property
    def citation(self) -> str:
        """How to cite the paper."""
        return self.paper.citation

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``chemassay reference list --json``)."""
        return {
            "published": self.published, "suite": self.suite, "paper": self.paper.key, "citation": self.citation,
            "table": self.table, "caption": self.caption, "dataset": self.dataset, "model": self.model,
            "label": self.label, "setting": self.setting,
            "metrics": {key: value.as_dict() for key, value in self.metrics.items()},
            "unmapped": [value.as_dict() for value in self.unmapped],
            "notes": list(self.notes), "headline": self.headline, "spread": self.spread,
            "parenthesis": self.parenthesis, "data": self.data,
        }


@dataclass(frozen=True)
class PublishedTable:
    """A table as the paper prints it."""

    paper: Paper
    table: str
    caption: str
    dataset: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[str, ...]], ...]
    """``(row label, printed cells)``."""
    notes: tuple[str, ...] = ()
    headline: bool = False
    spread: str | None = None
    parenthesis: str | None = None
    cell_notes: tuple[tuple[int, int, str], ...] = field(default=())
    """``(row, column, note)`` of cells the transcription annotates."""


_NUMBER = r"[+\-−]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+\-]?\d+)?"
_PLAIN = re.compile(rf"^({_NUMBER})$")
_PM = re.compile(rf"^({_NUMBER})\s*±\s*({_NUMBER})$")
_PAREN = re.compile(rf"^({_NUMBER})\s*\(\s*({_NUMBER})\s*\)$")
_BOUND = re.compile(rf"^<\s*({_NUMBER})$")


def _number(text: str) -> float:
    return float(text.replace("−", "-"))


def printed_decimals(printed: str) -> tuple[int | None, int | None]:
    """Decimal places of a printed cell's value (or bound) and of its ``± std``: ``0.076 ±
    0.0322`` → ``(3, 4)``, ``<1e-2`` → ``(None, None)`` (an exponent fixes no decimals).

    >>> printed_decimals("0.076 ± 0.0322"), printed_decimals("90"), printed_decimals("<0.5")
    ((3, 4), (0, None), (1, None))
    """
    numbers = re.findall(_NUMBER, printed.strip().lstrip("<").strip())

    def places(text: str) -> int | None:
        if "e" in text.lower():
            return None
        return len(text.split(".", 1)[1]) if "." in text else 0

    if not numbers:
        return None, None
    std = places(numbers[1]) if "±" in printed and len(numbers) > 1 else None
    return places(numbers[0]), std


def parse_cell(printed: str) -> tuple[float | None, float | None, str | None, float | None, float | None]:
    """``(value, std, bound, bound_value, paren)`` of a printed cell.

    ``0.076 ± 0.0322`` → value and std; ``<1e-2`` → an upper bound; ``94.6 (+4.2)`` → value
    and a parenthesised number; ``–`` or empty → nothing. Anything else is an error (the
    shipped data is checked by the tests, so a typo cannot slip in).
    """
    text = printed.strip()
    if text in {"", "–", "-", "—"}:
        return None, None, None, None, None
    if match := _PLAIN.match(text):
        return _number(match.group(1)), None, None, None, None
    if match := _PM.match(text):
        return _number(match.group(1)), _number(match.group(2)), None, None, None
    if match := _PAREN.match(text):
        return _number(match.group(1)), None, None, None, _number(match.group(2))
    if match := _BOUND.match(text):
        return None, None, "<", _number(match.group(1)), None
    raise ValueError(f"unreadable published cell {printed!r}")


def _paper(doc: dict[str, Any]) -> Paper:
    info = doc["paper"]
    return Paper(key=info["key"], suite=info["suite"], short=info["short"], title=info["title"],
                 authors=info["authors"], year=int(info["year"]), citation=info["citation"])


def _bindings() -> list[tuple[str, PaperBinding]]:
    """``(suite name, binding)`` of every registered suite that binds a paper, in suite order."""
    return _bindings_of(tuple(all_suites()))


def _bindings_of(suites: tuple[Suite, ...]) -> list[tuple[str, PaperBinding]]:
    found = []
    for suite in suites:
        binding = suite.load("published")
        if binding is not None:
            found.append((suite.name, binding))
    return found


def _read_documents(suites: tuple[Suite, ...]) -> tuple[tuple[dict[str, Any], PaperBinding], ...]:
    docs = []
    for suite, binding in _bindings_of(suites):
        package, name = binding.resource
        where = f"{package}:{name}"
        doc = json.loads(resources.files(package).joinpath(name).read_text(encoding="utf-8"))
        if doc.get("format") != FORMAT:
            raise ValueError(f"published table {where}: format {doc.get('format')!r}, expected {FORMAT}")
        if doc["paper"]["key"] != binding.paper or doc["paper"]["suite"] != suite:
            raise ValueError(f"published table {where}: paper {doc['paper']['key']!r} of suite "
                             f"{doc['paper']['suite']!r}, but suite {suite} binds paper {binding.paper!r}")
        docs.append((doc, binding))
    return tuple(docs)


_DOCUMENTS = PerSuites(_read_documents)
"""The papers' JSON, read from the registered suites' bindings; kept until a suite comes or goes
(a report looks up the published rows of every result)."""


def _documents() -> tuple[tuple[dict[str, Any], PaperBinding], ...]:
    return _DOCUMENTS.get()


def _cell(raw: str | dict[str, Any]) -> tuple[str, float | None, float | None, str | None, float | None, float | None, str | None]:
    """``(printed, value, std, bound, bound_value, paren, note)``; an object cell states the
    value read from a garbled print (``{"printed": "16411", "value": "1.6411", "note": ...}``)."""
    if isinstance(raw, dict):
        printed = str(raw["printed"])
        value, std, bound, bound_value, paren = parse_cell(str(raw.get("value", printed)))
        return printed, value, std, bound, bound_value, paren, raw.get("note")
    value, std, bound, bound_value, paren = parse_cell(raw)
    return raw, value, std, bound, bound_value, paren, None


def _scale(number: float | None, unit: str, key: str | None, binding: PaperBinding) -> float | None:
    return to_chemassay_units(number, unit, key, binding.percent_keys) if number is not None else None


def _records() -> tuple[PublishedRecord, ...]:
    return _RECORDS.get()


def _read_records(_suites: tuple[Suite, ...]) -> tuple[PublishedRecord, ...]:
    records: list[PublishedRecord] = []
    for doc, binding in _DOCUMENTS.get():
        paper = _paper(doc)
        for table in doc["tables"]:
            table_setting = dict(table.get("setting", {}))
            table_unit = table.get("unit", "value")
            columns = table["columns"]
            for row in table["rows"]:
                if len(row["cells"]) != len(columns):
                    raise ValueError(f"published table {paper.key}: {table['table']} row {row['model']!r} has "
                                     f"{len(row['cells'])} cells for {len(columns)} columns")
                row_setting = {**table_setting, **row.get("setting", {})}
                groups: dict[str, tuple[dict[str, Any], dict[str, PublishedValue], list[PublishedValue]]] = {}
                for column, raw in zip(columns, row["cells"], strict=True):
                    setting = {**row_setting, **column.get("setting", {})}
                    mapped = binding.metric_key(column["metric"], setting)
                    key = mapped.key if mapped else None
                    unit = column.get("unit", table_unit)
                    printed, value, std, bound, bound_value, paren, note = _cell(raw)
                    decimals, std_decimals = printed_decimals(str(raw.get("value", printed)) if isinstance(raw, dict)
                                                              else printed)
                    published = PublishedValue(
                        printed=printed, value=_scale(value, unit, key, binding), std=_scale(std, unit, key, binding),
                        bound=bound, bound_value=_scale(bound_value, unit, key, binding),
                        paren=_scale(paren, unit, key, binding), note=note, unit=unit,
                        label=column["label"], paper_metric=column["metric"], key=key,
                        decimals=decimals, std_decimals=std_decimals,
                        scaled=unit == "percent" and key is not None and key not in binding.percent_keys,
                    )
                    consumed = set(mapped.consumes) if mapped else set()
                    remaining = {k: v for k, v in setting.items() if k not in consumed}
                    group_id = json.dumps(remaining, sort_keys=True)
                    if group_id not in groups:
                        groups[group_id] = (remaining, {}, [])
                    if key is None:
                        groups[group_id][2].append(published)
                    else:
                        groups[group_id][1][key] = published
                notes = tuple(table.get("notes", ())) + ((row["note"],) if row.get("note") else ())
                for remaining, metrics, unmapped in groups.values():
                    records.append(PublishedRecord(
                        paper=paper, table=table["table"], caption=table["caption"], dataset=table["dataset"],
                        model=row["model"], label=row.get("label", row["model"]), setting=remaining, metrics=metrics,
                        unmapped=tuple(unmapped), notes=notes, headline=bool(table.get("headline")),
                        spread=table.get("spread"), parenthesis=table.get("parenthesis"),
                        data=table.get("chemassay_dataset"),
                    ))
    return tuple(records)


_RECORDS = PerSuites(_read_records)


def _check_suite(suite: str | None) -> str | None:
    if suite is None:
        return None
    found = find_suite(suite)
    if found is None:
        raise KeyError(f"unknown suite {suite!r}; suites: {', '.join(suite_names())}")
    return found.name


def papers() -> list[Paper]:
    """The papers whose results are shipped, in suite order."""
    return [_paper(doc) for doc, _binding in _documents()]


def reference_results(suite: str | None = None, *, runs: bool = False) -> list[PublishedRecord]:
    """Every published record (of one suite if ``suite`` is given); with ``runs``, also the
    reference runs chemassay ships (the MOSES baselines trained here: ``published = False``).

    >>> rows = reference_results("generation")
    >>> charrnn = next(r for r in rows if r.model == "CharRNN" and "FCD/Test" in r.metrics)
    >>> charrnn.metrics["FCD/Test"].value, charrnn.metrics["FCD/Test"].std, charrnn.table
    (0.073, 0.025, 'Table 3')
    """
    wanted = _check_suite(suite)
    records = list(_records())
    if runs:
        for _suite, binding in _bindings():
            if binding.reference_runs is not None and (wanted is None or _suite == wanted):
                records += binding.reference_runs()
    return [record for record in records if wanted is None or record.suite == wanted]


def missing_row_reason(suite: str, task: str, setting: dict[str, Any]) -> str | None:
    """Why ``suite``'s paper has no row for ``setting`` (its binding's ``missing``): the first
    declared setting all of whose entries the setting matches; else a line naming the setting
    (``None`` for a suite without a paper).

    >>> missing_row_reason("robustness", "amore-isomers", {"dataset": "isomers"})[:40]
    "AMORE's Table 2 (the QM9 isomers) has no"
    """
    binding = next((b for name, b in _bindings() if name == suite), None)
    if binding is None:
        return None
    for declared, reason in binding.missing:
        if all(str(setting.get(k, "")).lower() == str(v).lower() for k, v in declared.items()):
            return reason
    where = " ".join(f"{k}={v}" for k, v in setting.items()) or "no setting stated"
    return f"the paper's tables have no row for {task} ({where})."


def percent_keys(suite: str) -> frozenset[str]:
    """Keys of ``suite`` its paper prints as percentages while chemassay stores fractions: the
    scorecard shows them in percent, as the paper and the assay's verdicts do (one unit per metric)."""
    return frozenset(key for record in reference_results(suite) for key, value in record.metrics.items()
                     if value.scaled)


def reference_tables(suite: str | None = None) -> list[PublishedTable]:
    """The published tables as printed (of one suite if ``suite`` is given)."""
    wanted = _check_suite(suite)
    tables = []
    for doc, _binding in _documents():
        paper = _paper(doc)
        if wanted is not None and paper.suite != wanted:
            continue
        for table in doc["tables"]:
            rows = []
            cell_notes = []
            for i, row in enumerate(table["rows"]):
                printed = []
                for j, raw in enumerate(row["cells"]):
                    text, *_rest, note = _cell(raw)
                    printed.append(text)
                    if note:
                        cell_notes.append((i, j, note))
                label = row.get("label", row["model"])
                if label != row["model"] and not label.startswith(row["model"]):
                    label = f"{row['model']} — {label}"
                rows.append((label, tuple(printed)))
            tables.append(PublishedTable(
                paper=paper, table=table["table"], caption=table["caption"], dataset=table["dataset"],
                columns=tuple(column["label"] for column in table["columns"]), rows=tuple(rows),
                notes=tuple(table.get("notes", ())), headline=bool(table.get("headline")),
                spread=table.get("spread"), parenthesis=table.get("parenthesis"), cell_notes=tuple(cell_notes),
            ))
    return tables


def shown_decimals(value: PublishedValue, percent: bool = False) -> tuple[int | None, int | None]:
    """Decimal places that show a published value (and its std) with the paper's own precision,
    in chemassay's unit (``percent=False``: a percentage stored as a fraction gains two places)
    or as a percentage (``percent=True``)."""
    shift = 2 if value.scaled and not percent else 0
    return (None if value.decimals is None else value.decimals + shift,
            None if value.std_decimals is None else value.std_decimals + shift)


def format_value(value: PublishedValue, digits: int = 4) -> str:
    """A published value for a table cell, in chemassay's unit, with the paper's precision
    (``0.8`` % is ``0.008``, a printed ``0.00`` % is ``0.0000``, ``<1e-2`` % is ``<0.0001``);
    ``digits`` significant digits where the paper printed an exponent."""
    decimals, std_decimals = shown_decimals(value)

    def text_of(number: float, places: int | None) -> str:
        if places is None:
            return f"{number:.{digits}g}"
        return f"{number:.{places}f}"

    if value.value is None:
        if value.bound and value.bound_value is not None:
            return f"{value.bound}{value.bound_value:.{digits}g}"
        return "–"
    text = text_of(value.value, decimals) if not math.isnan(value.value) else "–"
    if value.std is not None:
        text += f" ± {text_of(value.std, std_decimals)}"
    return text


__all__ = [
    "Paper", "PaperBinding", "PublishedRecord", "PublishedTable", "PublishedValue", "format_value", "papers", "parse_cell",
    "missing_row_reason", "percent_keys", "printed_decimals", "shown_decimals",
    "reference_results", "reference_tables",
]
