"""The generation suite's pictures in the report: the property-distribution plot each
``evaluate`` result points to (``details.plot``). MOSES has no per-item failure worth drawing
(an invalid SMILES is listed in ``skipped``), so the suite declares no gallery."""

from __future__ import annotations

from pathlib import Path

from chemassay.contract.result import Result
from chemassay.report.load import source_of
from chemassay.report.paper_tables import PaperColumn, PaperTableSpec
from chemassay.report.published import reference_results
from chemassay.report.scorecard.plots import Figure, image_figure, is_number
from chemassay.report.scorecard.svg import hbar_chart, side_by_side
from chemassay.report.store import model_label


def _resolve(path: str, result: Result) -> Path | None:
    """The picture file: as written, or beside the result file it was read from (a result
    folder that moved keeps its pictures next to it)."""
    candidate = Path(path)
    options = [candidate]
    source = source_of(result)
    if source and not candidate.is_absolute():
        options += [Path(source).parent / candidate, Path(source).parent / candidate.name]
    elif source:
        options.append(Path(source).parent / candidate.name)
    return next((option for option in options if option.is_file()), None)


def generation_charts(results: list[Result], boards: list | None = None) -> list[Figure]:
    """The property distributions of each result that wrote them (generated against the
    reference set: logP, SA, QED, weight), once per picture file; a picture that cannot be
    found is shown as missing, naming the path."""
    figures: list[Figure] = []
    seen: set[Path] = set()
    for result in results:
        plot = getattr(result.details, "plot", None) if result.details is not None else None
        if not plot:
            continue
        found = _resolve(plot, result)
        if found is None:
            figures.append(Figure(Path(plot).stem, "missing", plot, f"{result.task}: details.plot"))
            continue
        if found.resolve() in seen:
            continue
        seen.add(found.resolve())
        figures.append(image_figure(found, title="Property distributions",
                                    caption=f"{result.task} · generated molecules against the test set (details.plot)"))
    return figures


# --- MOSES Table 2, in the paper's shape ------------------------------------------------------------
def _squash(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


_MOSES_MODELS = ("HMM", "NGram", "Combinatorial", "CharRNN", "VAE", "AAE", "JTN-VAE", "LatentGAN")


def _moses_row(result: Result) -> str | None:
    """An ``evaluate`` result on MOSES stands beside the paper's model of the same name (the
    n-gram baseline beside NGram), else after the paper's rows."""
    if result.task != "evaluate" or (result.dataset is not None and result.dataset.name != "moses"):
        return None

    name = _squash(model_label(result).split(" ")[0])
    return next((model for model in _MOSES_MODELS if _squash(model) == name), "")


def _against_moses_figure(table, results: list[Result]) -> Figure | None:
    """Validity, uniqueness (of 10,000) and FCD/Test of the user's models against MOSES's
    baselines (Tables 1 and 3): the paper's finding is that neural models are near-perfectly
    valid and unique and only FCD tells them apart (CharRNN best)."""
    records = {}
    for record in reference_results("generation"):
        if record.published and record.table in ("Table 1", "Table 3") and record.model != "Train":
            records.setdefault(record.model, {}).update(record.metrics)
    mine = [r for r in results if _moses_row(r) is not None]
    panels = []
    for key, title, span in (("valid", "valid ↑", (0.0, 1.0)), ("unique@10000", "unique@10k ↑", (0.0, 1.0)),
                             ("FCD/Test", "FCD/Test ↓", (0.0, None))):
        labels, values, errors = [], [], []
        for result in mine:
            label = model_label(result).split(" (")[0] + " (yours)"
            value = result.metrics.get(key)
            interval = result.intervals.get(key)
            labels.append(label)
            values.append(float(value) if is_number(value) else None)
            errors.append((interval.low, interval.high) if interval is not None and interval.low is not None else None)
        for model, metrics in records.items():
            published = metrics.get(key)
            labels.append(model)
            values.append(published.value if published is not None else None)
            errors.append(None)
        highlight = [label for label in labels if label.endswith("(yours)")]
        panels.append(hbar_chart(labels, values, title=title, errors=errors, highlight=highlight, x_range=span,
                                 width=150))
    if not mine:
        return None
    return Figure("Valid, unique and FCD against MOSES's models", "svg", side_by_side(panels),
                  "Yours (orange, with 95 % intervals where the result has one) against the MOSES baselines "
                  "(Tables 1 and 3, mean of 3 seeds). Validity and uniqueness are near 1 for the neural models; FCD "
                  "tells them apart.", "generation-paper-moses.svg")


def _paper_table():
    columns = (PaperColumn("Filters", "Filters"), PaperColumn("Novelty", "Novelty"),
               PaperColumn("IntDiv1", "IntDiv"), PaperColumn("IntDiv2", "IntDiv2"))
    return PaperTableSpec(
        table="Table 2", title="fraction passing filters, novelty and internal diversity (30,000 samples)",
        columns=columns, unit="fraction", digits=4, user_row=_moses_row, unranked_rows=("Train",),
        figure=_against_moses_figure,
        note="Paper rows: mean ± std over 3 model initializations; Train is the training set itself (its novelty "
             "is 0 by construction), not a model.")


PAPER_TABLE = _paper_table()
"""MOSES Table 2 (models × Filters/Novelty/IntDiv1/IntDiv2), the user's model beside the paper's of the same name."""
