"""The mechanism suite's pictures in the report: its failure gallery and its charts."""

from __future__ import annotations

from typing import Any

from chemassay.contract.result import Result
from chemassay.report.intervals import percentile_interval
from chemassay.report.paper_tables import PaperColumn, PaperTableSpec, default_value
from chemassay.report.scorecard.depict import depict
from chemassay.report.scorecard.galleries import (
    DEFAULT_LIMIT,
    Gallery,
    GalleryItem,
    Panel,
    model_name,
    result_field,
)
from chemassay.report.scorecard.plots import MAX_CHART_ROWS, Figure, result_label
from chemassay.report.scorecard.svg import bar_chart
from chemassay.suites.mechanism.plots import (
    accuracy_by_type_figure,
    figure_svg,
    oms_by_level_figure,
    score_by_length_figure,
)


def _step_panel(step: Any) -> Panel | None:
    if not isinstance(step, dict):
        return None
    smiles = str(step.get("smiles") or "")
    label = str(step.get("subtype") or step.get("type") or "?")
    return Panel(label, depict(smiles, (), 200, 140) if smiles else None, smiles)


def align_steps(tags: list[str], gold: list[Any], predicted: list[Any]) -> list[tuple[str, Panel | None, Panel | None]]:
    """Pair gold and predicted steps along the scorer's alignment tags (a diagonal move
    consumes one of each; a skip consumes one step of its side)."""
    pairs = []
    g = p = 0
    for tag in tags:
        if tag in ("match", "type_mismatch"):
            pairs.append((tag, _step_panel(gold[g]) if g < len(gold) else None,
                          _step_panel(predicted[p]) if p < len(predicted) else None))
            g += 1
            p += 1
        elif tag == "skip_gold":
            pairs.append((tag, _step_panel(gold[g]) if g < len(gold) else None, None))
            g += 1
        elif tag == "skip_pred":
            pairs.append((tag, None, _step_panel(predicted[p]) if p < len(predicted) else None))
            p += 1
    return pairs


ERROR_FREE = 1.0 - 1e-9
"""A reaction at or above this S_total, every step aligned as ``match``, has no error to show."""


def has_error(reaction: dict[str, Any]) -> bool:
    """Whether a scored reaction holds an actual error: an answer that could not be read, no
    prediction, a step not aligned as ``match``, or an intermediate short of the gold one
    (S_total below 1)."""
    if reaction.get("status") in ("unparsed", "missing"):
        return True
    if any(tag != "match" for tag in reaction.get("alignment") or []):
        return True
    s_total = reaction.get("S_total")
    return not isinstance(s_total, (int, float)) or s_total < ERROR_FREE


def _caption(result: Result, reaction: dict[str, Any]) -> str:
    s_total = reaction.get("S_total")
    return (f"{model_name(result)} · {reaction.get('reaction_id', '?')}"
            + (f" ({reaction['level']})" if reaction.get("level") else "")
            + (f" · S_total {s_total:.3f}" if isinstance(s_total, (int, float)) else ""))


def mechanism_gallery(results: list[Result], limit: int = DEFAULT_LIMIT) -> Gallery:
    """The worst-scored mechanisms with an actual error (:func:`has_error`), predicted and
    gold steps aligned; answers that could not be read come after those with steps. When
    no reaction has an error (the gold-oracle), the gallery says so instead of showing
    correct mechanisms as failures."""
    gallery = Gallery("mechanism", "Predicted vs gold mechanism steps, aligned as the oMeS scorer aligned them")
    has_steps = False
    candidates: list[tuple[tuple[int, float, float], Result, dict[str, Any]]] = []
    scored = 0
    for result in results:
        reactions = result_field(result, "reactions")
        if not isinstance(reactions, list):
            continue
        usable = [r for r in reactions if isinstance(r, dict) and isinstance(r.get("gold_steps"), list)
                  and isinstance(r.get("predicted_steps"), list) and isinstance(r.get("alignment"), list)]
        if not usable:
            continue
        has_steps = True
        scored += len(usable)
        for reaction in usable:
            if has_error(reaction):
                # reactions with predicted steps first: their alignment shows where it went wrong
                key = (0 if reaction["predicted_steps"] else 1, reaction.get("S_total") or 0.0, reaction.get("L") or 0.0)
                candidates.append((key, result, reaction))
    candidates.sort(key=lambda entry: entry[0])
    for _key, result, reaction in candidates[:limit]:
        steps = align_steps([str(t) for t in reaction["alignment"]], reaction["gold_steps"], reaction["predicted_steps"])
        note = ""
        if reaction.get("status") == "unparsed":
            note = f"the answer could not be parsed: {reaction.get('reason') or 'no reason given'}"
        elif reaction.get("status") == "missing":
            note = "no prediction for this reaction (scored as an empty mechanism)"
        # the note goes into the caption too: it is what the reader sees first
        caption = _caption(result, reaction) + (f" · {note}" if note else "")
        gallery.items.append(GalleryItem(caption=caption, steps=steps, note=note))
    if not has_steps:
        gallery.missing = ("these results carry no steps: mechanism should write details.reactions[i].gold_steps and "
                           "details.reactions[i].predicted_steps ([{subtype, smiles}]) beside details.reactions[i].alignment")
    elif not gallery.items:
        gallery.missing = (f"no reaction with an error: all {scored} scored mechanisms match their gold steps "
                           "(S_total = 1, every step aligned as a match)")
    return gallery


def _breakdowns(results: list[Result], name: str) -> dict[str, dict[str, Any]]:
    """``label → breakdown`` (``by_level``, ``by_type``, ``by_length``) of each result that has it."""
    found: dict[str, dict[str, Any]] = {}
    for result in results:
        breakdown = result_field(result, name)
        if isinstance(breakdown, dict) and breakdown:
            label = result_label(result)
            if label in found:
                label = f"{label} #{len(found) + 1}"
            found[label] = breakdown
        if len(found) >= MAX_CHART_ROWS:
            break
    return found


