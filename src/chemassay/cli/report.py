"""The shared report commands: ``metrics`` (the metric cards), ``reference`` (the papers'
published rows), ``results`` (the results store), ``compare`` and ``report`` (the scorecard);
:mod:`chemassay.cli.root` mounts them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from chemassay.cli.tools import console, info, writable_out
from chemassay.contract.errors import UserInputError
from chemassay.report.cards import all_cards
from chemassay.report.compare import compare
from chemassay.report.export import FORMATS
from chemassay.report.load import load_result, load_results
from chemassay.report.published import format_value, reference_results
from chemassay.report.scorecard import build_report
from chemassay.report.store import Filters, ResultStore, default_path, parse_since
from chemassay.runtime.files import atomic_write_text
from chemassay.suites import get_suite

metrics_app = typer.Typer(help="The metric cards: what every metric key means.", no_args_is_help=True)
reference_app = typer.Typer(help="The papers' published results, shipped as reference rows.", no_args_is_help=True)
results_app = typer.Typer(help="The local results store: every evaluation's result.", no_args_is_help=True)


def _suite_option(suite: str | None) -> str | None:
    if suite is None:
        return None
    return get_suite(suite).name


# --- metrics -----------------------------------------------------------------------------------
@metrics_app.command("list")
def metrics_list(
    suite: str = typer.Option(None, "--suite", help="Only this suite's metrics."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Every metric key a result can carry: meaning, better direction, range, the paper's name."""
    try:
        cards = all_cards(suite)
    except KeyError as exc:
        raise UserInputError(str(exc.args[0])) from None
    if as_json:
        print(json.dumps([card.as_dict() for card in cards], indent=2))
        return
    table = Table(show_header=True)
    for column in ("suite", "key", "better", "range", "paper", "interval", "description"):
        table.add_column(column, overflow="fold")
    for card in cards:
        low, high = card.range
        span = f"[{'-inf' if low is None else f'{low:g}'}, {'inf' if high is None else f'{high:g}'}]"
        paper = " ".join(x for x in (card.paper_name, f"({card.paper_table})" if card.paper_table else None) if x)
        cells = (card.suite, card.key, card.direction, span, paper or "-", card.interval, card.description)
        table.add_row(*(escape(cell) for cell in cells))
    console.print(table)


