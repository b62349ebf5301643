"""``chemassay assay``: one model through every suite whose protocol it implements, on the
papers' headline settings, with one scorecard (a thin caller of :mod:`chemassay.assaying`)."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from chemassay.assaying import assay as run_assay
from chemassay.budget import Price, TaskBudget, estimate, parse_price
from chemassay.cli.tools import console
from chemassay.contract.errors import UserInputError
from chemassay.suites import get_suite


def assay_command(
    model: list[str] = typer.Option(None, "--model", "-m", metavar="SPEC", help="The model to assay: one spec for every suite "
                                    "(openai:NAME,base_url=URL, python:module:obj...), or SUITE=SPEC per suite "
                                    "(repeatable). Without it: each suite's built-in baseline."),
    suites: list[str] = typer.Option(None, "--suites", "-s", metavar="SUITE", help="Only these suites (repeatable or comma-separated)."),
    out: Path = typer.Option(Path("assay"), "--out", "-o", help="Folder for the results, assay.json and the scorecard "
                             "(index.html); run again with the same folder to resume."),
    quick: bool = typer.Option(False, "--quick", help="A documented small subset of each suite (a smoke test; "
                               "results marked quick and never ranked)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan (suites, tasks, items, requests) and exit."),
    seed: int = typer.Option(0, "--seed", help="Seed for every random choice."),
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Worker processes for the scoring (-1: all cores)."),
    base_url: str = typer.Option(None, "--base-url", help="Server URL for openai: models without base_url=."),
    limit: int = typer.Option(None, "--limit", "-n", min=1, metavar="N", help="Every task on a seeded subset of at "
                              "most N items, stratified where the suite has strata, the same for every model with "
                              "the same --seed (results marked as a subset, never ranked)."),
    precision: float = typer.Option(None, "--precision", metavar="H", help="Choose N per task so that a proportion's "
                                    "95 % interval is at most ±H at worst (p = 0.5): 0.05 runs 385 items; a task "
                                    "with fewer runs them all. Not with --limit."),
    price: str = typer.Option(None, "--price", metavar="in=X,out=Y", help="US$ per million prompt (in) and completion "
                              "(out) tokens: --dry-run prints each task's cost range, a run the cost of the tokens "
                              "the server reported (in assay.json)."),
    train_data: list[Path] = typer.Option(None, "--train-data", metavar="FILE", help="The model's training data "
                                          "(SMILES or reaction SMILES per line, or a CSV/TSV/Parquet table; repeatable): "
                                          "audit the assayed suites' test sets against it (OUT/leakage.json) and "
                                          "report every headline metric also on the clean subset (docs/leakage.md)."),
    train_column: str = typer.Option(None, "--train-column", metavar="COLUMN", help="The training table's column "
                                     "holding the SMILES or reactions."),
    leak_threshold: float = typer.Option(None, "--leak-threshold", metavar="T", help="Tanimoto at or above which a "
                                         "test item's nearest training item is a near duplicate (default 0.7)."),
    leak_exact_only: bool = typer.Option(False, "--leak-exact-only", help="Exact duplicates only (no fingerprints: "
                                         "faster on large training files)."),
) -> None:
    """One model through every suite whose protocol it implements, on the papers' headline
    settings, with one scorecard (OUT/index.html). Exit 0 when every task ran, 1 when one failed."""
    spec: str | dict[str, str] | None = None
    if model:
        pairs = [m for m in model if "=" in m.split(":", 1)[0]]
        if pairs and len(pairs) != len(model):
            raise UserInputError("--model: give either one spec for every suite or SUITE=SPEC for each, not both")
        if pairs:
            spec = {get_suite(m.split("=", 1)[0]).name: m.split("=", 1)[1] for m in model}
        elif len(model) > 1:
            raise UserInputError("--model given twice: one spec for every suite, or SUITE=SPEC per suite")
        else:
            spec = model[0]
    chosen = [name.strip() for item in (suites or []) for name in item.split(",") if name.strip()] or None
    cost = parse_price(price) if price is not None else None
    if dry_run:
        outcomes, budgets = estimate(spec, suites=chosen, quick=quick, limit=limit, precision=precision, seed=seed,
                                     base_url=base_url)
        for outcome in outcomes:
            if outcome.skipped:
                console.print(f"skip  {outcome.skipped}", highlight=False, markup=False)
        for budget in budgets:
            console.print(_plan_line(budget, cost), highlight=False, markup=False, soft_wrap=True)
        console.print(_total_line(budgets, cost, quick), highlight=False, markup=False, soft_wrap=True)
        if train_data:
            from chemassay.assaying import leak_options

            leak = leak_options([str(p) for p in train_data], train_column, leak_threshold, not leak_exact_only)
            near = f"near at Tanimoto >= {leak['threshold']:g}" if leak["near"] else "exact only"
            console.print(f"first: the leakage audit of these suites' test sets against {', '.join(leak['train'])} "
                          f"({near}), then every headline metric on the clean subset too", highlight=False,
                          markup=False, soft_wrap=True)
        return
    report = run_assay(spec, suites=chosen, out=out, quick=quick, seed=seed, n_jobs=n_jobs, base_url=base_url,
                       limit=limit, precision=precision, price=cost,
                       train_data=[str(p) for p in train_data] if train_data else None, train_column=train_column,
                       leak_threshold=leak_threshold, leak_near=not leak_exact_only)
    for outcome in report.suites:
        if outcome.skipped:
            line = f"{outcome.suite:<14} skipped: {outcome.skipped}"
        else:
            line = f"{outcome.suite:<14} {outcome.verdict or 'no result'}"
            failed = [t for t in outcome.tasks if t.status == "failed"]
            if failed:
                line += f" — {len(failed)} of {len(outcome.tasks)} tasks failed: " + "; ".join(
                    f"{t.task}: {t.message.splitlines()[0]}" for t in failed)
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    spent = report.as_dict()["spent"]
    if spent["prompt_tokens"] is not None:
        line = (f"tokens the server reported: {spent['prompt_tokens']:,} prompt + {spent['completion_tokens']:,} "
                f"completion in {spent['requests']:,} requests")
        if spent["cost_usd"] is not None:
            line += f" = US$ {spent['cost_usd']:.4f} at {cost}"
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for row in report.clean:
        metric = next(iter(row["metrics"]), None)
        if metric is None:
            line = f"{row['suite']}/{row['task']}: {row['note']}"
        else:
            line = (f"{row['suite']}/{row['task']}: {metric['key']} {_value(metric['full'], metric['full_interval'])} "
                    f"on all {row['n_scored']:,} items, {_value(metric['clean'], metric['clean_interval'])} on the "
                    f"{row.get('scored_clean', 0):,} clean ones")
        console.print(f"{'clean subset':<14} {line}", highlight=False, markup=False, soft_wrap=True)
    if report.leakage is not None:
        console.print(f"leakage: {out / 'leakage.json'}, clean subsets: {out / 'leakage-clean.json'}",
                      highlight=False, markup=False)
    console.print(f"scorecard: {report.scorecard}", highlight=False, markup=False)
    if report.failed:
        raise typer.Exit(1)


def _value(value: float | None, interval: list | None) -> str:
    """``0.567 [0.392, 0.726]``, ``–`` for no value."""
    if not isinstance(value, (int, float)):
        return "–"
    text = f"{value:.3f}"
    if interval and all(isinstance(v, (int, float)) for v in interval):
        text += f" [{interval[0]:.3f}, {interval[1]:.3f}]"
    return text


def _usd(value: float) -> str:
    """US$ with cents above a dollar, else three significant digits (``0.000315``)."""
    if value == float("inf"):
        return "unbounded"
    if value >= 1 or value == 0:
        return f"{value:,.2f}"
    return f"{value:.{2 - math.floor(math.log10(value))}f}"


def _plan_line(budget: TaskBudget, price: Price | None) -> str:
    """One task of ``--dry-run``: items (of the whole task, with the interval a subset gives),
    requests, prompt tokens, the answer-token bound and the cost range."""
    parts = [f"run   {budget.suite:<14} {budget.task:<28} {budget.items:>7,} items"]
    if budget.of is not None and budget.of != budget.items:
        parts.append(f"(of {budget.of:,})")
    if budget.half_width is not None:
        parts.append(f"±{100 * budget.half_width:.1f} pts")
    if budget.endpoint:
        parts.append(f"{budget.requests:>7,} requests")
    if budget.prompt_tokens is not None:
        answer = f"≤ {budget.answer_tokens:,}" if budget.answer_tokens is not None else "unbounded"
        parts.append(f"{budget.prompt_tokens:>10,} prompt tokens, answers {answer} tokens")
    span = budget.cost(price)
    if span is not None:
        parts.append(f"US$ {_usd(span[0])} to {_usd(span[1])}")
    return "  ".join(parts) + f"  {budget.title} [{budget.protocol}; {budget.spec}]"


def _total_line(budgets: list[TaskBudget], price: Price | None, quick: bool) -> str:
    """The plan's totals: tasks, items, requests, tokens (and how they were counted), cost."""
    line = f"{len(budgets)} tasks, {sum(b.items for b in budgets):,} items"
    requests = sum(b.requests for b in budgets if b.endpoint)
    if requests:
        line += f", {requests:,} requests to the endpoint"
    counted = [b for b in budgets if b.prompt_tokens is not None]
    if counted:
        methods = sorted({b.counted_by for b in counted})
        bounded = all(b.answer_tokens is not None for b in counted)
        line += (f", {sum(b.prompt_tokens or 0 for b in counted):,} prompt tokens ({'; '.join(methods)}), answers "
                 + (f"≤ {sum(b.answer_tokens or 0 for b in counted):,} tokens" if bounded else "unbounded"))
        if price is not None:
            spans = [b.cost(price) for b in counted]
            line += (f"; US$ {_usd(sum(s[0] for s in spans if s))} to {_usd(sum(s[1] for s in spans if s))} "
                     f"at {price}")
    return line + (" (quick)" if quick else "")