def mechanism_charts(results: list[Result], boards: list | None = None) -> list[Figure]:
    """oMeS by difficulty (``details.by_level``), step match rate by gold step type
    (``details.by_type``, Fig. 8) and score against mechanism length (``details.by_length``,
    Fig. 7), each axis labelled, with the number of reactions or steps behind each value
    and zeros drawn as marks (:mod:`.plots`)."""
    figures = []
    shown = f" (first {MAX_CHART_ROWS} results)" if len(results) > MAX_CHART_ROWS else ""
    by_level = _breakdowns(results, "by_level")
    if by_level:
        figures.append(Figure("oMeS by difficulty", "svg", figure_svg(oms_by_level_figure(by_level)),
                              f"Mean oMeS-total per difficulty level, from each result's details.by_level{shown}.",
                              "oms-by-difficulty.svg"))
    by_type = _breakdowns(results, "by_type")
    if by_type:
        figures.append(Figure("Step match by type", "svg", figure_svg(accuracy_by_type_figure(by_type)),
                              "Share of gold steps aligned as a match, per gold step type (the paper's Fig. 8), "
                              f"from each result's details.by_type{shown}; a 0 mark is a type never matched.",
                              "match-by-type.svg"))
    by_length = _breakdowns(results, "by_length")
    if by_length:
        figures.append(Figure("Score by mechanism length", "svg", figure_svg(score_by_length_figure(by_length)),
                              "Mean S_total and S_partial against the gold mechanism's length (the paper's Fig. 7), "
                              f"with the number of reactions of each length, from details.by_length{shown}.",
                              "score-by-length.svg"))
    return figures


# --- oMeBench Table 3, in the paper's shape ---------------------------------------------------------
_LEVELS = ("overall", "easy", "medium", "hard")
_TABLE3_METRICS = (("V", "V"), ("L", "L"), ("S_total", "S_total"), ("S_partial", "S_partial"))


def _gold_row(result: Result) -> str | None:
    """A one-shot result on oMe-Gold is a row of Table 3 (placed by its overall oMeS-total)."""
    setting = result.setting or {}
    if result.task != "evaluate" or setting.get("dataset", "gold") != "gold":
        return None
    return "" if setting.get("prompt", "one-shot") == "one-shot" else None


def _level_value(result: Result, column) -> tuple[float, float | None, float | None] | None:
    """A Table 3 cell of a result: the overall metric with its interval, or a difficulty level's
    mean (``details.by_level``) with a bootstrap interval over that level's reactions
    (``details.reactions``)."""
    if "/" not in column.key:
        return default_value(result, column)
    level, metric = column.key.split("/", 1)
    by_level = result_field(result, "by_level") or {}
    scores = by_level.get(level)
    if hasattr(scores, "model_dump"):
        scores = scores.model_dump()
    if not isinstance(scores, dict) or scores.get(metric) is None:
        return default_value(result, column)
    rows = [r for r in (result_field(result, "reactions") or []) if isinstance(r, dict) and r.get("level") == level]
    values = [r.get(metric) for r in rows if r.get(metric) is not None]
    low = high = None
    if len(values) >= 2:
        low, high = percentile_interval(values, resamples=1000, seed=0)
    return float(scores[metric]), low, high


def _level_figure(table, results: list[Result]) -> Figure | None:
    """oMeS-total by difficulty: the paper's finding is that scores fall from easy to hard
    mechanisms, for every model; drawn for the user's rows beside the paper's best model and
    its median one."""
    picks = [i for i, c in enumerate(table.columns) if c.label == "S_total"]
    groups = [table.columns[i].group for i in picks]
    paper = [row for row in table.rows if row.kind == "paper" and row.cells[picks[0]] is not None
             and row.cells[picks[0]].value is not None]
    paper.sort(key=lambda row: -row.cells[picks[0]].value)
    shown = [paper[0], paper[len(paper) // 2]] if len(paper) >= 2 else paper
    series: dict[str, list[float | None]] = {}
    errors: dict[str, list[tuple[float, float] | None]] = {}
    for row in table.user_rows + shown:
        name = row.label if row.kind == "yours" else f"paper: {row.label}"
        cells = [row.cells[i] for i in picks]
        series[name] = [c.value if c is not None else None for c in cells]
        errors[name] = [(c.low, c.high) if c is not None and c.low is not None else None for c in cells]
    svg = bar_chart(groups, series, title="oMeS-total (%) by difficulty", y_label="S_total %", y_range=(0.0, None),
                    errors=errors, width=400, height=240)
    return Figure("oMeS by difficulty", "svg", svg,
                  "oMeS-total overall and per difficulty level of oMe-Gold: yours with 95 % bootstrap intervals beside "
                  "the paper's best and median one-shot models.", "mechanism-paper-levels.svg")


def _paper_table():
    columns = tuple(PaperColumn(label, key if level == "overall" else f"{level}/{key}", level, digits=1)
                    for level in _LEVELS for label, key in _TABLE3_METRICS)
    return PaperTableSpec(
        table="Table 3", title="one-shot prompting on oMe-Gold: V, L, S_total, S_partial overall and per difficulty",
        columns=columns, unit="percent", digits=1, user_row=_gold_row, value_of=_level_value, rank_by=2,
        figure=_level_figure, note="Rows ordered by overall S_total (the paper lists them by model family), so your rows stand at their rank.")


PAPER_TABLE = _paper_table()
"""oMeBench Table 3 (models × overall/easy/medium/hard × V/L/S_total/S_partial, %)."""