# --- reference ---------------------------------------------------------------------------------
@reference_app.command("list")
def reference_list(
    suite: str = typer.Option(None, "--suite", help="Only this suite's papers."),
    table: str = typer.Option(None, "--table", help="Only this table (e.g. 'Table 3', 'S2.2')."),
    model: str = typer.Option(None, "--model", help="Only models whose name contains this text."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON records (values in chemassay's units)."),
    runs: bool = typer.Option(False, "--runs", help="Also list the reference runs chemassay ships (the MOSES "
                              "baselines trained here, mean ± std over seeds), marked as not published."),
) -> None:
    """List the papers' published results under chemassay's metric keys (fractions where the paper printed percentages).

    Each record names the paper's table, the model, the setting and the data the paper measured on.
    """
    records = reference_results(_suite_option(suite), runs=runs)
    if table:
        wanted = table.lower().removeprefix("table").strip()
        records = [r for r in records if r.table.lower().removeprefix("table").strip() == wanted]
    if model:
        records = [r for r in records if model.lower() in r.model.lower()]
    if as_json:
        print(json.dumps([r.as_dict() for r in records], indent=2, ensure_ascii=False))
        return
    title = "published results" + (" and chemassay's reference runs" if runs else "")
    grid = Table(show_header=True, title=f"{title} ({len(records)} records; values in chemassay's units)")
    for column in ("suite", "paper · table", "model", "setting", "paper's data", "metrics"):
        grid.add_column(column, overflow="fold")
    for record in records:
        metrics = " ".join(f"{key}={format_value(value)}" for key, value in record.metrics.items())
        unmapped = " ".join(f"[{value.label}: {value.printed}]" for value in record.unmapped)
        setting = ", ".join(f"{k}={v}" for k, v in record.setting.items())
        grid.add_row(*(escape(cell) for cell in (record.suite, f"{record.paper.short} · {record.table}", record.label,
                                                  setting, record.dataset, (metrics + " " + unmapped).strip())))
    console.print(grid)


# --- results -----------------------------------------------------------------------------------
def _filters(suite: str | None, task: str | None, model: str | None, dataset: str | None, since: str | None,
             ids: list[int] | None = None, all_runs: bool = False):
    return Filters(suite=_suite_option(suite), task=task, model=model, dataset=dataset,
                   since=parse_since(since) if since else None, ids=ids or (), all_runs=all_runs)


SuiteFilter = typer.Option(None, "--suite", help="Only this suite.")
TaskFilter = typer.Option(None, "--task", help="Only this task (evaluate, score, retrieve...).")
ModelFilter = typer.Option(None, "--model", help="Model name/spec containing this text, or a checksum prefix.")
DatasetFilter = typer.Option(None, "--dataset", help="Dataset name containing this text, or a sha256 prefix.")
SinceFilter = typer.Option(None, "--since", help="Recorded since a date (2026-11-01) or an age (12h, 7d).")


def _print_runs(runs, as_json: bool) -> None:
    if as_json:
        print(json.dumps([run.as_dict() for run in runs], indent=2))
        return
    if len(runs) <= 100:
        grid = Table(show_header=True)
        for column in ("id", "recorded", "suite", "task", "model", "dataset", "n", "metrics"):
            grid.add_column(column, overflow="fold")
        for run in runs:
            cells = (str(run.id) + ("" if run.latest else " (old)"), run.when, run.suite, run.task, run.model or "-",
                     run.dataset or "-", str(run.n), run.headline)
            grid.add_row(*(escape(c) for c in cells))
        console.print(grid)
        return
    # many rows: plain aligned lines (a rich table of 100,000 rows takes far too long)
    lines = [f"{'id':>8}  {'recorded':<19}  {'suite':<13}  {'task':<12}  {'model':<28}  {'dataset':<28}  {'n':>7}  metrics"]
    for run in runs:
        lines.append(f"{run.id:>8}  {run.when:<19}  {run.suite:<13}  {run.task[:12]:<12}  {(run.model or '-')[:28]:<28}  "
                     f"{(run.dataset or '-')[:28]:<28}  {run.n:>7}  {run.headline}")
    sys.stdout.write("\n".join(lines) + "\n")


@results_app.command("list")
def results_list(
    suite: str = SuiteFilter, task: str = TaskFilter, model: str = ModelFilter, dataset: str = DatasetFilter,
    since: str = SinceFilter,
    all_runs: bool = typer.Option(False, "--all-runs", help="Also runs superseded by a newer run of the same evaluation."),
    limit: int = typer.Option(50, "--limit", "-n", help="Newest N runs (0: all)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List stored results, newest first (one row per evaluation: its latest run)."""
    if not default_path().exists():
        info(f"no results stored yet ({default_path()}); evaluating commands record their results there")
        if as_json:
            print("[]")
        return
    with ResultStore(create=False) as store:
        filters = _filters(suite, task, model, dataset, since, all_runs=all_runs)
        runs = store.list(filters, limit=limit or None)
        total = store.count(filters) if limit and len(runs) == limit else len(runs)
    _print_runs(runs, as_json)
    if not as_json and total > len(runs):
        info(f"{len(runs)} of {total} shown (--limit 0 for all)")


@results_app.command("show")
def results_show(
    run_id: int = typer.Argument(..., help="Run id (see 'chemassay results list')."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole result JSON."),
) -> None:
    """Show one stored result."""
    with ResultStore(create=False) as store:
        result = store.get(run_id)
        run = store.list(_filters(None, None, None, None, None, ids=[run_id]))[0]
    if as_json:
        print(result.to_json())
        return
    console.print(f"run {run.id} · recorded {run.when} · key {run.key}{'' if run.latest else ' (superseded)'}"
                  f" · source {run.source or '-'}", highlight=False, markup=False)
    console.print(result.summary(max_metrics=1000), highlight=False, markup=False)


@results_app.command("compare")
def results_compare(
    run_a: int = typer.Argument(..., help="Run id of model A."),
    run_b: int = typer.Argument(..., help="Run id of model B."),
    resamples: int = typer.Option(2000, "--resamples", help="Bootstrap resamples."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Paired comparison of two stored results (as 'chemassay compare')."""
    with ResultStore(create=False) as store:
        a, b = store.get(run_a), store.get(run_b)
    object.__setattr__(a, "_source", f"run {run_a}")
    object.__setattr__(b, "_source", f"run {run_b}")
    _show_comparison(compare(a, b, resamples=resamples, seed=seed), as_json, None)


@results_app.command("export")
def results_export(
    out: Path = typer.Option(..., "--out", "-o", help="A folder (one JSON file per result) or a .jsonl file."),
    suite: str = SuiteFilter, task: str = TaskFilter, model: str = ModelFilter, dataset: str = DatasetFilter,
    since: str = SinceFilter,
    all_runs: bool = typer.Option(False, "--all-runs", help="Also superseded runs."),
) -> None:
    """Write stored results back out as result files (readable by 'report' and 'compare')."""
    with ResultStore(create=False) as store:
        pairs = store.results(_filters(suite, task, model, dataset, since, all_runs=all_runs))
    if out.suffix == ".jsonl":
        atomic_write_text(out, "".join(result.to_json(indent=None) + "\n" for _, result in pairs))
    else:
        out.mkdir(parents=True, exist_ok=True)
        for run, result in pairs:
            safe_task = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in run.task)
            result.write(out / f"{run.id:06d}-{run.suite}-{safe_task}.json")
    console.print(f"exported {len(pairs)} result(s) to {out}", highlight=False, markup=False)


@results_app.command("rm")
def results_rm(
    run_ids: list[int] = typer.Argument(None, help="Run ids to remove."),
    suite: str = SuiteFilter, task: str = TaskFilter, model: str = ModelFilter, dataset: str = DatasetFilter,
    since: str = SinceFilter,
) -> None:
    """Remove runs, by id or by filter (every matching run, superseded ones included)."""
    if not run_ids and not any((suite, task, model, dataset, since)):
        raise UserInputError("results rm needs run ids or a filter (--suite, --task, --model, --dataset, --since)")
    with ResultStore(create=False) as store:
        removed = store.remove(_filters(suite, task, model, dataset, since, ids=run_ids, all_runs=True))
    console.print(f"removed {removed} run(s)", highlight=False, markup=False)


@results_app.command("check")
def results_check() -> None:
    """Check the store: SQLite's integrity check and every stored result against its checksum."""
    with ResultStore(create=False) as store:
        problems = store.check()
        count = store.count()
    for problem in problems:
        console.print(problem, highlight=False, markup=False)
    console.print(f"{store.path}: {count} latest result(s); {len(problems)} problem(s)", highlight=False, markup=False)
    if problems:
        raise typer.Exit(1)


@results_app.command("path")
def results_path() -> None:
    """Print where the results store is ($CHEMASSAY_STORE or $CHEMASSAY_HOME/results.sqlite)."""
    console.print(str(default_path()), highlight=False, markup=False)


# --- compare -----------------------------------------------------------------------------------
def _show_comparison(comparison, as_json: bool, out: Path | None) -> None:
    if out is not None:
        atomic_write_text(out, json.dumps(comparison.as_dict(), indent=2) + "\n")
    if as_json:
        print(json.dumps(comparison.as_dict(), indent=2))
    else:
        console.print(comparison.summary(), highlight=False, markup=False)


def compare_command(
    result_a: Path = typer.Argument(..., help="Result JSON of model A."),
    result_b: Path = typer.Argument(..., help="Result JSON of model B (same suite, task, dataset and items)."),
    resamples: int = typer.Option(2000, "--resamples", help="Bootstrap resamples of the paired items."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    level: float = typer.Option(0.95, "--level", help="Interval level."),
    metric: list[str] = typer.Option(None, "--metric", help="Only these metrics (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    out: Path = typer.Option(None, "--out", "-o", help="Also write the comparison as JSON here."),
) -> None:
    """Is A really better than B? Paired bootstrap per metric and McNemar's exact test on the same items.

    Refuses results of different suites, tasks, datasets or items.
    """
    comparison = compare(load_result(result_a), load_result(result_b), resamples=resamples, seed=seed, level=level,
                         metrics=metric or None)
    _show_comparison(comparison, as_json, out)


# --- report ------------------------------------------------------------------------------------
def parse_store_filter(text: str):
    """``--from-store``: ``all`` or ``key=value`` pairs (suite, task, model, dataset, since, id)
    separated by commas, e.g. ``suite=stoichiometry,since=7d``."""
    filters = Filters()
    text = text.strip()
    if text in ("", "all", "*"):
        return filters
    ids = []
    for part in text.replace(";", ",").split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise UserInputError(f"--from-store {text!r}: expected key=value pairs (suite, task, model, dataset, since, id) "
                                 "separated by commas, or 'all'")
        key, value = (s.strip() for s in part.split("=", 1))
        if key == "suite":
            filters.suite = _suite_option(value)
        elif key in ("task", "model", "dataset"):
            setattr(filters, key, value)
        elif key == "since":
            filters.since = parse_since(value)
        elif key == "id":
            ids += [int(v) for v in value.split("+") if v.strip().isdigit()]
        elif key == "runs" and value == "all":
            filters.all_runs = True
        else:
            raise UserInputError(f"--from-store: unknown filter {key!r} (use suite, task, model, dataset, since, id, runs=all)")
    filters.ids = ids
    return filters


def report_command(
    results: list[Path] = typer.Argument(None, help="Result JSON files, or folders of them."),
    out: Path = typer.Option(Path("reports/scorecard"), "--out", "-o", help="Folder for index.html and index.md."),
    from_store: str = typer.Option(None, "--from-store", help="Take results from the store: 'all' or filters like "
                                   "'suite=generation,since=7d' (keys: suite, task, model, dataset, since, id)."),
    title: str = typer.Option("chemassay scorecard", "--title", help="The report's title."),
    no_published: bool = typer.Option(False, "--no-published", help="Leave out the papers' published rows."),
    resamples: int = typer.Option(1000, "--resamples", help="Bootstrap resamples for intervals a result does not store (0: none)."),
    seed: int = typer.Option(0, "--seed", help="Seed of those bootstraps."),
    gallery: int = typer.Option(6, "--gallery", help="Failures shown per suite gallery."),
    fmt: str = typer.Option("html", "--format", help="html (the scorecard: index.html and index.md), or latex, "
                            "markdown or csv: each suite's paper headline table with your rows, to paste into a paper."),
) -> None:
    """Write a self-contained HTML scorecard (and Markdown) of results, beside the papers' published rows.

    First each suite's verdict and its paper's headline table in the paper's shape with your rows among the
    paper's; then per suite: leaderboards with intervals, plots and failure galleries; index.html works offline
    from a file. --format latex|markdown|csv writes only the paper tables (one file per suite).
    """
    fmt = fmt.strip().lower()
    if fmt not in FORMATS:
        raise UserInputError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if not results and from_store is None:
        raise UserInputError("report needs result files (or folders) or --from-store FILTER")
    writable_out(out / ("index.html" if fmt == "html" else "paper-tables"), "report")
    loaded = load_results(results) if results else []
    if from_store is not None:
        with ResultStore(create=False) as store:
            for run, result in store.results(parse_store_filter(from_store)):
                object.__setattr__(result, "_source", run.source or f"store run {run.id}")
                loaded.append(result)
    if not loaded:
        raise UserInputError("no results to report (the files/folders hold none, or the store filter matched none)")
    if fmt != "html":
        from chemassay.report.export import write_export
        from chemassay.report.paper_tables import paper_tables
        from chemassay.report.scorecard import fill_intervals

        tables = paper_tables([fill_intervals(r, resamples, seed) for r in loaded], published=not no_published)
        if not tables:
            raise UserInputError("none of these results belongs to a suite that declares a paper table")
        written = write_export(tables, out, fmt, title=title)
        console.print(f"wrote {', '.join(str(p) for p in written)} ({len(loaded)} results, {len(tables)} paper tables)",
                      highlight=False, markup=False)
        return
    from chemassay.report.leakage import LEAKAGE_FILE, load_view

    audits = [Path(p) for p in results or [] if Path(p).is_dir() and (Path(p) / LEAKAGE_FILE).is_file()]
    if len(audits) > 1:
        info(f"{len(audits)} folders hold a {LEAKAGE_FILE}: the scorecard shows the first, {audits[0]}")
    view = load_view(audits[0], loaded) if audits else None
    html, markdown = build_report(loaded, out, title=title, published=not no_published, resamples=resamples,
                                  seed=seed, gallery_limit=gallery, leakage=view)
    console.print(f"wrote {html} and {markdown} ({len(loaded)} results)", highlight=False, markup=False)
