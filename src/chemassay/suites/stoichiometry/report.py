"""The stoichiometry suite's pictures in the report: its alchemy gallery and its charts across settings."""

from __future__ import annotations

from chemassay.chem.bags import BagParseError, parse_bag
from chemassay.contract.result import Result
from chemassay.report.cards import card_for
from chemassay.report.paper_tables import PaperColumn, PaperTableSpec
from chemassay.report.scorecard.depict import depict, element_changes, formula_svg, highlights
from chemassay.report.scorecard.galleries import (
    DEFAULT_LIMIT,
    Gallery,
    GalleryItem,
    Panel,
    model_name,
    result_field,
)
from chemassay.report.scorecard.plots import MAX_CHART_ROWS, Figure, is_number
from chemassay.report.scorecard.svg import bar_chart, category_lines


def _bag(text: str, encoding: str):
    try:
        return parse_bag(text, encoding)
    except (BagParseError, ValueError):
        return None


def _bag_panels(text: str, encoding: str, label: str, marks: tuple[tuple[str, str], ...]) -> list[Panel]:
    bag = _bag(text, encoding)
    if bag is None:
        return [Panel(label, None, text)]
    if encoding != "smiles":
        # formulas have no structure to draw: the formula itself, its changed elements coloured
        return [Panel(label, formula_svg(text, marks), text)]
    panels = []
    for species, coefficient in bag.items():
        shown = f"{label} ({coefficient} ×)" if coefficient != 1 else label
        panels.append(Panel(shown, depict(species, marks), species))
    return panels


_ALCHEMY_ORDER = {"DE": 0, "EXC": 1, "DEF": 2}
"""Atoms both appearing and vanishing first, then atoms from nowhere, then atoms lost."""


def stoichiometry_gallery(results: list[Result], limit: int = DEFAULT_LIMIT) -> Gallery:
    """ChemAlgebra's "alchemical" predictions: scored rows (``details.rows``) whose predicted
    bag does not balance the input bag, atoms both appearing and vanishing first, then atoms
    from nowhere, then lost atoms, over every result in order; each drawn as source, predicted
    and true bag with the atoms that vanish (blue, in the source) and appear (red, in the
    prediction) highlighted."""
    gallery = Gallery("stoichiometry", "Alchemical predictions: atoms that appear (red) or vanish (blue)")
    has_rows = False
    candidates: list[tuple[int, int, int, Result, str, dict]] = []
    for position, result in enumerate(results):
        rows = result_field(result, "rows")
        if not isinstance(rows, list):
            continue
        breakdown = result_field(result, "breakdown") or {}
        encoding = str((result.config or {}).get("encoding") or breakdown.get("encoding") or "smiles")
        scored = [r for r in rows if isinstance(r, dict)
                  and all(isinstance(r.get(name), str) for name in ("source", "prediction", "target"))]
        if not scored:
            continue
        has_rows = True
        for row in scored:
            if row.get("balance") in _ALCHEMY_ORDER and row.get("valid", True):
                candidates.append((_ALCHEMY_ORDER[row["balance"]], position, int(row.get("line") or 0), result,
                                   encoding, row))
    for _order, _position, _line, result, encoding, row in sorted(candidates, key=lambda c: c[:3]):
        if len(gallery.items) >= limit:
            break
        source, prediction = _bag(row["source"], encoding), _bag(row["prediction"], encoding)
        if source is None or prediction is None:
            continue
        appear, vanish = element_changes(dict(source.element_counts()), dict(prediction.element_counts()))
        if not appear and not vanish:
            continue
        change = ", ".join([f"{e} +{n}" for e, n in appear.items()] + [f"{e} −{n}" for e, n in vanish.items()])
        where = " ".join(str(v) for v in (result.setting or {}).values())
        panels = (_bag_panels(row["source"], encoding, "source", highlights(vanish, "vanish"))
                  + _bag_panels(row["prediction"], encoding, "predicted", highlights(appear, "appear"))
                  + _bag_panels(row["target"], encoding, "true", ()))
        gallery.items.append(GalleryItem(
            caption=f"{model_name(result)}{' · ' + where if where else ''} · line {row.get('line', '?')} · "
                    f"{row['balance']}: {change}", panels=panels,
        ))
    if not has_rows:
        gallery.missing = ("these results carry no per-sample bags: stoichiometry evaluate writes them as "
                           "details.rows (rows[i].source, rows[i].prediction and rows[i].target, bag text {n}X.{m}Y, "
                           "next to rows[i].balance) unless run with rows=False / --no-rows")
    elif not gallery.items:
        gallery.missing = "no unbalanced prediction among the scored rows: every valid prediction conserves the atoms"
    return gallery


CHART_METRICS = {"chemalgebra": ("EM", "EXC"), "table2": ("ACC", "EXC")}
"""The metrics charted across settings: the headline score (↑) and atoms from nowhere (↓),
never in the same chart."""


def _setting_label(result: Result) -> str:
    setting = result.setting or {}
    variant, split = setting.get("variant", ""), setting.get("split", "")
    if variant.startswith("uspto"):
        return variant
    return f"{variant} {split.removeprefix('test_')}".strip()


