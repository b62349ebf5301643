"""A sixth suite, declared from the tests folder to prove that adding a suite is one package
plus one registration (docs/adding-a-suite.md walks through this file).

The suite ``formula`` asks a model for the molecular formula of each molecule (protocol
``formula-predictor``: ``predict_formulas(smiles) -> list[str]``) and scores exact matches
against RDKit's formula. It has every role a suite can have: a protocol of its own (its method,
prompt, parser, predictions-file layout and checks, so that every model kind answers it), a
dataset, metric cards, a typed details model, a published table, an assay, a gallery and a CLI.
Nothing under src/ names it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chemassay.chem.answers import candidate_lines
from chemassay.contract import Protocol, Request
from chemassay.contract.assay import AssayContext, AssayTask, SuiteAssay, TaskItems
from chemassay.contract.result import DatasetRef, Result, ResultDetails, SkippedItem, make_result
from chemassay.data.readers import pick_column, read_records
from chemassay.data.registry import DataFile, DatasetSpec, LocalDirSource
from chemassay.models import run as run_model
from chemassay.models.check import str_list_problem
from chemassay.report.cards import MetricCard
from chemassay.report.intervals import attach_intervals
from chemassay.report.published import PaperBinding
from chemassay.report.published.keys import Mapped
from chemassay.report.scorecard.galleries import Gallery, GalleryItem, Panel, result_field
from chemassay.report.subsets import task_subset
from chemassay.runtime.files import sha256_file
from chemassay.suites import Suite

HERE = Path(__file__).resolve().parent
NAME = "formula"


# -- the protocol: what the suite asks of a model, and how every model kind answers it ----------
class FormulaPredictor(Protocol):
    """SMILES → molecular formula (Hill order, e.g. ``C2H6O``)."""

    name = "formula-predictor"
    method = "predict_formulas"
    signature = "predict_formulas(smiles: list[str]) -> list[str]"
    summary = "SMILES -> molecular formula"
    answered_by = ("python", "predictions", "text")
    max_tokens = 32
    stop = ("\n\n",)
    missing = ""
    predictions_layout = "a table or JSONL with 'smiles' and 'formula' columns"

    def prompt(self, items, options, settings):
        return [Request(f"Give the molecular formula (Hill order) of the molecule {smiles}. Answer with the "
                        "formula alone.") for smiles in items]

    def parse(self, answer, options, settings):
        lines = candidate_lines(answer)
        return lines[-1].split()[-1].strip("*.") if lines else ""

    def read_predictions(self, path):
        rows = read_records(path)
        key = pick_column(rows, ("smiles",), path, "smiles")
        value = pick_column(rows, ("formula", "prediction"), path, "formula")
        table = {str(row[key]): str(row[value]) for row in rows}
        return self.lookup_answers(lambda smiles, options: table[smiles], path)

    def checks(self):
        def shape(model):
            return str_list_problem(model.predict_formulas(["CCO", "O"]), 2)

        def empty(model):
            return None if model.predict_formulas([]) == [] else "no molecules gave answers"

        return [("returns one formula per molecule", shape), ("nothing asked, nothing answered", empty)]


FORMULA_PREDICTOR = FormulaPredictor()
PROTOCOLS = (FORMULA_PREDICTOR,)


# -- models a test can name with python:support.toy_suite:... -----------------------------------
class CountingModel:
    """Counts atoms with RDKit: always right. Every call's size is appended to ``calls`` (a
    test sees what a rerun asks again)."""

    name = "counting"
    calls: list[int] = []

    def predict_formulas(self, smiles: Sequence[str]) -> list[str]:
        from rdkit import Chem

        CountingModel.calls.append(len(smiles))
        from rdkit.Chem.rdMolDescriptors import CalcMolFormula

        return [CalcMolFormula(Chem.MolFromSmiles(s)) for s in smiles]


class CarbonOnlyModel:
    """Counts carbons and forgets everything else: right only for nothing."""

    name = "carbon-only"

    def predict_formulas(self, smiles: Sequence[str]) -> list[str]:
        return [f"C{s.upper().count('C')}" for s in smiles]


class Exploding:
    """A formula predictor whose every call fails (a model bug)."""

    name = "exploding"

    def predict_formulas(self, smiles: Sequence[str]) -> list[str]:
        raise RuntimeError("the model crashed")


# -- the dataset ------------------------------------------------------------------------------
DATASETS = (DatasetSpec(
    name="toy-formulas", description="Eight small molecules with their SMILES (a test dataset).",
    license="CC0 (written for the tests)", citation="chemassay tests",
    files=(DataFile("molecules.tsv", sha256_file(HERE / "molecules.tsv")),),
    sources=(LocalDirSource(str(HERE)),), suites=(NAME,),
),)


def load_molecules() -> list[tuple[str, str]]:
    """``(id, smiles)`` of the dataset."""
    from chemassay.data.registry import dataset_file

    lines = dataset_file("toy-formulas", "molecules.tsv").read_text().splitlines()[1:]
    return [tuple(line.split("\t")) for line in lines if line.strip()]


# -- metric cards and typed details ------------------------------------------------------------
METRIC_CARDS = (
    MetricCard(key="exact", suite=NAME, description="share of molecules whose predicted formula is exactly right",
               direction="higher", paper_name="Exact", paper_table="Table 1", interval="bootstrap"),
)


class FormulaRow(ResultDetails):
    """One scored molecule."""

    id: str
    smiles: str
    predicted: str
    formula: str


class FormulaDetails(ResultDetails):
    """The details of ``formula / evaluate``: every scored molecule."""

    rows: list[FormulaRow]


# -- the api: evaluate -------------------------------------------------------------------------
def evaluate(model: Any, *, limit: int | None = None, quick: bool = False, cache: bool = False,
             context: dict[str, Any] | None = None, ids: Sequence[str] | None = None) -> Result:
    """Ask ``model`` (an object or a spec of any kind) for the formula of each molecule and score it
    (the first ``limit`` molecules, or those of ``ids``).

    >>> suite = getfixture("toy_suite")  # registered for this example (tests/conftest.py)
    >>> evaluate(CountingModel()).metrics["exact"]
    1.0
    """
    from rdkit import Chem
    from rdkit.Chem.rdMolDescriptors import CalcMolFormula

    started = time.perf_counter()
    molecules = load_molecules()[:limit]
    if ids is not None:
        molecules = [(mid, smiles) for mid, smiles in molecules if mid in set(ids)]
    done = run_model(model, FORMULA_PREDICTOR, [smiles for _, smiles in molecules], cache=cache, context=context)
    answers = done.outputs
    rows, scores, skipped = [], [], []
    for index, ((mid, smiles), predicted) in enumerate(zip(molecules, answers, strict=True)):
        truth = CalcMolFormula(Chem.MolFromSmiles(smiles))
        if not predicted and index not in done.failures:  # a failed request is listed by make_result
            skipped.append(SkippedItem(item=mid, reason="no answer"))
        rows.append(FormulaRow(id=mid, smiles=smiles, predicted=predicted or "", formula=truth))
        scores.append(1.0 if predicted == truth else 0.0)
    result = make_result(
        NAME, "evaluate", metrics={"exact": sum(scores) / len(scores)}, n=len(scores), run=done,
        item_ids=[mid for mid, _ in molecules], item_scores={"exact": scores}, skipped=skipped,
        dataset=DatasetRef(name="toy-formulas", sha256=sha256_file(HERE / "molecules.tsv")),
        setting={"protocol": "zero-shot"}, quick=quick, started=started, details=FormulaDetails(rows=rows),
    )
    return attach_intervals(result, resamples=200, seed=0)


# -- the published table and the assay ----------------------------------------------------------
PUBLISHED = PaperBinding(paper="toy-formulas", resource=("support.toy_suite", "published.json"),
                         metric_key=lambda metric, setting: Mapped("exact") if metric == "Exact" else None)


class FormulaAssay(SuiteAssay):
    """The suite's one headline setting: all eight molecules (quick: the first four)."""

    baseline = "python:support.toy_suite:CountingModel"
    quick_note = "the first four molecules"

    def tasks(self, protocols: set[str], *, quick: bool, spec: str, limit: int | None = None) -> list[AssayTask]:
        size = 4 if quick else len(load_molecules())

        def listing(ctx: AssayContext) -> TaskItems:
            molecules = load_molecules()[:size]
            return TaskItems(ids=[mid for mid, _ in molecules], items=[smiles for _, smiles in molecules])

        def run(ctx: AssayContext) -> Result:
            ids, subset = task_subset(ctx, listing(ctx).ids)  # at most ctx.limit of them, seeded
            result = evaluate(ctx.spec, limit=size, quick=ctx.quick, ids=ids)
            return result.model_copy(update={"subset": subset})

        return [AssayTask(key="exact", title="Table 1: exact formula", protocol="formula-predictor",
                          dataset="toy-formulas", setting={"protocol": "zero-shot"}, items=min(size, limit or size),
                          run=run, listing=listing, headline=("exact",))]

    def verdict(self, results: list[Result]) -> str:
        result = results[0]
        low, high = result.intervals["exact"].low, result.intervals["exact"].high
        return f"exact formula {100 * result.metrics['exact']:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"


