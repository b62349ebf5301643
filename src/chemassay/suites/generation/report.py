"""The generation suite's pictures in the report: the property-distribution plot each
``evaluate`` result points to (``details.plot``). MOSES has no per-item failure worth drawing
(an invalid SMILES is listed in ``skipped``), so the suite declares no gallery."""

from __future__ import annotations

from pathlib import Path

from chemassay.contract.result import Result
from chemassay.report.load import source_of
from chemassay.report.scorecard.plots import Figure, image_figure


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