def stoichiometry_charts(results: list[Result], boards: list | None = None) -> list[Figure]:
    """One bar chart per metric across the settings the results were measured in (ChemAlgebra
    variants × in/cross/out, and Table 2's test sets): the headline score (EM; ACC for Table 2)
    and the share of predictions with atoms from nowhere (EXC, lower is better) in separate
    charts, one bar per model with its 95 % interval. Drawn only when the results span more
    than one setting (a single setting is already charted beside its leaderboard)."""
    evaluated = [r for r in results if r.task == "evaluate" and (r.setting or {}).get("variant")]
    figures = []
    for group, keys in CHART_METRICS.items():
        members = [r for r in evaluated if (r.setting["variant"].startswith("uspto")) == (group == "table2")]
        categories = list(dict.fromkeys(_setting_label(r) for r in members))
        if len(categories) < 2:
            continue
        every_model = list(dict.fromkeys(model_name(r) for r in members))
        models = every_model[:MAX_CHART_ROWS]
        for key in keys:
            if not any(is_number(r.metrics.get(key)) for r in members):
                continue
            series: dict[str, list[float | None]] = {m: [None] * len(categories) for m in models}
            errors: dict[str, list[tuple[float, float] | None]] = {m: [None] * len(categories) for m in models}
            for result in members:
                model = model_name(result)
                value = result.metrics.get(key)
                if model not in series or not is_number(value):
                    continue
                index = categories.index(_setting_label(result))
                series[model][index] = float(value)
                interval = result.intervals.get(key)
                if interval is not None and interval.low is not None and interval.high is not None:
                    errors[model][index] = (interval.low, interval.high)
            card = card_for("stoichiometry", key)
            arrow = card.arrow if card is not None else ""
            what = "ChemAlgebra variants" if group == "chemalgebra" else "Table 2 test sets"
            title = f"{key} {arrow} on the {what}".replace("  ", " ")
            svg = bar_chart(categories, series, title=title, y_range=(0.0, 1.0), errors=errors,
                            width=min(1100, max(560, 30 * len(categories) * len(models) + 330)), height=300,
                            y_label=key)
            caption = (f"{card.description if card else key}. Bars: values; whiskers: the results' 95 % intervals "
                       f"(Wilson for proportions, bootstrap otherwise)"
                       f"{'; ↑ higher is better' if arrow == '↑' else '; ↓ lower is better' if arrow == '↓' else ''}.")
            if len(every_model) > len(models):
                caption += (f" {len(models)} of {len(every_model)} models (more bars per group would be unreadable); "
                            f"left out, all in the leaderboards: {', '.join(every_model[len(models):])}.")
            figures.append(Figure(title, "svg", svg, caption, f"stoichiometry-{group}-{key.lower()}.svg"))
    return figures



# --- ChemAlgebra Table 4, in the paper's shape -----------------------------------------------------
_SPLITS = (("in", "test_in"), ("cross", "test_cross"), ("out", "test_out"))


def _variant_row(result: Result) -> str | None:
    """The Table 4 row (``Formula T1 x1``) a result of a ChemAlgebra variant stands beside."""
    setting = result.setting or {}
    variant, split = str(setting.get("variant", "")), str(setting.get("split", ""))
    if result.task != "evaluate" or split not in {s for _, s in _SPLITS} or not variant[:1].isalpha():
        return None
    parts = variant.split("_")
    if len(parts) != 3 or parts[0] not in ("formula", "smiles"):
        return None
    return f"{parts[0].capitalize() if parts[0] == 'formula' else 'SMILES'} {parts[1].upper()} {parts[2]}"


def _em_figure(table, results: list[Result]) -> Figure | None:
    """EM in → cross → out: the user's variants (solid, with intervals) beside the paper's
    Transformer on the same variants (dashed): the paper's finding is that EM collapses out of
    distribution (more molecules than seen in training)."""
    index = {(c.group, c.label): i for i, c in enumerate(table.columns)}
    picks = [index[(group, "EM")] for group, _ in _SPLITS]
    users = table.user_rows
    anchors = list(dict.fromkeys(row.anchor for row in users))
    models = list(dict.fromkeys(row.label for row in users))
    series: dict[str, list[float | None]] = {}
    errors: dict[str, list[tuple[float, float] | None]] = {}
    colors: dict[str, int] = {}
    dashed = []
    for row in table.rows:
        variant = row.label if row.kind == "paper" else row.anchor
        if variant not in anchors:
            continue
        who = "paper" if row.kind == "paper" else ("yours" if len(models) == 1 else row.label)
        name = f"{who} · {variant}"
        cells = [row.cells[i] for i in picks]
        series[name] = [c.value if c is not None else None for c in cells]
        errors[name] = [(c.low, c.high) if c is not None and c.low is not None else None for c in cells]
        colors[name] = anchors.index(variant)
        if row.kind == "paper":
            dashed.append(name)
    if not series:
        return None
    svg = category_lines([g for g, _ in _SPLITS], series, title="EM (%) in → cross → out", y_label="EM %",
                         y_range=(0.0, None), errors=errors, dashed=dashed, colors=colors, width=420, height=240)
    return Figure("EM in → cross → out", "svg", svg,
                  f"Exact match on the in-, cross- and out-of-distribution test sets (more molecules than in training "
                  f"out of distribution). Solid: yours ({', '.join(models)}) with 95 % intervals; dashed: the paper's "
                  "Transformer on the same variant (same colour).", "stoichiometry-paper-em.svg")


def _table4_columns():
    return tuple(PaperColumn(label, label, group, {"split": split}) for group, split in _SPLITS
                 for label in ("EM", "JAC", "F1"))


def _paper_table():
    return PaperTableSpec(
        table="Table 4", title="Transformer baseline on the eight ChemAlgebra variants (EM / JAC / F1)",
        columns=_table4_columns(), unit="percent", digits=2, row_header="variant", user_row=_variant_row,
        figure=_em_figure,
        note="The paper's rows are its Transformer trained on each variant; yours sit under the variant they were "
             "measured on.")


PAPER_TABLE = _paper_table()
"""ChemAlgebra Table 4 (variants × in/cross/out × EM/JAC/F1, %), the user's variants under the paper's."""