ASSAY = FormulaAssay()


def gallery(results: list[Result], limit: int = 6) -> Gallery:
    """Molecules whose formula the model got wrong."""
    shown = Gallery(NAME, "Wrong formulas")
    for result in results:
        for row in result_field(result, "rows") or []:
            if row["predicted"] != row["formula"] and len(shown.items) < limit:
                shown.items.append(GalleryItem(caption=f"{row['id']}: {row['predicted']} (true {row['formula']})",
                                               panels=[Panel("molecule", None, row["smiles"])]))
    if not shown.items:
        shown.missing = "every formula is right"
    return shown


def cli_app():
    """The suite's Typer app (``chemassay formula evaluate --model SPEC``)."""
    import typer

    app = typer.Typer(help="The toy formula suite.", no_args_is_help=True)

    @app.command("evaluate")
    def evaluate_command(model: str = typer.Option(..., "--model")) -> None:
        """Score a model's formulas."""
        print(f"exact={evaluate(model).metrics['exact']:.3f}")

    @app.command("about")
    def about() -> None:
        """What the suite asks."""
        print("the molecular formula of each molecule")

    return app


SUITE = Suite(
    name=NAME, module="support.toy_suite", title="does a model know a molecule's formula?",
    reproduces="Toy et al. (a test paper)", protocols=("formula-predictor",), api="support.toy_suite",
    cli="support.toy_suite:APP", metric_cards="support.toy_suite:METRIC_CARDS",
    model_protocols="support.toy_suite:PROTOCOLS", datasets="support.toy_suite:DATASETS",
    dataset_names=("toy-formulas",), assay="support.toy_suite:ASSAY", published="support.toy_suite:PUBLISHED",
    details={"evaluate": "support.toy_suite:FormulaDetails"}, gallery="support.toy_suite:gallery",
)


def __getattr__(name: str):
    if name == "APP":  # built on first use, so declaring the suite imports no CLI toolkit
        return cli_app()
    raise AttributeError(name)
